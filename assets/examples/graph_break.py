"""A function with a graph break in the middle: Inductor compiles two separate graphs.

The ``print`` of a tensor value forces Dynamo to split the trace, so the pointwise
chain before it and the softmax after it can never fuse with each other.
Runs on CUDA when present (FUSIONVIZ_DEVICE=cpu forces the CPU).
"""

import os

import torch


def pick_device() -> str:
    wanted = os.environ.get("FUSIONVIZ_DEVICE", "auto")
    if wanted == "cpu" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


def step(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x * 2.0 + 1.0)
    print("checkpoint, mean =", y.mean().item())  # graph break
    z = torch.softmax(y * 0.5, dim=-1)
    return z.sum(dim=0)


def main() -> None:
    device = pick_device()
    torch.manual_seed(0)
    x = torch.randn(512, 256, device=device)
    out = torch.compile(step)(x)
    print(f"graph_break on {device}: out {tuple(out.shape)}")


if __name__ == "__main__":
    main()
