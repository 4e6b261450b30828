"""A DDP train step as the PyTorch tutorials write it: the compiled model wrapped in
DDP at module level, the process group destroyed at the end while the DDP module still
lives (it dies at exit). Run it under torchrun (2 ranks, gloo on the CPU)."""

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

dist.init_process_group("gloo")
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                            torch.nn.Linear(256, 64))
ddp = DistributedDataParallel(torch.compile(model))
opt = torch.optim.SGD(ddp.parameters(), lr=0.01)
for _ in range(2):
    loss = ddp(torch.randn(32, 64)).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print(f"rank {dist.get_rank()}: loss {loss.item():.5f}")
dist.destroy_process_group()
