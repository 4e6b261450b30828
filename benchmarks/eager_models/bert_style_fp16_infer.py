"""A BERT-base-style encoder in fp16 whose attention mask is built the way transformers
built it before its fix (transformers #48925, PR #48975): the case where compiled is
slower than eager.

What it is: plain-torch BERT-base shapes (12 post-norm layers, hidden 768, 12 heads,
intermediate 3072, GELU, vocab 30522, learned positions), random weights, ``.half()`` on
CUDA, ``.eval()``, inference under ``torch.no_grad()``, batch 16 x sequence 384 with an
all-ones ``attention_mask`` passed as a keyword, as a tokenizer's output is.

The mask follows transformers' ``_prepare_4d_attention_mask_for_sdpa`` of those versions:
when not tracing and every token is kept, it returns ``None`` (SDPA then runs its flash
kernel); while Dynamo traces (``torch.compiler.is_compiling()``) it cannot look at the
values, so it always builds the dense ``[batch, 1, seq, seq]`` additive mask, and
``scaled_dot_product_attention`` gets an explicit ``attn_mask``.

``--size tiny``: 2 layers, hidden 64, 4 heads, vocab 256, batch 2 x sequence 32.
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Workload, main

SIZES = {"full": (768, 12, 12, 3072, 30522, 16, 384), "tiny": (64, 2, 4, 256, 256, 2, 32)}


def prepare_mask(mask: torch.Tensor, dtype: torch.dtype, seq: int) -> torch.Tensor | None:
    """transformers' ``_prepare_4d_attention_mask_for_sdpa`` (before the fix)."""
    tracing = torch.jit.is_tracing() or torch.compiler.is_compiling()
    if not tracing and torch.all(mask == 1):
        return None
    bsz, src = mask.shape
    expanded = mask[:, None, None, :].expand(bsz, 1, seq, src).to(dtype)
    inverted = 1.0 - expanded
    return inverted.masked_fill(inverted.to(torch.bool), torch.finfo(dtype).min)


class SelfAttention(nn.Module):
    def __init__(self, hidden: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.query, self.key, self.value = (nn.Linear(hidden, hidden) for _ in range(3))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        b, t, h = x.shape

        def split(z):
            return z.view(b, t, self.heads, h // self.heads).transpose(1, 2)

        q, k, v = split(self.query(x)), split(self.key(x)), split(self.value(x))
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return a.transpose(1, 2).reshape(b, t, h)


class Layer(nn.Module):
    def __init__(self, hidden: int, heads: int, inner: int) -> None:
        super().__init__()
        self.attention = SelfAttention(hidden, heads)
        self.attention_out = nn.Linear(hidden, hidden)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, inner)
        self.output = nn.Linear(inner, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        x = self.attention_norm(x + self.attention_out(self.attention(x, mask)))
        return self.output_norm(x + self.output(F.gelu(self.intermediate(x))))


class BertStyleEncoder(nn.Module):
    def __init__(self, hidden, layers, heads, inner, vocab, max_pos=512) -> None:
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_pos, hidden)
        self.embeddings_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layer = nn.ModuleList(Layer(hidden, heads, inner) for _ in range(layers))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        t = input_ids.shape[1]
        pos = torch.arange(t, device=input_ids.device)
        x = self.embeddings_norm(self.word_embeddings(input_ids) + self.position_embeddings(pos))
        mask = prepare_mask(attention_mask, x.dtype, t)
        for layer in self.layer:
            x = layer(x, mask)
        return x


def build(device: str, size: str) -> Workload:
    hidden, layers, heads, inner, vocab, batch, seq = SIZES[size]
    model = BertStyleEncoder(hidden, layers, heads, inner, vocab).to(device).eval()
    if device.startswith("cuda"):
        model = model.half()
    input_ids = torch.randint(0, vocab, (batch, seq), device=device)
    attention_mask = torch.ones(batch, seq, dtype=torch.long, device=device)
    return Workload(module=model,
                    kwargs={"input_ids": input_ids, "attention_mask": attention_mask})


if __name__ == "__main__":
    main(build)
