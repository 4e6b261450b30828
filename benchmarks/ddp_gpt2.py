"""A DDP train step of HF GPT-2 (6 layers) as users write it, for torchrun on GPUs.

``torch.compile(DistributedDataParallel(model))`` with DDP's default 25 MB buckets:
Dynamo's DDP optimizer splits the traced forward at the bucket boundaries and Inductor
compiles each piece, forward and backward, on its own; DDP all-reduces each bucket's
gradients from its hooks, outside the compiled graphs. bf16 autocast, AdamW, batch 8 x
256 random token ids per rank, 3 steps. Each rank prints its loss.

    torchrun --nproc-per-node 2 benchmarks/ddp_gpt2.py [--layers 6] [--steps 3]
    python -m fusionviz capture --nproc-per-node 2 benchmarks/ddp_gpt2.py -o DIR \\
        --device cuda
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from torch.nn.parallel import DistributedDataParallel
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _nccl_step import finish, start, train


def main() -> None:
    opts, rank, device = start(layers=6)
    model = GPT2LMHeadModel(GPT2Config(n_layer=opts.layers, use_cache=False)).to(device)
    if getattr(model, "loss_type", "absent") is None:  # a graph break otherwise
        model.loss_type = "ForCausalLM"
    ddp = DistributedDataParallel(model, device_ids=[device.index])
    ids = torch.randint(0, model.config.vocab_size, (8, 256), device=device)
    train(torch.compile(ddp), ddp.parameters(), ids, opts.steps, rank)
    del ddp, model
    finish()


if __name__ == "__main__":
    main()
