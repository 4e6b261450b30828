"""An FSDP2 train step of a Llama-style model (HF ``LlamaForCausalLM``, 4 layers) as
users write it, for torchrun on GPUs.

Each decoder layer and then the root are ``fully_shard``-ed (parameters sharded across
ranks, gathered around each layer's forward and backward), then ``torch.compile(model)``.
bf16 autocast, AdamW, batch 4 x 512 random token ids per rank, 3 steps; each rank prints
its loss.

    torchrun --nproc-per-node 2 benchmarks/fsdp2_llama.py
    python -m fusionviz capture --nproc-per-node 2 benchmarks/fsdp2_llama.py -o DIR \\
        --device cuda
"""

from __future__ import annotations

import argparse
import gc
import os

import torch
import torch.distributed as dist
from torch.distributed.fsdp import fully_shard
from transformers import LlamaConfig, LlamaForCausalLM


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=3)
    opts = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=opts.layers,
                         num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                         use_cache=False)
    model = LlamaForCausalLM(config).to(device)
    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    step = torch.compile(model)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    ids = torch.randint(0, config.vocab_size, (4, 512), device=device)
    for _ in range(opts.steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    print(f"rank {rank}: loss {loss.item():.5f}", flush=True)
    del step, opt, model, loss
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
