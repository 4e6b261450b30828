#!/usr/bin/env bash
# Records the committed GPU traces on the lent GPU machine (torch + triton, no install).
# Run from the repository root there:  OUT=<dir> bash tests/data/record_gpu_traces.sh [names...]
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:?set OUT to the output folder}"
python3 -c "import torch, triton, sys; print('python', sys.version.split()[0], 'torch', torch.__version__, 'triton', triton.__version__, torch.cuda.get_device_name())"
run() {  # run NAME OUTFILE [capture options...]
  local name=$1 file=$2; shift 2
  echo "== $name -> $file $*"
  python3 -m fusionviz capture "assets/examples/$name.py" -o "$out/$file" --device cuda --timeout 280 "$@" \
    > "$out/$file.log" 2>&1
  echo "exit $?"; tail -n 25 "$out/$file.log"
}
for spec in "${@:-mlp_block graph_break hub_branches spill_branches}"; do
  for name in $spec; do
    case $name in
      mlp_block)    run mlp_block gpu_mlp_block.json.gz; run mlp_block gpu_mlp_block_bench.json.gz --benchmark-fusion ;;
      mlp_autotune) run mlp_block gpu_mlp_block_autotune.json.gz --mode max-autotune-no-cudagraphs ;;
      graph_break)  run graph_break gpu_graph_break.json.gz ;;
      hub_branches) run hub_branches gpu_hub_branches.json.gz; run hub_branches gpu_hub_branches_bench.json.gz --benchmark-fusion ;;
      spill_branches) run spill_branches gpu_spill_branches_bench.json.gz --benchmark-fusion ;;
    esac
  done
done
ls -la "$out"
