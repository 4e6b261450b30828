"""Does a torch.profiler session slow the steps that follow it in the same process?

    python benchmarks/profiler_aftereffect.py [--workload gpt2|llama] [--size full|tiny]

fusionviz profiles each compiled graph inside the user's process, then the user's
program goes on. This builds a compiled train step (``benchmarks/workloads``), warms it
up, and times it (wall per step: median of 40 steps, ``perf_counter`` +
``torch.cuda.synchronize``) before and after one ``torch.profiler`` session of 5 steps
with CPU and CUDA activities, alternating before/after measurements 3 times. Run it
with and without ``TEARDOWN_CUPTI=1`` in the environment (Kineto then finalizes CUPTI
when the session ends: pytorch/pytorch#144455).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/ (workloads)
sys.path.insert(0, str(Path(__file__).resolve().parent / "workloads"))


def wall(step, n: int) -> float:
    import torch

    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        step()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> int:
    import torch
    from torch.profiler import ProfilerActivity, profile

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", choices=("gpt2", "llama"), default="gpt2")
    ap.add_argument("--size", choices=("full", "tiny"), default="full")
    opts = ap.parse_args()
    mod = __import__(f"{opts.workload}_train")
    step = mod.make_step("cuda", compiled=True, size=opts.size)
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    print(f"{opts.workload} {opts.size}, TEARDOWN_CUPTI={os.environ.get('TEARDOWN_CUPTI')!r}, "
          f"torch {torch.__version__}")
    print(f"  before any profiling: {wall(step, 40):.3f} ms/step")
    for i in range(3):
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            for _ in range(5):
                step()
            torch.cuda.synchronize()
        print(f"  after profiler session {i + 1}: {wall(step, 40):.3f} ms/step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
