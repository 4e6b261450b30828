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

import argparse
import math
import os
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F  # noqa: N812 - the usual torch alias
from torch import nn


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


def resolve_device(device: str) -> str:
    """``auto``: CUDA when available and not forced off by FUSIONVIZ_DEVICE=cpu."""
    if device != "auto":
        return device
    if os.environ.get("FUSIONVIZ_DEVICE") == "cpu" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def make_step(device: str, compiled: bool, size: str = "full") -> Callable[[], torch.Tensor]:
    """Build the model and a fixed random batch; return a zero-arg train step.

    Each call: grads set to None, forward + loss (bf16 autocast on CUDA), backward;
    returns the loss (detached). No optimizer step. ``compiled`` compiles the forward
    + loss function with ``torch.compile`` (default options).
    """
    device = resolve_device(device)
    cfg = SIZES[size]
    torch.manual_seed(0)
    model = GPT2(cfg).to(device).train()
    tokens = torch.randint(0, cfg.vocab, (cfg.batch, cfg.seq + 1), device=device)
    idx, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    use_amp = device == "cuda"

    def forward_loss(idx: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        with torch.autocast(device_type=device, dtype=torch.bfloat16, enabled=use_amp):
            logits = model(idx)
            return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    fwd = torch.compile(forward_loss) if compiled else forward_loss

    def step() -> torch.Tensor:
        model.zero_grad(set_to_none=True)
        loss = fwd(idx, targets)
        loss.backward()
        return loss.detach()

    step.model = model  # for callers that want parameter counts etc.
    return step


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--size", choices=tuple(SIZES), default="full")
    opts = ap.parse_args()
    device = resolve_device(opts.device)
    step = make_step(device, compiled=True, size=opts.size)
    n_params = sum(p.numel() for p in step.model.parameters())
    print(f"gpt2 ({opts.size}, {n_params / 1e6:.1f}M parameters) on {device}")
    for i in range(opts.steps):
        print(f"step {i}: loss {step().item():.4f}")


if __name__ == "__main__":
    main()
