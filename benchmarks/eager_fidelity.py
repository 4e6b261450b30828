"""Is fusionviz's eager baseline the user's real eager program? Each model, two ways.

    python benchmarks/eager_fidelity.py [--models bert_fp16_infer gpt2_train ...]
        [--size full|tiny] [--device cuda|cpu] [--out DIR] [--timeout SECONDS]

For every workload of ``benchmarks/eager_models/`` (standalone scripts, random weights):

a. Capture: ``python -m fusionviz capture SCRIPT -o DIR/NAME.json.gz --device D --
   --size S`` in a child process. The trace's first ``Entry`` is the model the script
   passed to ``torch.compile``: fusionviz timed its original module eagerly against the
   compiled one, interleaved, in the capturing process (device time from the CUDA
   profiler, 3 profiled calls per side).
b. Reference: ``python SCRIPT --size S --eager-profile DIR/NAME.eager.json``, a separate
   process without fusionviz and without ``torch.compile``: 3 warm-up steps, then 5 steps
   under ``torch.profiler``; the device time of the kernels launched by the forward (the
   module call) and by the backward (``loss.backward()``), per step
   (``benchmarks/eager_models/_harness.py``).
c. Compare: recorded eager forward (and backward) device time / the reference's, the
   share of eager device time the eager→compiled kernel map places in modules where
   compiled kernels ran (forward and backward, weighted by time), the entry's headline
   and findings.

Targets (issue "Compiled vs eager, explained"): every ratio within 0.90-1.10, map
coverage >= 95%, and for the BERT fp16 inference a headline saying compiled is slower
and a finding naming the attention modules and the kernel swap. Printed as a table and
written to DIR/eager_fidelity.json. Exits 0 whatever it finds.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODELS = ("bert_style_fp16_infer", "bert_fp16_infer", "gpt2_train", "llama_train",
          "resnet50_train", "vit_train", "moe_train")


def _child(cmd: list[str], log: Path, timeout: float) -> tuple[int, float]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.perf_counter()
    with open(log, "w") as f:
        try:
            rc = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env,
                                timeout=timeout, cwd=ROOT).returncode
        except subprocess.TimeoutExpired:
            rc = 124
    return rc, time.perf_counter() - t0


def _median(values) -> float | None:
    return statistics.median(values) if values else None


def compare(trace_path: Path, ref_path: Path) -> dict:
    from fusionviz.model.report.eager_explain import explain
    from fusionviz.model.tracefile.io import load_trace

    trace = load_trace(str(trace_path))
    ref = json.loads(ref_path.read_text())
    if not trace.entries:
        return {"error": "no entry in the trace"}
    entry = trace.entries[0]
    ex = explain(trace, entry)
    out = {"entry": entry.name, "note": entry.note, "headline": ex.headline(),
           "findings": [f.title for f in ex.findings]}
    for side in ("forward", "backward"):
        samples = getattr(entry, f"eager_{side}")
        recorded = _median(samples.device) if samples else None
        reference = ref.get(f"{side}_device_ms") or None
        out[f"{side}_recorded_ms"] = recorded
        out[f"{side}_reference_ms"] = reference
        out[f"{side}_ratio"] = recorded / reference if recorded and reference else None
        mp = ex.maps[side]
        out[f"{side}_coverage"] = mp.coverage
        out[f"{side}_eager_map_ms"] = mp.eager_total
    total = sum(ex.maps[s].eager_total for s in ex.maps)
    out["coverage"] = (sum((ex.maps[s].coverage or 0) * ex.maps[s].eager_total
                           for s in ex.maps) / total) if total else None
    out["reference_forward_wall_ms"] = ref.get("forward_wall_ms")
    wall = entry.eager_forward.wall if entry.eager_forward else ()
    out["recorded_forward_wall_ms"] = _median(wall)
    return out


def _fmt(v, pattern: str = "{:.3f}") -> str:
    return "-" if v is None else pattern.format(v)


def model_runs(argv, models, out: str):
    """The command line the eager_models benchmarks share (``--models --size --device
    --out --timeout``): (options, the output folder, [(model name, its script)])."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", nargs="*", default=list(models))
    ap.add_argument("--size", default="full", choices=("full", "tiny"))
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--out", default=out)
    ap.add_argument("--timeout", type=float, default=900)
    opts = ap.parse_args(argv)
    folder = Path(opts.out)
    folder.mkdir(parents=True, exist_ok=True)
    return opts, folder, [(name, ROOT / "benchmarks" / "eager_models" / f"{name}.py")
                          for name in opts.models]


def result_row(capture: tuple, reference: tuple, files, compare_fn) -> dict:
    """One model's row: both children's exit status and seconds, then what
    ``compare_fn()`` finds where every file in ``files`` was written."""
    row = {"capture_rc": capture[0], "capture_s": round(capture[1], 1),
           "reference_rc": reference[0], "reference_s": round(reference[1], 1)}
    if all(f.exists() for f in files):
        try:
            row.update(compare_fn())
        except Exception as e:  # noqa: BLE001 - report and go on
            row["error"] = f"{type(e).__name__}: {e}"
    return row


def main(argv: list[str] | None = None) -> int:
    opts, out, runs = model_runs(argv, MODELS, "eager_fidelity_out")
    results = {}
    for name, script in runs:
        trace, ref = out / f"{name}.json.gz", out / f"{name}.eager.json"
        rc_c, s_c = _child([sys.executable, "-m", "fusionviz", "capture", str(script), "-o",
                            str(trace), "--device", opts.device, "--", "--size", opts.size],
                           out / f"{name}.capture.log", opts.timeout)
        rc_r, s_r = _child([sys.executable, str(script), "--size", opts.size, "--device",
                            opts.device, "--eager-profile", str(ref)],
                           out / f"{name}.eager.log", opts.timeout)
        results[name] = result_row((rc_c, s_c), (rc_r, s_r), (trace, ref),
                                   functools.partial(compare, trace, ref))
        print(f"{name}: capture rc {rc_c} ({s_c:.0f} s), reference rc {rc_r} ({s_r:.0f} s)",
              flush=True)
    (out / "eager_fidelity.json").write_text(json.dumps(results, indent=1))
    print()
    print(f"{'model':17} {'fwd rec':>8} {'fwd ref':>8} {'ratio':>6} {'bwd rec':>8} "
          f"{'bwd ref':>8} {'ratio':>6} {'map':>5}  headline")
    for name, r in results.items():
        print(f"{name:17} {_fmt(r.get('forward_recorded_ms')):>8} "
              f"{_fmt(r.get('forward_reference_ms')):>8} {_fmt(r.get('forward_ratio'), '{:.3f}'):>6} "
              f"{_fmt(r.get('backward_recorded_ms')):>8} {_fmt(r.get('backward_reference_ms')):>8} "
              f"{_fmt(r.get('backward_ratio'), '{:.3f}'):>6} "
              f"{_fmt(r.get('coverage'), '{:.0%}'):>5}  {r.get('headline', r.get('error', ''))}")
        for f in r.get("findings", ()):
            print(f"{'':17}   ! {f}")
    ratios = [r[k] for r in results.values() for k in ("forward_ratio", "backward_ratio")
              if r.get(k) is not None]
    cover = [r["coverage"] for r in results.values() if r.get("coverage") is not None]
    print(f"\nratios within 0.90-1.10: {sum(0.9 <= x <= 1.1 for x in ratios)} of {len(ratios)}; "
          f"map coverage >= 95%: {sum(c >= 0.95 for c in cover)} of {len(cover)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
