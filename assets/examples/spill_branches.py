"""Many live transcendental branches reduced from one input: fusion raises register pressure.

Twelve different transcendental expressions of the same input are each reduced over
rows. Inductor wants to fuse the reductions (they share the input); the fused Triton
kernel holds many accumulators and temporaries at once and can spill registers, which
makes benchmark_fusion veto the fusion without timing it. Try
``fusionviz experiment assets/examples/spill_branches.py --keep-spills``.
Runs on CUDA when present (FUSIONVIZ_DEVICE=cpu forces the CPU); ``--size N``.
"""

import argparse
import os

import torch


def pick_device() -> str:
    wanted = os.environ.get("FUSIONVIZ_DEVICE", "auto")
    if wanted == "cpu" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def branches(x: torch.Tensor) -> torch.Tensor:
    t = torch.tanh(x)
    outs = [
        torch.sin(x * 1.1).sum(1), torch.cos(x * 0.9).sum(1), torch.exp(-t * t).sum(1),
        torch.log1p(x.abs()).sum(1), torch.sigmoid(x * 3.0).sum(1), torch.erf(x).sum(1),
        (torch.sin(x) * torch.cos(t)).sum(1), torch.atan(x * 2.0).sum(1),
        torch.sqrt(x.abs() + 1.0).sum(1), (t * torch.exp(t)).sum(1),
        torch.relu(torch.sinh(x * 0.5)).sum(1), torch.cosh(t).amax(1),
    ]
    return torch.stack(outs, dim=1)


def main() -> None:
    device = pick_device()
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=8192 if device == "cuda" else 128)
    n = ap.parse_args().size
    torch.manual_seed(0)
    x = torch.randn(n, n, device=device)
    out = torch.compile(branches)(x)
    err = (out - branches(x)).abs().max().item()
    print(f"spill_branches on {device}, size {n}: max |compiled - eager| = {err:.2e}")


if __name__ == "__main__":
    main()
