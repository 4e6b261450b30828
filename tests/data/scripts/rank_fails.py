"""Two ranks compile a step, then (argv[1]) "crash": rank 1 raises while rank 0 waits;
"hang": both ranks hang (for --timeout and cancel). Writes each rank's pid to the
folder argv[2] so a test can check that none is left."""

import os
import sys
import time

import torch
import torch.distributed as dist


def step(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * 2.0 + 1.0).sum(dim=-1)


if __name__ == "__main__":
    how, folder = sys.argv[1], sys.argv[2]
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    print(torch.compile(step)(torch.randn(16, 8)).sum().item())
    with open(os.path.join(folder, f"pid{rank}"), "w") as f:
        f.write(str(os.getpid()))
    if how == "crash" and rank == 1:
        raise RuntimeError("rank 1 fails on purpose")
    time.sleep(600)  # far past any test's bound: a wait for it shows
