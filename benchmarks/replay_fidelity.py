"""Does a replay of each captured graph take the captured decisions? (issue #20, item 1)

    python benchmarks/replay_fidelity.py [--device cuda|cpu] [--size full|tiny]
        [--models gpt2_train,llama_train,...] [--out DIR]

Captures each model script of ``benchmarks/eager_models`` (one step, no timing) with
``fusionviz capture``, then replays every graph of the trace with ``fusionviz replay``
(a fresh process each, without the script) and prints, per graph, its size and
whether the replay took the same decisions: pre-fusion nodes, candidates in order with
their outcomes, verdicts, fusions, final order and kernels (``replay`` exits 0 when
so, 4 when not, listing what differs). Replay times are not measured yet.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionviz.model.tracefile.io import load_trace  # noqa: E402

MODELS = ("gpt2_train", "llama_train", "resnet50_train", "bert_fp16_infer", "mlp_train")


def _fusionviz(*argv: str, timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "fusionviz", *argv], capture_output=True,
                          text=True, timeout=timeout, cwd=ROOT)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--size", default="full", choices=("full", "tiny"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--out", default=None, help="keep the traces in DIR")
    opts = ap.parse_args()
    out = Path(opts.out or tempfile.mkdtemp(prefix="replay-fidelity-"))
    out.mkdir(parents=True, exist_ok=True)
    same = total = 0
    print(f"{'model':16} {'graph':>5} {'kind':9} {'nodes':>6} {'fusions':>8} {'kernels':>8} "
          f"{'replay':>7}  decisions")
    for model in opts.models.split(","):
        trace_path = out / f"{model}.json.gz"
        done = _fusionviz("capture", f"benchmarks/eager_models/{model}.py", "--device",
                          opts.device, "--no-timing", "-o", str(trace_path), "--",
                          "--size", opts.size, "--steps", "1", timeout=900)
        if done.returncode != 0 or not trace_path.exists():
            print(f"{model:16} capture failed ({done.returncode}): {done.stderr[-300:]}")
            continue
        for g in load_trace(trace_path).graphs:
            t0 = time.monotonic()
            done = _fusionviz("replay", str(trace_path), "--graph", str(g.index), "-o",
                              str(out / f"{model}_replay_{g.index}.json.gz"), timeout=900)
            seconds = time.monotonic() - t0
            total += 1
            same += done.returncode == 0
            said = {0: "same", 4: "DIFFER: " + " | ".join(
                line.strip() for line in done.stdout.splitlines() if line.startswith("  "))}
            fusions = sum(len(r.fusions) for r in g.rounds)
            print(f"{model:16} {g.index:>5} {g.kind:9} {len(g.nodes):>6} {fusions:>8} "
                  f"{len(g.kernels):>8} {seconds:>6.0f}s  "
                  f"{said.get(done.returncode, f'failed ({done.returncode}): ' + (done.stderr or done.stdout)[-300:])}")
    print(f"{same} of {total} graphs replayed with the captured decisions")
    return 0 if same == total else 1


if __name__ == "__main__":
    sys.exit(main())
