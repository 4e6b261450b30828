"""Small graph for what-if tests: a fusable chain, independent pointwise ops, two sizes."""

import torch


def f(x, y, z):
    a = torch.relu(x * 2.0 + 1.0)  # pointwise, consumed by the reduction below
    s = a.sum(dim=1)  # reduction (a different loop shape on the CPU)
    m = x.mean(dim=1, keepdim=True)  # reduction ...
    d = (x - m) * 2.0  # ... and its pointwise epilogue: these fuse by default
    b = torch.sin(y) * 3.0  # independent of the rest, same size as x
    c = torch.cos(z) + 1.0  # independent, a different size
    return a, s, b, c, d


torch.manual_seed(0)
out = torch.compile(f)(torch.randn(64, 64), torch.randn(64, 64), torch.randn(37))
print("whatif_ops", [tuple(t.shape) for t in out])
