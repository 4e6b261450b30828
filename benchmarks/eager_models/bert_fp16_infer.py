"""BERT-base inference in fp16: transformers ``BertModel(BertConfig())``, random weights.

What it is: bert-base (12 layers, hidden 768, 12 heads, vocab 30522), random init (no
download), ``.half()`` on CUDA (fp32 on the CPU, no autocast either way), ``.eval()``,
under ``torch.no_grad()``. Batch 16 x sequence 384: random ``input_ids`` and an all-ones
``attention_mask`` (int64), both passed as keywords the way ``model(**tokenizer(...))``
passes a tokenizer's output, so transformers builds the attention mask from it under
tracing. Attention is SDPA where the installed transformers accepts
``attn_implementation="sdpa"`` (feature-detected; else its default).

``--size tiny``: 2 layers, hidden 64, 4 heads, vocab 256, batch 2 x sequence 32.

    python benchmarks/eager_models/bert_fp16_infer.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/bert_fp16_infer.py --eager-profile OUT.json
    python -m fusionviz capture benchmarks/eager_models/bert_fp16_infer.py -o T.json.gz \\
        -- --size full
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
from transformers import BertConfig, BertModel

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Workload, main

SIZES = {
    "full": ({}, 16, 384),
    "tiny": (dict(hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                  intermediate_size=256, vocab_size=256, max_position_embeddings=64), 2, 32),
}


def make_model(**cfg_kwargs) -> BertModel:
    """BertModel with SDPA attention where this transformers has it, else its default."""
    try:
        return BertModel(BertConfig(attn_implementation="sdpa", **cfg_kwargs))
    except (TypeError, ValueError, ImportError):
        return BertModel(BertConfig(**cfg_kwargs))


def build(device: str, size: str) -> Workload:
    cfg_kwargs, batch, seq = SIZES[size]
    model = make_model(**cfg_kwargs).to(device).eval()
    if device.startswith("cuda"):
        model = model.half()
    impl = getattr(model.config, "_attn_implementation", None)
    print(f"attention implementation: {impl}")
    input_ids = torch.randint(0, model.config.vocab_size, (batch, seq), device=device)
    attention_mask = torch.ones(batch, seq, dtype=torch.long, device=device)
    return Workload(module=model,
                    kwargs={"input_ids": input_ids, "attention_mask": attention_mask})


if __name__ == "__main__":
    main(build)
