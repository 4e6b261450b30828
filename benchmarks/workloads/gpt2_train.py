"""A GPT-2-size (124M) decoder train step, standalone: a realistic workload for fusionviz.

What it is: a 12-layer decoder with GPT-2 small's shape (n_embd 768, 12 heads, vocab
50257, context 1024, dropout 0.1, weight-tied input/output embeddings), written as plain
``nn.Module`` code with random weights: no ``transformers``, no downloads. Attention is
``F.scaled_dot_product_attention(..., is_causal=True)``.

The train step (batch 8 x sequence 256, one fixed random batch seeded with
``torch.manual_seed(0)``): grads zeroed with ``set_to_none``, forward + cross-entropy
loss under bf16 autocast on CUDA (plain fp32 on the CPU), backward. There is NO
optimizer step: the step measures exactly the compiled forward and backward graphs
(plus the few eager launches autograd adds, such as the loss's seed gradient), so the
weights never change and the printed loss only varies with dropout.

``compiled=True`` compiles the step's forward, i.e. a function that runs the model and
the loss, with ``torch.compile`` (default options); AOTAutograd then compiles the
backward too. ``size="tiny"`` (2 layers, n_embd 64, vocab 128, seq 32, batch 2) compiles
in seconds on a CPU, for smoke tests.

API shared with ``llama_train.py`` (other benchmark scripts import both):

    make_step(device, compiled, size="full") -> zero-arg callable returning the loss

Run it directly, or under capture:

    python benchmarks/workloads/gpt2_train.py [--device auto|cpu|cuda] [--steps 3]
        [--size full|tiny]
    python -m fusionviz capture benchmarks/workloads/gpt2_train.py -o gpt2.json.gz \\
        -- --size tiny
"""

from __future__ import annotations

import math
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

    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768
    vocab: int = 50257
    context: int = 1024  # size of the learned position table
    dropout: float = 0.1
    batch: int = 8
    seq: int = 256


SIZES = {
    "full": Config(),
    "tiny": Config(n_layer=2, n_head=4, n_embd=64, vocab=128, context=64, batch=2, seq=32),
}


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.dropout = cfg.dropout
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.resid_drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        # (B, T, C) -> (B, heads, T, head_dim)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
                   for z in (q, k, v))
        y = F.scaled_dot_product_attention(
            q, k, v, dropout_p=self.dropout if self.training else 0.0, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return self.resid_drop(self.proj(y))


class MLP(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.proj(F.gelu(self.fc(x), approximate="tanh")))


class Block(nn.Module):
    """Pre-LayerNorm transformer block, as in GPT-2."""

    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT2(nn.Module):
    def __init__(self, cfg: Config) -> None:
        super().__init__()
        self.cfg = cfg
        self.wte = nn.Embedding(cfg.vocab, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.context, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied input/output embeddings
        self.apply(self._init)
        # GPT-2's scaled init of the residual projections
        for name, p in self.named_parameters():
            if name.endswith("proj.weight"):
                nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, mean=0.0, std=0.02)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        t = idx.shape[1]
        pos = torch.arange(t, device=idx.device)
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.blocks:
            x = block(x)
        return self.lm_head(self.ln_f(x))


def make_step(device: str, compiled: bool, size: str = "full") -> Callable[[], torch.Tensor]:
    """A gpt2 train step (``train_step.make_train_step``) at ``size``."""
    return make_train_step(GPT2, SIZES[size], device, compiled)


def main() -> None:
    run_main("gpt2", make_step, SIZES, __doc__.splitlines()[0])


if __name__ == "__main__":
    main()
