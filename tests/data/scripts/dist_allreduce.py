"""Two ranks (torchrun, gloo on the CPU; NCCL where each rank has a GPU): a compiled
function with a functional all-reduce between pointwise work, so Inductor schedules a
collective and its wait among the fused kernels."""

import os

import torch
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x * 2.0 + 1.0)
    y = funcol.all_reduce(y, "sum", dist.group.WORLD)
    return (y.sin() + y.cos()).sum(dim=-1)


if __name__ == "__main__":
    # A GPU per rank: NCCL. Fewer GPUs than ranks: the ranks share GPU 0 over gloo
    # (which reduces CUDA tensors too), so the kernels are still Triton's. No GPU: CPU.
    world = int(os.environ["WORLD_SIZE"])
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    dist.init_process_group("nccl" if gpus >= world else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", rank if gpus >= world else 0) if gpus else torch.device("cpu")
    torch.manual_seed(0)
    out = torch.compile(step)(torch.randn(64, 128, device=device))
    print(f"rank {rank}: {out.sum().item():.4f}")
    dist.destroy_process_group()
