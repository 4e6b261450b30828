"""Compiled, but for another backend: Dynamo makes a graph, Inductor never sees it."""

import torch


@torch.compile(backend="aot_eager")
def f(x):
    return torch.relu(x) * 2


print(f(torch.randn(8)).sum().item())
