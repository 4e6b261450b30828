"""GPT-2 small train step: transformers ``GPT2LMHeadModel``, random weights, AdamW.

What it is: ``GPT2LMHeadModel(GPT2Config(n_layer=12, use_cache=False))``: GPT-2 small's
shapes (n_embd 768, 12 heads, vocab 50257, context 1024, dropout 0.1, tied embeddings),
random init (no download). Batch 8 x sequence 256 of random token ids; the module's
forward is ``model(input_ids, labels=input_ids).loss`` (transformers shifts the labels),
under bf16 autocast on CUDA (fp32 on the CPU); then ``loss.backward()`` and AdamW
(lr 1e-4).

Transformers from 4.46 on picks a model's loss by its class name; ``GPT2LMHeadModel``
matches none, so each call logs a ``warning_once``, a graph break that dynamo cannot
resume from. Where the model has that ``loss_type`` attribute and it is unset, it is set
to ``"ForCausalLM"`` (the loss transformers falls back to anyway): same loss, no break.

``--size tiny``: 2 layers, n_embd 64, 4 heads, vocab 256, context 64, batch 2 x seq 32.

    python benchmarks/eager_models/gpt2_train.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/gpt2_train.py --eager-profile OUT.json
    python -m fusionviz capture benchmarks/eager_models/gpt2_train.py -o T.json.gz \\
        -- --size full
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from transformers import GPT2Config, GPT2LMHeadModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import LossOf, Workload, main

SIZES = {
    "full": (dict(n_layer=12), 8, 256),
    "tiny": (dict(n_layer=2, n_embd=64, n_head=4, vocab_size=256, n_positions=64,
                  bos_token_id=0, eos_token_id=0), 2, 32),
}


def build(device: str, size: str) -> Workload:
    cfg_kwargs, batch, seq = SIZES[size]
    model = GPT2LMHeadModel(GPT2Config(use_cache=False, **cfg_kwargs)).to(device).train()
    if getattr(model, "loss_type", "absent") is None:  # see the docstring
        model.loss_type = "ForCausalLM"
    input_ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    return Workload(
        module=LossOf(model),
        kwargs={"input_ids": input_ids, "labels": input_ids},
        train=True,
        amp=torch.bfloat16 if device.startswith("cuda") else None,
        optimizer_factory=lambda params: torch.optim.AdamW(params, lr=1e-4),
    )


if __name__ == "__main__":
    main(build)
