"""Runs eager PyTorch only: there is nothing for Inductor to compile."""

import torch

print((torch.randn(4, 4) @ torch.randn(4, 4)).sum().item())
