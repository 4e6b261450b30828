"""Two ranks (torchrun; gloo on the CPU): a compiled step with three all-gathers, and
Inductor's FX bucketing of all-gathers on (``bucket_all_gathers_fx = "all"``), which
merges them into one before lowering, as FSDP's parameter all-gathers are bucketed.

    fusionviz capture all_gather_bucketing.py --nproc-per-node 2 -o bucketing/
"""

import torch
import torch._inductor.config as inductor_config
import torch.distributed as dist
import torch.distributed._functional_collectives as funcol


def step(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    group = dist.group.WORLD
    ga, gb, gc = (funcol.all_gather_tensor(t, 0, group) for t in (a, b, c))
    return (ga.relu() + gb.sin()).sum() + gc.cos().sum()


if __name__ == "__main__":
    inductor_config.bucket_all_gathers_fx = "all"
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    torch.manual_seed(rank)
    args = [torch.randn(8, 4) for _ in range(3)]
    print(f"rank {rank}: {torch.compile(step)(*args).item():.4f}")
    dist.destroy_process_group()
