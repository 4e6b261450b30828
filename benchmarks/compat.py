"""Which torch versions fusionviz captures cleanly: every bundled example captured with
a given Python (and so its torch), and what each capture recorded.

    python benchmarks/compat.py [--python PY] [--device cpu|cuda|auto] [--out FILE]
    ./dev compat [PY]                      # the same, from the project's venv

PY is the interpreter of an environment with the torch to check (default: this one);
fusionviz itself comes from this checkout (PYTHONPATH), so that environment needs only
torch (and, optionally, numpy, orjson, pygments). For each example it prints the
script's status, graphs, rounds, kernels, fusions, hooks installed and missing, and
recording problems; a version is "verified" when every example ends ok with no hook
missing and no problem. The README's torch table is made from these reports.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionviz.model.tracefile.io import load_trace  # noqa: E402

EXAMPLES = ROOT / "assets" / "examples"  # this checkout's (no install needed)


def examples() -> dict[str, str]:
    return {p.stem: str(p) for p in sorted(EXAMPLES.glob("[!_]*.py"))}


def torch_of(python: str) -> str:
    out = subprocess.run([python, "-c", "import torch, sys; sys.stdout.write(torch.__version__)"],
                         capture_output=True, text=True, check=True)
    return out.stdout.strip()


def capture(python: str, script: str, out: Path, device: str, timeout: int) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p))
    t0 = time.perf_counter()
    subprocess.run([python, "-m", "fusionviz", "capture", script, "-o", str(out),
                    "--device", device, "--timeout", str(timeout)],
                   env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - t0


def row(name: str, path: Path, seconds: float) -> tuple[list[str], bool, set[str]]:
    try:
        trace = load_trace(path)
    except Exception as e:  # noqa: BLE001 - a broken capture is a result here
        return [name, f"no trace ({e})", *[""] * 7, f"{seconds:.0f}"], False, set()
    graphs = trace.graphs
    missing = set(trace.capabilities.missing)
    ok = trace.script.status == "ok" and not missing and not trace.problems and bool(graphs)
    cells = [
        name, trace.script.status, str(len(graphs)),
        str(sum(len(g.rounds) for g in graphs)), str(sum(len(g.kernels) for g in graphs)),
        str(sum(len(r.fusions) for g in graphs for r in g.rounds)),
        str(len(trace.capabilities.installed)), str(len(missing)), str(len(trace.problems)),
        f"{seconds:.0f}",
    ]
    return cells, ok, missing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--out", help="also write the report to this file")
    opts = ap.parse_args()
    version = torch_of(opts.python)
    header = ["example", "status", "graphs", "rounds", "kernels", "fusions",
              "hooks", "missing", "problems", "s"]
    lines = [f"torch {version} ({opts.python}), device {opts.device}", "",
             "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    verified, missing_all = True, set()
    with tempfile.TemporaryDirectory(prefix="fusionviz-compat-") as tmp:
        for name, script in examples().items():
            out = Path(tmp) / f"{name}.json.gz"
            seconds = capture(opts.python, script, out, opts.device, opts.timeout)
            cells, ok, missing = row(name, out, seconds)
            verified &= ok
            missing_all |= missing
            lines.append("| " + " | ".join(cells) + " |")
            print(lines[-1], flush=True)
    lines += ["", f"missing hooks: {', '.join(sorted(missing_all)) or 'none'}",
              f"verdict: torch {version} {'verified' if verified else 'NOT verified'}"]
    report = "\n".join(lines) + "\n"
    print(report)
    if opts.out:
        Path(opts.out).write_text(report)
    return 0 if verified else 1


if __name__ == "__main__":
    sys.exit(main())
