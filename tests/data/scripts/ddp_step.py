"""A compiled DDP train step of a small MLP: run it under torchrun (2 ranks; gloo on
the CPU, NCCL where each rank has a GPU). Dynamo's DDP optimizer splits the graph at
bucket boundaries; DDP's own all-reduce runs in its hooks, between compiled graphs."""

from _train_mlp import MLP, finish, start, train
from torch.nn.parallel import DistributedDataParallel

if __name__ == "__main__":
    rank, device, cuda = start()
    train(DistributedDataParallel(MLP().to(device), device_ids=[rank] if cuda else None),
          device, rank)
    finish()  # the DDP module, passed as a temporary, is gone by now
