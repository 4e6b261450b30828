"""A compiled DDP train step whose buckets are small: Dynamo's DDP optimizer splits the
one graph it traces into a piece per bucket, and Inductor compiles each piece (forward
and backward) on its own. Run under torchrun (2 ranks; gloo on the CPU, NCCL with a
GPU per rank); it tears down as ``_train_mlp.finish`` does (pytorch/pytorch#56297)."""

import torch
from _train_mlp import finish, start, train
from torch.nn.parallel import DistributedDataParallel


class Stack(torch.nn.Module):
    def __init__(self, width: int = 512, depth: int = 4) -> None:
        super().__init__()
        self.layers = torch.nn.ModuleList(torch.nn.Linear(width, width) for _ in range(depth))

    def forward(self, x):
        for layer in self.layers:
            x = torch.nn.functional.gelu(layer(x))
        return x


if __name__ == "__main__":
    rank, device, cuda = start()
    # 1 MB buckets (DDP's first bucket is 1 MB too): each 512x512 Linear fills one;
    # 3 steps: the capture profiles the 2nd whole (Trace.step, from the 3rd's start)
    train(DistributedDataParallel(Stack().to(device), bucket_cap_mb=1,
                                  device_ids=[rank] if cuda else None), device, rank,
          width=512, steps=3)
    finish()  # the DDP module, passed as a temporary, is gone by now
