"""Two pointwise chains on 1024x1024 with a graph break between them (two frames)."""

import torch
from _timeit import run


def f(x):
    y = torch.tanh(torch.sin(x) * 2 + x)
    torch._dynamo.graph_break()
    return torch.relu(torch.cos(y) - 0.5) * y


if __name__ == "__main__":
    torch.manual_seed(0)
    x = torch.randn(1024, 1024)
    run(f, torch.compile(f), x)
