"""Inductor fallbacks called through torch.ops (sort, attention, cumsum), each with a
MultiOutput line in the wrapper."""

import torch


def f(x, y):
    a = torch.sort(x, dim=-1).values * 2
    b = torch.nn.functional.scaled_dot_product_attention(y, y, y)
    return a.cumsum(-1), b.relu()


g = torch.compile(f)
g(torch.randn(64, 64), torch.randn(2, 4, 16, 8))
