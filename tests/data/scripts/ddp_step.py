"""A compiled DDP train step of a small MLP: run it under torchrun (2 ranks; gloo on
the CPU, NCCL where each rank has a GPU). Dynamo's DDP optimizer splits the graph at
bucket boundaries; DDP's own all-reduce runs in its hooks, between compiled graphs."""

import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


class MLP(torch.nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


if __name__ == "__main__":
    cuda = torch.cuda.is_available() and torch.cuda.device_count() >= int(os.environ["WORLD_SIZE"])
    dist.init_process_group("nccl" if cuda else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    torch.manual_seed(0)
    model = DistributedDataParallel(MLP().to(device), device_ids=[rank] if cuda else None)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = torch.compile(model)
    for _ in range(2):
        x = torch.randn(32, 64, device=device)
        loss = step(x).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank}: loss {loss.item():.5f}")
    dist.destroy_process_group()
