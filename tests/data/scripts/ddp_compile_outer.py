"""A DDP train step as users often write it: the DDP module compiled, its model a
torch.nn.Sequential. On torch 2.13 Dynamo does not trace DDP's forward
(``_inside_ddp_forward`` is skipped) and never compiles the Sequential inside, so no
graph reaches Inductor. Run it under torchrun (gloo on the CPU)."""

import torch
import torch.distributed as dist
from _train_mlp import finish
from torch.nn.parallel import DistributedDataParallel

if __name__ == "__main__":
    dist.init_process_group("gloo")
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.GELU(),
                                torch.nn.Linear(256, 64))
    step = torch.compile(DistributedDataParallel(model))  # not DDP(torch.compile(model))
    opt = torch.optim.SGD(step.parameters(), lr=0.01)
    for _ in range(2):
        loss = step(torch.randn(32, 64)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {dist.get_rank()}: loss {loss.item():.5f}")
    del step, opt  # the DDP module before the process group: a teardown that cannot hang
    finish()
