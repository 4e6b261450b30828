"""A small MLP forward, Linear 512->2048, GELU, Linear 2048->512, on 256x512, no_grad."""

import torch
from _timeit import run

if __name__ == "__main__":
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 2048), torch.nn.GELU(), torch.nn.Linear(2048, 512)
    ).eval()
    x = torch.randn(256, 512)
    with torch.no_grad():
        run(model, torch.compile(model), x)
