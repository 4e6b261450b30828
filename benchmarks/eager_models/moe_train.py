"""A mixture-of-experts decoder train step in plain torch: random weights, AdamW.

What it is: 4 pre-LayerNorm blocks, d_model 512, 8 heads of causal
``F.scaled_dot_product_attention``, learned positions, vocab 8192, untied head. Each
block's MLP is a mixture of 8 experts (512 -> 2048 -> 512, GELU) with top-2 routing: a
softmax gate, the two best experts per token, their weights renormalized. Dispatch is
per expert with ``index_select`` / ``index_add_``: each expert takes the ``capacity`` =
1.25 x its fair share of tokens with the largest combine weight for it (tokens routed
elsewhere weigh 0; over-capacity tokens are dropped, as in GShard / Switch), so every
shape is static and the model compiles without graph breaks. The loss is next-token
cross-entropy plus 0.01 x the Switch load-balancing loss. Batch 8 x sequence 512, bf16
autocast on CUDA (fp32 on the CPU); then ``loss.backward()`` and AdamW (lr 1e-4).

``--size tiny``: 2 layers, d_model 64, 4 heads, 4 experts (64 -> 256), vocab 256,
batch 2 x sequence 32.

    python benchmarks/eager_models/moe_train.py [--size full|tiny] [--device cpu]
    python benchmarks/eager_models/moe_train.py --eager-profile OUT.json
    python -m fusionviz capture benchmarks/eager_models/moe_train.py -o T.json.gz \\
        -- --size full
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812 - the usual torch alias
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import Workload, main

# layers, d_model, heads, experts, vocab, batch, seq
SIZES = {"full": (4, 512, 8, 8, 8192, 8, 512), "tiny": (2, 64, 4, 4, 256, 2, 32)}
TOP_K, CAPACITY_FACTOR, AUX_WEIGHT = 2, 1.25, 0.01


class MoE(nn.Module):
    def __init__(self, d: int, n_experts: int) -> None:
        super().__init__()
        self.gate = nn.Linear(d, n_experts, bias=False)
        self.experts = nn.ModuleList(
            nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
            for _ in range(n_experts))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shape, n_exp = x.shape, len(self.experts)
        x = x.reshape(-1, shape[-1])
        probs = F.softmax(self.gate(x).float(), dim=-1)  # (tokens, experts)
        top_w, top_i = probs.topk(TOP_K, dim=-1)
        top_w = top_w / top_w.sum(dim=-1, keepdim=True)
        combine = torch.zeros_like(probs).scatter(1, top_i, top_w)  # 0 where not routed
        capacity = min(x.shape[0], math.ceil(CAPACITY_FACTOR * TOP_K * x.shape[0] / n_exp))
        slot_w, slot_i = combine.t().topk(capacity, dim=-1)  # (experts, capacity)
        out = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            y = expert(x.index_select(0, slot_i[e]))
            out.index_add_(0, slot_i[e], (y * slot_w[e, :, None].to(y.dtype)).to(x.dtype))
        routed = F.one_hot(top_i, n_exp).sum(dim=1).float().mean(dim=0) / TOP_K
        aux = n_exp * (routed * probs.mean(dim=0)).sum()  # Switch load-balancing loss
        return out.reshape(shape), aux


class Block(nn.Module):
    def __init__(self, d: int, heads: int, n_experts: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.moe = MoE(d, n_experts)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        b, t, d = x.shape
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for z in self.qkv(self.ln1(x)).split(d, dim=-1))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, d))
        m, aux = self.moe(self.ln2(x))
        return x + m, aux


class MoELM(nn.Module):
    def __init__(self, layers: int, d: int, heads: int, n_experts: int, vocab: int,
                 context: int) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, d), nn.Embedding(context, d)
        self.blocks = nn.ModuleList(Block(d, heads, n_experts) for _ in range(layers))
        self.ln_f, self.head = nn.LayerNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = self.tok(idx) + self.pos(torch.arange(idx.shape[1], device=idx.device))
        aux_total = 0.0
        for block in self.blocks:
            x, aux = block(x)
            aux_total = aux_total + aux
        logits = self.head(self.ln_f(x))
        lm = F.cross_entropy(logits.view(-1, logits.shape[-1]).float(), targets.view(-1))
        return lm + AUX_WEIGHT * aux_total


def build(device: str, size: str) -> Workload:
    layers, d, heads, n_experts, vocab, batch, seq = SIZES[size]
    model = MoELM(layers, d, heads, n_experts, vocab, seq).to(device).train()
    tokens = torch.randint(0, vocab, (batch, seq + 1), device=device)
    return Workload(
        module=model,
        args=(tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()),
        train=True,
        amp=torch.bfloat16 if device.startswith("cuda") else None,
        optimizer_factory=lambda params: torch.optim.AdamW(params, lr=1e-4),
    )


if __name__ == "__main__":
    main(build)
