"""Compiles and runs one graph, then raises: the traceback and the graph are both kept."""

import torch

f = torch.compile(lambda x: (x.sin() + x.cos()).mean(dim=0))
f(torch.randn(32, 16))
raise RuntimeError("boom after the first graph")
