"""A compiled tensor-parallel train step of a small MLP under torchrun (2 ranks, NCCL
on 2 GPUs; gloo on the CPU): the up projection is split by columns, the down one by
rows (DTensor), so each forward ends in an all-reduce that Inductor schedules among
the fused kernels, and the backward has its own."""

import os

import torch
import torch.distributed as dist
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.tensor.parallel import (
    ColwiseParallel,
    RowwiseParallel,
    parallelize_module,
)


class MLP(torch.nn.Module):
    def __init__(self, width: int = 256) -> None:
        super().__init__()
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(x)))


if __name__ == "__main__":
    world = int(os.environ["WORLD_SIZE"])
    cuda = torch.cuda.is_available() and torch.cuda.device_count() >= world
    kind = "cuda" if cuda else "cpu"
    if cuda:
        torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
    mesh = init_device_mesh(kind, (world,))
    torch.manual_seed(0)
    model = parallelize_module(MLP().to(kind), mesh,
                               {"up": ColwiseParallel(), "down": RowwiseParallel()})
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = torch.compile(model)
    for _ in range(2):
        x = torch.randn(64, 256, device=kind)
        loss = step(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {dist.get_rank()}: loss {loss.item():.5f}")
    dist.destroy_process_group()
