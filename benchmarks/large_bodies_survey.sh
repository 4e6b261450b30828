#!/bin/bash
# capture each model without timing, 3 at a time, then print each graph's large bodies
mkdir -p $OUT/lb
run() { timeout 400 python -m fusionviz capture benchmarks/eager_models/$1.py --device cuda --no-timing -o $OUT/lb/$1.json.gz -- --size full --steps 1 > $OUT/lb/$1.log 2>&1; }
run gpt2_train & run llama_train & run resnet50_train & wait
run bert_fp16_infer & run vit_train & run moe_train & wait
python - <<'PY'
import glob, os
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.advisor.candidates import rank
for p in sorted(glob.glob(os.environ["OUT"] + "/lb/*.json.gz")):
    t = load_trace(p)
    miss = [m for m in t.capabilities.missing if "large" in m]
    for g in t.graphs:
        c = [x.what for x in rank(t, g) if "realize" in x.what]
        print(os.path.basename(p), g.index, g.kind, "large_bodies", g.large_bodies[:12], len(g.large_bodies), c, miss, t.script.status)
PY
