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

import sys
from pathlib import Path

import torch
from torch.distributed.fsdp import fully_shard
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _nccl_step import finish, start, train


def main() -> None:
    opts, rank, device = start(layers=4)
    config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=opts.layers,
                         num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                         use_cache=False)
    model = LlamaForCausalLM(config).to(device)
    for layer in model.model.layers:
        fully_shard(layer)
    fully_shard(model)
    ids = torch.randint(0, config.vocab_size, (4, 512), device=device)
    train(torch.compile(model), model.parameters(), ids, opts.steps, rank)
    del model
    finish()


if __name__ == "__main__":
    main()
