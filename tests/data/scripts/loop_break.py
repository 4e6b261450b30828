"""A compiled model whose loop over its three blocks has a graph break (a print()):
torch 2.13's Dynamo gives up on the whole loop's frame (a graph break in a loop skips
the frame), runs it eagerly, and compiles each block's forward as a frame of its own,
one graph reused by all three blocks."""

import torch


class Block(torch.nn.Module):
    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, width)

    def forward(self, x):
        return x + torch.relu(self.lin(x))


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.blocks = torch.nn.ModuleList(Block() for _ in range(3))

    def forward(self, x):
        for i, block in enumerate(self.blocks):
            x = block(x)
            print("block", i, "done")  # graph break in a loop: the frame runs eagerly
        return x


if __name__ == "__main__":
    torch.manual_seed(0)
    with torch.no_grad():
        print(tuple(torch.compile(Net())(torch.randn(8, 32)).shape))
