"""A deep, narrow residual MLP train step: launch-bound by design.

What it is: 32 blocks of ``x + Linear(GELU(Linear(LayerNorm(x))))`` at width 256,
batch 64 x 256 fp32, random weights; the module's forward returns
``out.pow(2).mean()``; then ``loss.backward()`` and SGD (lr 0.01). Every kernel is
tiny (a 64 x 256 x 256 matmul runs in a few microseconds), so the CPU issuing them
sets the pace: the case CUDA graphs (``mode="reduce-overhead"``) exist for.

``--size tiny``: 2 blocks at width 32, batch 4.

    python benchmarks/eager_models/mlp_train.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/mlp_train.py --modes-wall OUT.json
    python -m fusionviz capture benchmarks/eager_models/mlp_train.py -o T.json.gz \\
        --what-if reduce-overhead -- --size full
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Workload, main

SIZES = {"full": (32, 256, 64), "tiny": (2, 32, 4)}  # blocks, width, batch


class Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.up = nn.Linear(width, width)
        self.down = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.down(nn.functional.gelu(self.up(self.norm(x))))


class DeepMLP(nn.Module):
    def __init__(self, blocks: int, width: int) -> None:
        super().__init__()
        self.blocks = nn.Sequential(*(Block(width) for _ in range(blocks)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.blocks(x).pow(2).mean()


def build(device: str, size: str) -> Workload:
    blocks, width, batch = SIZES[size]
    model = DeepMLP(blocks, width).to(device).train()
    return Workload(
        module=model,
        args=(torch.randn(batch, width, device=device),),
        train=True,
        optimizer_factory=lambda params: torch.optim.SGD(params, lr=0.01),
    )


if __name__ == "__main__":
    main(build)
