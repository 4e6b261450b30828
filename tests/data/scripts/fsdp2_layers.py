"""A compiled FSDP2 train step of a small model of three layers of one class, each
``fully_shard``-ed, under torchrun (2 ranks; gloo on the CPU): FSDP2's hooks around
each layer are ``torch.compiler.disable``d, so the model's loop over the layers runs
eagerly (Dynamo skips its frame) and each layer's ``forward`` is a frame of its own,
one graph reused by the layers its guards accept."""

import torch
from _train_mlp import finish, start, train
from torch.distributed.fsdp import fully_shard


class Layer(torch.nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, width)

    def forward(self, x):
        return x + torch.nn.functional.gelu(self.lin(x))


class Stack(torch.nn.Module):
    def __init__(self, width: int = 64) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(Layer(width) for _ in range(3))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


if __name__ == "__main__":
    rank, device, _cuda = start()
    model = Stack().to(device)
    for layer in model.layers:
        fully_shard(layer)
    fully_shard(model)
    train(model, device, rank, steps=3)  # the capture profiles the 2nd (Trace.step)
    del model
    finish()
