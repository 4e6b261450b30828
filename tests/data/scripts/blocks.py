"""Three residual blocks (LayerNorm, Linear, ReLU) in a ModuleList: a train step, for
the module paths of scheduler nodes, forward and backward."""

import torch
from torch import nn


class Block(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return x + torch.relu(self.fc(self.ln(x)))


class Model(nn.Module):
    def __init__(self, dim: int = 32) -> None:
        super().__init__()
        self.h = nn.ModuleList(Block(dim) for _ in range(3))

    def forward(self, x):
        for block in self.h:
            x = block(x)
        return x


torch.manual_seed(0)
model = torch.compile(Model())
model(torch.randn(8, 32)).sum().backward()
