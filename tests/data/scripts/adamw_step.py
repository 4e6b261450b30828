"""A compiled AdamW step (foreach): its graph mutates the parameters and the
optimizer state in place."""

import torch

torch.manual_seed(0)
model = torch.nn.Linear(32, 32)
opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
model(torch.randn(4, 32)).sum().backward()
step = torch.compile(opt.step)
for _ in range(2):
    step()
print("RESULT", f"{float(model.weight.sum()):.6f}")
