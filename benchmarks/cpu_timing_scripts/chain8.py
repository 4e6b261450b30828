"""A chain of 8 pointwise ops on 1024x1024 (eager: 8 passes; compiled: one kernel)."""

import torch
from _timeit import run


def f(x):
    y = torch.sin(x)
    y = y * 1.5
    y = y + x
    y = torch.tanh(y)
    y = y - 0.25
    y = torch.relu(y)
    y = y * y
    return torch.exp(-y)


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1024, 1024)
    run(f, torch.compile(f), x)
