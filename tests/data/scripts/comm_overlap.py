"""Two ranks (torchrun; gloo on the CPU, NCCL where each rank has a GPU): a compiled
step whose all-reduce has independent compute beside it (a matmul and a softmax), with
Inductor's compute/communication overlap passes on. Fusion runs first; then
``sink_waits_iterative`` moves the wait after the matmul's kernels so they run while
the all-reduce is in flight, and ``raise_comms`` finds nothing more to move.

    fusionviz capture comm_overlap.py --nproc-per-node 2 -o overlap/
"""

import os

import torch
import torch._inductor.config as inductor_config
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x * 2.0 + 1.0)
    y = funcol.all_reduce(y, "sum", dist.group.WORLD)
    z = torch.softmax(torch.tanh(x @ w) * 3.0, dim=-1)  # needs no all-reduced value
    return y.sin().sum(dim=-1) + z.sum(dim=-1)


if __name__ == "__main__":
    inductor_config.reorder_for_compute_comm_overlap = True
    inductor_config.reorder_for_compute_comm_overlap_passes = [
        "sink_waits_iterative", "raise_comms"]
    # A GPU per rank: NCCL. Fewer GPUs than ranks: the ranks share GPU 0 over gloo
    # (which reduces CUDA tensors too), so the kernels are still Triton's. No GPU: CPU.
    world = int(os.environ["WORLD_SIZE"])
    gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    dist.init_process_group("nccl" if gpus >= world else "gloo")
    rank = dist.get_rank()
    device = torch.device("cuda", rank if gpus >= world else 0) if gpus else torch.device("cpu")
    if gpus:
        torch.cuda.set_device(device)
    torch.manual_seed(0)
    x, w = torch.randn(64, 128, device=device), torch.randn(128, 128, device=device)
    out = torch.compile(step)(x, w)
    print(f"rank {rank}: {out.sum().item():.4f}")
    dist.destroy_process_group()
