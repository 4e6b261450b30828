"""relu(x) * 2 + 1 on 2048x2048 (one fused kernel; eager makes three passes)."""

import torch
from _timeit import run


def f(x):
    return torch.relu(x) * 2 + 1


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(2048, 2048)
    run(f, torch.compile(f), x)
