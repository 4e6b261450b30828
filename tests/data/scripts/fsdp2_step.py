"""A compiled FSDP2 (``fully_shard``) train step of a small MLP under torchrun (2 ranks;
gloo on the CPU, NCCL where each rank has a GPU): parameters are sharded across ranks
and gathered around each layer's forward and backward."""

from _train_mlp import MLP, finish, start, train
from torch.distributed.fsdp import fully_shard

if __name__ == "__main__":
    rank, device, _cuda = start()
    model = MLP().to(device)
    for layer in (model.up, model.down):
        fully_shard(layer)
    fully_shard(model)
    train(model, device, rank, steps=3)  # the capture profiles the 2nd (Trace.step)
    del model
    finish()
