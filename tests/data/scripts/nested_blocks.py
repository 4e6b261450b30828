"""A small model with four levels of nn.Module nesting and four repeated blocks
(h.k.attn.qkv): a compiled train step, for module boxes and folding on the CPU."""

import torch
from torch import nn


class Mix(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        return self.proj(torch.softmax(q * k, dim=-1) * v)


class MLP(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(dim, 2 * dim)
        self.fc2 = nn.Linear(2 * dim, dim)

    def forward(self, x):
        return self.fc2(torch.nn.functional.gelu(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.ln1, self.attn = nn.LayerNorm(dim), Mix(dim)
        self.ln2, self.mlp = nn.LayerNorm(dim), MLP(dim)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class Model(nn.Module):
    def __init__(self, dim: int = 32, layers: int = 4) -> None:
        super().__init__()
        self.embed = nn.Linear(16, dim)
        self.h = nn.ModuleList(Block(dim) for _ in range(layers))
        self.head = nn.Linear(dim, 8)

    def forward(self, x):
        x = self.embed(x)
        for block in self.h:
            x = block(x)
        return self.head(x)


torch.manual_seed(0)
model = torch.compile(Model())
model(torch.randn(8, 16)).sum().backward()
print("ok")
