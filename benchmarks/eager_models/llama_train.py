"""A 4-layer Llama train step: transformers ``LlamaForCausalLM``, random weights, AdamW.

What it is: ``LlamaForCausalLM`` with hidden 1024, intermediate 2816 (SwiGLU), 4 layers,
16 heads (16 KV heads: plain MHA), vocab 32000, RoPE, RMSNorm, 1024 positions,
``use_cache=False``; random init (no download). Batch 4 x sequence 512 of random token
ids; the module's forward is ``model(input_ids, labels=input_ids).loss`` under bf16
autocast on CUDA (fp32 on the CPU); then ``loss.backward()`` and AdamW (lr 1e-4).

``--size tiny``: 2 layers, hidden 64, intermediate 176, 4 heads, vocab 256, 64
positions, batch 2 x sequence 32. ``--size deep64``: 64 layers,
hidden 256, intermediate 688, 4 heads, vocab 1024, batch 2 x sequence 128 (the deep
trace of ``benchmarks/bench_real.py``).

    python benchmarks/eager_models/llama_train.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/llama_train.py --eager-profile OUT.json
    python -m fusionviz capture benchmarks/eager_models/llama_train.py -o T.json.gz \\
        -- --size full
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from transformers import LlamaConfig, LlamaForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import LossOf, Workload, main

SIZES = {
    "full": (dict(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                  num_attention_heads=16, num_key_value_heads=16, vocab_size=32000,
                  max_position_embeddings=1024), 4, 512),
    "tiny": (dict(hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, vocab_size=256,
                  max_position_embeddings=64), 2, 32),
    # Deep and thin, for the window's scale (benchmarks/bench_real.py): a graph of
    # thousands of scheduler nodes whose kernels cost little.
    "deep64": (dict(hidden_size=256, intermediate_size=688, num_hidden_layers=64,
                    num_attention_heads=4, num_key_value_heads=4, vocab_size=1024,
                    max_position_embeddings=256), 2, 128),
}


def build(device: str, size: str) -> Workload:
    cfg_kwargs, batch, seq = SIZES[size]
    model = LlamaForCausalLM(LlamaConfig(use_cache=False, **cfg_kwargs)).to(device).train()
    input_ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    return Workload(
        module=LossOf(model),
        kwargs={"input_ids": input_ids, "labels": input_ids},
        train=True,
        amp=torch.bfloat16 if device.startswith("cuda") else None,
        optimizer_factory=lambda params: torch.optim.AdamW(params, lr=1e-4),
    )


if __name__ == "__main__":
    main(build, sizes=tuple(SIZES))
