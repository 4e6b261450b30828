"""A LayerNorm and gated-MLP block's train step on the CPU, small enough that a replay
of its graphs compiles in seconds: the Advisor pane's measurement tests replay it."""

import torch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(64)
        self.gate = torch.nn.Linear(64, 256, bias=False)
        self.up = torch.nn.Linear(64, 256, bias=False)
        self.down = torch.nn.Linear(256, 64, bias=False)

    def forward(self, x):
        h = self.ln(x)
        return (x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))).sum()


torch.manual_seed(0)
x = torch.randn(128, 64, requires_grad=True)
torch.compile(Block())(x).backward()
print("done")
