"""Wall time of a multi-rank job run plainly (torchrun) and under fusionviz capture
(``fusionviz capture --nproc-per-node N``), alternating, per script.

    python benchmarks/ranks_overhead.py [--nproc 2] [--repeats 2] SCRIPT...

Both start N ranks with ``torch.distributed.run --standalone`` and Inductor's caches
off (fusionviz turns them off; the plain run gets the same environment), so the
ratio is what the capture adds per rank: its hooks while compiling, and its timing
of each graph (repeated runs, profiled on the GPU). Prints one line per script.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def timed(argv: list[str], env: dict) -> float:
    t0 = time.perf_counter()
    subprocess.run(argv, env=env, check=True, capture_output=True)
    return time.perf_counter() - t0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("scripts", nargs="+")
    ap.add_argument("--nproc", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    opts = ap.parse_args()
    env = dict(os.environ, TORCHINDUCTOR_FORCE_DISABLE_CACHES="1",
               PYTHONPATH=os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH"))
                                          if p))
    for script in opts.scripts:
        plain, captured = [], []
        for _ in range(opts.repeats):
            with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as out:
                run_env = dict(env, TORCHINDUCTOR_CACHE_DIR=cache, TRITON_CACHE_DIR=cache)
                plain.append(timed([sys.executable, "-m", "torch.distributed.run",
                                    "--standalone", f"--nproc-per-node={opts.nproc}", script],
                                   run_env))
                captured.append(timed([sys.executable, "-m", "fusionviz", "capture", script,
                                       f"--nproc-per-node={opts.nproc}", "-o", out], env))
        p, c = statistics.median(plain), statistics.median(captured)
        print(f"{Path(script).name}: plain {p:.1f} s, captured {c:.1f} s, ratio {c / p:.2f} "
              f"({opts.nproc} ranks, median of {opts.repeats})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
