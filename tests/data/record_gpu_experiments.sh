#!/usr/bin/env bash
# Records the committed GPU experiments on the lent GPU machine (torch + triton, no install).
# Run from the repository root there:  OUT=<dir> bash tests/data/record_gpu_experiments.sh [names...]
set -u
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
out="${OUT:?set OUT to the output folder}"
exp() {  # exp NAME DIR [experiment options...]
  local name=$1 dir=$2; shift 2
  echo "== $name -> $dir $*"
  python3 -m fusionviz experiment "assets/examples/$name.py" -o "$out/$dir" --device cuda --timeout 280 "$@" \
    > "$out/$dir.log" 2>&1
  echo "exit $?"; grep -v -i warn "$out/$dir.log" | tail -n 30
}
for name in "${@:-seed000 keep_spills sweep}"; do
  case $name in
    seed000)     exp hub_branches gpu_seed000_hub_branches --ab benchmark_fusion=True -- --size 8192 ;;
    keep_spills) exp spill_branches gpu_keep_spills_spill_branches --keep-spills ;;
    sweep)       exp mlp_block gpu_sweep_mlp_block --sweep-rounds ;;
  esac
done
