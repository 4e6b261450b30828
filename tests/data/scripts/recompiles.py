"""A compiled function called with a new shape, then a new dtype: with dynamic=False
each call fails a guard of the compiles before it and Dynamo compiles the frame again.
"""

import torch


def step(x: torch.Tensor) -> torch.Tensor:
    return torch.relu(x * 2.0 + 1.0).sum(dim=-1)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"  # --device cpu hides the GPU
    fn = torch.compile(step, dynamic=False)
    fn(torch.randn(8, 4, device=device))
    fn(torch.randn(16, 4, device=device))  # size mismatch at index 0: expected 8, actual 16
    fn(torch.randn(16, 4, dtype=torch.float64, device=device))  # dtype: Float, then Double
