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
# Real models and extern_ops.py, whose extern calls carry their dtypes, shapes and
# arguments (Node.extern_call): gpt2 bert llama resnet50 extern_ops.
cap() {  # cap OUTFILE SCRIPT [script args...]
  local file=$1 script=$2; shift 2
  echo "== $file"
  timeout 300 python3 -m fusionviz capture "$script" -o "$out/$file" --device cuda --timeout 280 \
    -- "$@" > "$out/$file.log" 2>&1
  echo "exit $?"; tail -n 6 "$out/$file.log"
}
for spec in "${@:-mlp_block graph_break hub_branches spill_branches}"; do
  for name in $spec; do
    case $name in
      mlp_block)    run mlp_block gpu_mlp_block.json.gz; run mlp_block gpu_mlp_block_bench.json.gz --benchmark-fusion ;;
      mlp_autotune) run mlp_block gpu_mlp_block_autotune.json.gz --mode max-autotune-no-cudagraphs ;;
      graph_break)  run graph_break gpu_graph_break.json.gz ;;
      hub_branches) run hub_branches gpu_hub_branches.json.gz; run hub_branches gpu_hub_branches_bench.json.gz --benchmark-fusion ;;
      spill_branches) run spill_branches gpu_spill_branches_bench.json.gz --benchmark-fusion ;;
      gpt2) cap gpu_gpt2_train.json.gz benchmarks/timing_fidelity.py --step-child gpt2 --device cuda --size full --out "$out" ;;
      bert) cap gpu_bert_fp16_infer.json.gz benchmarks/eager_models/bert_fp16_infer.py --size full ;;
      llama) cap gpu_llama_hf_train.json.gz benchmarks/eager_models/llama_train.py --size full ;;
      # committed: its forward graph only (save_trace with graphs=(forward,)), under 200 KB
      resnet50) cap gpu_resnet50_train.json.gz benchmarks/eager_models/resnet50_train.py --size full ;;
      extern_ops) cap gpu_extern_ops.json.gz tests/data/scripts/extern_ops.py ;;
      mlp_user) cap gpu_mlp_train_user_cudagraphs.json.gz benchmarks/eager_models/mlp_train.py \
                  --size full --compile-mode reduce-overhead --steps 5 ;;
      bert_nocudnn) cap gpu_bert_fp16_nocudnn_infer.json.gz benchmarks/eager_models/bert_fp16_infer.py \
                  --size full --no-cudnn-attention ;;
    esac
  done
done
ls -la "$out"
