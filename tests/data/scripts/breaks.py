"""A compiled function with a graph break: a print() in the middle splits it in two.

Dynamo compiles the code before the print as one graph (the piece that ends at the
break), runs the print eagerly, and compiles the rest as a second frame.
"""

import torch


def step(x: torch.Tensor) -> torch.Tensor:
    y = torch.relu(x * 2.0 + 1.0)
    print("between the two graphs")  # graph break: Dynamo cannot trace print()
    return torch.softmax(y * 0.5, dim=-1).sum(dim=0)


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # --device cpu hides the GPU
    print(tuple(torch.compile(step)(torch.randn(64, 32, device=device)).shape))
