"""What the DDP and FSDP2 scripts share: a small MLP, the process group on this
machine's devices, two compiled train steps, and a teardown that cannot hang."""

import gc
import os

import torch
import torch.distributed as dist


class MLP(torch.nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(width)
        self.up = torch.nn.Linear(width, 4 * width)
        self.down = torch.nn.Linear(4 * width, width)

    def forward(self, x):
        return x + self.down(torch.nn.functional.gelu(self.up(self.norm(x))))


def start() -> tuple[int, torch.device, bool]:
    """(rank, device, cuda): NCCL with a GPU per rank, else gloo on the CPU."""
    cuda = torch.cuda.is_available() and torch.cuda.device_count() >= int(os.environ["WORLD_SIZE"])
    dist.init_process_group("nccl" if cuda else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", rank) if cuda else torch.device("cpu")
    if cuda:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    return rank, device, cuda


def train(model: torch.nn.Module, device: torch.device, rank: int, width: int = 64,
          steps: int = 2) -> None:
    """``steps`` compiled train steps on a batch of 32 x ``width``; keeps no reference
    to ``model`` once it returns."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    step = torch.compile(model)
    for _ in range(steps):
        loss = step(torch.randn(32, width, device=device)).pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()
    print(f"rank {rank}: loss {loss.item():.5f}")


def finish() -> None:
    """Tear down in an order that cannot hang (pytorch/pytorch#56297): the model must
    be gone first (the caller drops it; collect its cycles here), so that DDP's
    Reducer dies while the process group lives on, and the group is destroyed only by
    ``destroy_process_group``. If the Reducer held the group's last reference, its
    destructor would join gloo's worker threads while holding the GIL, and a worker
    waiting for the GIL to free a finished all-reduce would never let it end: a hang at
    exit that the capture's slower teardown makes likelier. The barrier lets every
    rank's workers finish before the group goes."""
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()
