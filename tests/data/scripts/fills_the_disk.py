"""Two compiled graphs that need no C++ compiler (a matmul each, Inductor calls an
external kernel): run with a small file-size limit, the capture can write the
trace of the first graph but not of both, as on a full disk."""

import torch

x = torch.randn(8, 8)
torch.compile(lambda a: a @ a)(x)
torch.compile(lambda a: a @ a.T)(x)
print("script done", flush=True)
