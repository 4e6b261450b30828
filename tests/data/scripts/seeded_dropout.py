"""A seeded train step with dropout: prints values that depend on the global RNG.

Run with and without capture, its RESULT lines must be the same: the capture's extra
timing runs must not advance the RNG or touch the script's tensors."""

import torch

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Dropout(0.5), torch.nn.ReLU())
step = torch.compile(model)
x = torch.randn(16, 64)
for _ in range(3):
    y = step(x)
    y.sum().backward()
    print("RESULT", f"{float(y.sum()):.6f}", f"{float(model[0].weight.grad.sum()):.6f}")
print("RESULT", f"{float(torch.rand(1)):.6f}")
