"""Compiles a step, starts a child that sleeps, writes "pid parent child" to
argv[1]/pids<rank> (or $PIDS_DIR/pids<rank>: the window passes no arguments), then
sleeps: a signal sent to the capture then arrives mid-run.
Under torchrun (gloo on the CPU) the ranks all-reduce the step's result first."""

import os
import subprocess
import sys
import time

import torch
import torch.distributed as dist


def step(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * 2.0 + 1.0).sum(dim=-1)


if __name__ == "__main__":
    ranked = "WORLD_SIZE" in os.environ
    if ranked:
        dist.init_process_group("gloo")
    rank = dist.get_rank() if ranked else 0
    out = torch.compile(step)(torch.randn(16, 8))
    if ranked:
        dist.all_reduce(out)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    folder = sys.argv[1] if len(sys.argv) > 1 else os.environ["PIDS_DIR"]
    path = os.path.join(folder, f"pids{rank}")
    with open(path + ".tmp", "w") as f:
        f.write(f"{os.getpid()} {os.getppid()} {child.pid}")
    os.replace(path + ".tmp", path)
    time.sleep(120)
