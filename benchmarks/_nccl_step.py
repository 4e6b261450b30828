"""What the multi-GPU workloads (``ddp_gpt2.py``, ``fsdp2_llama.py``) share: the NCCL
process group on this rank's GPU, the train steps of a compiled HF causal LM under bf16
autocast, and a teardown that cannot hang (``tests/data/scripts/_train_mlp.finish``)."""

from __future__ import annotations

import argparse
import gc
import os

import torch
import torch.distributed as dist


def start(layers: int) -> tuple[argparse.Namespace, int, torch.device]:
    """(options --layers/--steps, rank, device), the group initialised, seeded."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=layers)
    ap.add_argument("--steps", type=int, default=3)
    opts = ap.parse_args()
    dist.init_process_group("nccl")
    rank = dist.get_rank()
    device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
    torch.cuda.set_device(device)
    torch.manual_seed(0)
    return opts, rank, device


def train(step, params, ids: torch.Tensor, steps: int, rank: int) -> None:
    """``steps`` AdamW steps of ``step(input_ids=ids, labels=ids).loss``; prints the
    last loss. Keeps no reference to the model once it returns."""
    opt = torch.optim.AdamW(params, lr=1e-4)
    for _ in range(steps):
        with torch.autocast("cuda", dtype=torch.bfloat16):
            loss = step(input_ids=ids, labels=ids).loss
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)
    print(f"rank {rank}: loss {loss.item():.5f}", flush=True)


def finish() -> None:
    """The model is gone (the caller dropped it): collect, barrier, then the group."""
    gc.collect()
    dist.barrier()
    dist.destroy_process_group()
