"""The train step both workloads share: device choice, a fixed batch, forward + loss
(bf16 autocast on CUDA) compiled or not, backward; and their command line."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable

import torch
import torch.nn.functional as F  # noqa: N812 - the usual torch alias


def resolve_device(device: str) -> str:
    """``auto``: CUDA when available and not forced off by FUSIONVIZ_DEVICE=cpu."""
    if device != "auto":
        return device
    if os.environ.get("FUSIONVIZ_DEVICE") == "cpu" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def make_train_step(model_cls, cfg, device: str, compiled: bool) -> Callable[[], torch.Tensor]:
    """Build ``model_cls(cfg)`` and a fixed random batch; return a zero-arg train step.

    Each call: grads set to None, forward + loss (bf16 autocast on CUDA), backward;
    returns the loss (detached). No optimizer step. ``compiled`` compiles the forward
    + loss function with ``torch.compile`` (default options).
    """
    device = resolve_device(device)
    torch.manual_seed(0)
    model = model_cls(cfg).to(device).train()
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


def run_main(name: str, make_step, sizes: dict, description: str) -> None:
    """``--device auto|cpu|cuda --steps N --size S``: N compiled steps, the loss of each."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--size", choices=tuple(sizes), default="full")
    opts = ap.parse_args()
    device = resolve_device(opts.device)
    step = make_step(device, compiled=True, size=opts.size)
    n_params = sum(p.numel() for p in step.model.parameters())
    print(f"{name} ({opts.size}, {n_params / 1e6:.1f}M parameters) on {device}")
    for i in range(opts.steps):
        print(f"step {i}: loss {step().item():.4f}")
