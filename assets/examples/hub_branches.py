"""A shared hub tensor feeding six competing branches (the benchmark_fusion seed workload).

Reductions over different axes and transcendental branches (tanh, sin*cos, relu,
exp) all read one hub: Inductor must choose which consumers to fuse with the hub's
producer, and benchmark_fusion may veto fusions for register spilling.
Runs on CUDA when present (FUSIONVIZ_DEVICE=cpu forces the CPU). ``--size N`` sets
the hub's side (default 4096 on CUDA, 256 on the CPU).
"""

import argparse
import os

import torch


def pick_device() -> str:
    wanted = os.environ.get("FUSIONVIZ_DEVICE", "auto")
    if wanted == "cpu" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def hub_model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    hub = torch.tanh(x * w + 1.0)  # the shared hub
    b1 = hub.sum(dim=0)  # column reduction
    b2 = hub.amax(dim=1)  # row reduction
    b3 = torch.sin(hub) * torch.cos(hub)
    b4 = torch.relu(hub - 0.5).mean(dim=1)
    b5 = torch.exp(-hub * hub).sum(dim=1)
    b6 = (hub * b1).tanh()  # depends on the column reduction of the hub
    return (b3 + b6).sum(dim=1) + b2 + b4 + b5


def main() -> None:
    device = pick_device()
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=4096 if device == "cuda" else 256)
    n = ap.parse_args().size
    torch.manual_seed(0)
    x = torch.randn(n, n, device=device)
    w = torch.randn(n, device=device)
    compiled = torch.compile(hub_model)
    out = compiled(x, w)
    ref = hub_model(x, w)
    err = (out - ref).abs().max().item()
    print(f"hub_branches on {device}, size {n}: max |compiled - eager| = {err:.2e}")


if __name__ == "__main__":
    main()
