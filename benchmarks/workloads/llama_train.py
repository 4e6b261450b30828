"""A 4-layer Llama-style decoder train step, standalone: a realistic workload for fusionviz.

What it is: a decoder in the Llama style (RMSNorm before attention and MLP, rotary
position embeddings on q and k, a SwiGLU MLP, no biases, untied output head, grouped-query
attention) with dim 1024, 16 heads, 4 key/value heads (GQA: each kv head serves 4 query
heads; set ``n_kv_head=16`` for plain multi-head attention), ffn 2816, vocab 32000,
written as plain ``nn.Module`` code with random weights (no downloads). Attention is
``F.scaled_dot_product_attention(..., is_causal=True)``; the rotary embedding uses the
real-valued rotate-half form (no complex tensors).

The train step (batch 8 x sequence 256, one fixed random batch seeded with
``torch.manual_seed(0)``): grads zeroed with ``set_to_none``, forward + cross-entropy
loss under bf16 autocast on CUDA (plain fp32 on the CPU), backward. There is NO
optimizer step, so the weights never change and the loss is the same every step.

``compiled=True`` compiles the step's forward (model + loss) with ``torch.compile``
(default options); AOTAutograd compiles the backward. ``size="tiny"`` (2 layers, dim 64,
vocab 128, seq 32, batch 2) compiles in seconds on a CPU, for smoke tests; ``size="deep"``
(320 layers, dim 256, 4 heads, ffn 688, vocab 1024, seq 128, batch 2) is about 20k
scheduler nodes, the window's largest real case (``benchmarks/bench_real.py``).

Same API as ``gpt2_train.py``:

    make_step(device, compiled, size="full") -> zero-arg callable returning the loss

    python benchmarks/workloads/llama_train.py [--device auto|cpu|cuda] [--steps 3]
        [--size full|tiny|deep]
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch
import torch.nn.functional as F  # noqa: N812 - the usual torch alias
from torch import nn

# The shared step lives beside this file: importable however this file was loaded
# (run as a script, by runpy, or by a spec from its path).
sys.path.insert(0, str(Path(__file__).resolve().parent))
from train_step import make_train_step, run_main


@dataclass(frozen=True)
class Config:
    """Model and batch shape."""

    n_layer: int = 4
    dim: int = 1024
    n_head: int = 16
    n_kv_head: int = 4  # < n_head: grouped-query attention
    ffn: int = 2816
    vocab: int = 32000
    rope_theta: float = 10000.0
    norm_eps: float = 1e-5
    batch: int = 8
    seq: int = 256


SIZES = {
    "full": Config(),
    "tiny": Config(n_layer=2, dim=64, n_head=4, n_kv_head=2, ffn=176, vocab=128,
                   batch=2, seq=32),
    # deep and thin: about 20k scheduler nodes in a train step whose kernels cost little
    # (the window's scale, benchmarks/bench_real.py)
    "deep": Config(n_layer=320, dim=256, n_head=4, n_kv_head=4, ffn=688, vocab=1024,
                   batch=2, seq=128),
}


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()  # normalise in fp32, as Llama does, then back to the input dtype
        out = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return out.type_as(x) * self.weight


def rope_tables(seq: int, head_dim: int, theta: float) -> tuple[torch.Tensor, torch.Tensor]:
    """cos and sin tables, (seq, head_dim), for the rotate-half rotary embedding."""
    inv_freq = 1.0 / theta ** (torch.arange(0, head_dim, 2).float() / head_dim)
    freqs = torch.outer(torch.arange(seq).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2, dim=-1)
    return torch.cat((-b, a), dim=-1)


def apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """x: (B, heads, T, head_dim); cos/sin: (T, head_dim)."""
    return (x * cos + rotate_half(x) * sin).type_as(x)


class Attention(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.n_head, self.n_kv = cfg.n_head, cfg.n_kv_head
        self.head_dim = cfg.dim // cfg.n_head
        self.wq = nn.Linear(cfg.dim, cfg.n_head * self.head_dim, bias=False)
        self.wk = nn.Linear(cfg.dim, cfg.n_kv_head * self.head_dim, bias=False)
        self.wv = nn.Linear(cfg.dim, cfg.n_kv_head * self.head_dim, bias=False)
        self.wo = nn.Linear(cfg.n_head * self.head_dim, cfg.dim, bias=False)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape
        q = self.wq(x).view(b, t, self.n_head, self.head_dim).transpose(1, 2)
        k = self.wk(x).view(b, t, self.n_kv, self.head_dim).transpose(1, 2)
        v = self.wv(x).view(b, t, self.n_kv, self.head_dim).transpose(1, 2)
        q, k = apply_rope(q, cos, sin), apply_rope(k, cos, sin)
        if self.n_kv != self.n_head:  # GQA: repeat each kv head for its query heads
            rep = self.n_head // self.n_kv
            k = k.repeat_interleave(rep, dim=1)
            v = v.repeat_interleave(rep, dim=1)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.wo(y.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn, bias=False)  # gate
        self.w3 = nn.Linear(cfg.dim, cfg.ffn, bias=False)  # up
        self.w2 = nn.Linear(cfg.ffn, cfg.dim, bias=False)  # down

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.attn = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.mlp = SwiGLU(cfg)

    def forward(self, x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok = nn.Embedding(cfg.vocab, cfg.dim)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.norm = RMSNorm(cfg.dim, cfg.norm_eps)
        self.out = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        cos, sin = rope_tables(cfg.seq, cfg.dim // cfg.n_head, cfg.rope_theta)
        self.register_buffer("cos", cos, persistent=False)
        self.register_buffer("sin", sin, persistent=False)
        for m in self.modules():
            if isinstance(m, nn.Linear | nn.Embedding):
                nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        cos, sin = self.cos[:t], self.sin[:t]
        x = self.tok(idx)
        for block in self.blocks:
            x = block(x, cos, sin)
        return self.out(self.norm(x))


def make_step(device: str, compiled: bool, size: str = "full") -> Callable[[], torch.Tensor]:
    """A llama train step (``train_step.make_train_step``) at ``size``."""
    return make_train_step(Llama, SIZES[size], device, compiled)


def main() -> None:
    run_main("llama", make_step, SIZES, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
