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

import argparse
import gc
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from transformers import GPT2Config, GPT2LMHeadModel


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--steps", type=int, default=3)
    opts = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=opts.layers, use_cache=False)).to(device)
    if getattr(model, "loss_type", "absent") is None:  # a graph break otherwise
        model.loss_type = "ForCausalLM"
    ddp = DistributedDataParallel(model, device_ids=[device.index])
    step = torch.compile(ddp)
    opt = torch.optim.AdamW(ddp.parameters(), lr=1e-4)
    ids = torch.randint(0, model.config.vocab_size, (8, 256), device=device)
    for _ in range(opts.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    print(f"rank {rank}: loss {loss.item():.5f}", flush=True)
    del ddp, step, opt, model, loss
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
