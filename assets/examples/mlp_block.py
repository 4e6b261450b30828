"""LayerNorm + gated MLP block (forward and backward): pointwise, reduction and mm fusion.

Runs on CUDA when present (FUSIONVIZ_DEVICE=cpu forces the CPU), else on the CPU.
"""

import os

import torch
import torch.nn.functional as F


def pick_device() -> str:
    wanted = os.environ.get("FUSIONVIZ_DEVICE", "auto")
    if wanted == "cpu" or not torch.cuda.is_available():
        return "cpu"
    return "cuda"


class GatedMLPBlock(torch.nn.Module):
    def __init__(self, dim: int, hidden: int) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.gate = torch.nn.Linear(dim, hidden, bias=False)
        self.up = torch.nn.Linear(dim, hidden, bias=False)
        self.down = torch.nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        h = self.norm(x)
        h = F.silu(self.gate(h)) * self.up(h)
        return x + self.down(h)


def main() -> None:
    device = pick_device()
    big = device == "cuda"
    dim, hidden, tokens = (1024, 4096, 8192) if big else (64, 256, 128)
    torch.manual_seed(0)
    model = GatedMLPBlock(dim, hidden).to(device)
    x = torch.randn(tokens, dim, device=device, requires_grad=True)
    compiled = torch.compile(model)
    out = compiled(x)
    out.sum().backward()
    print(f"mlp_block on {device}: out {tuple(out.shape)}, grad norm {x.grad.norm():.3f}")


if __name__ == "__main__":
    main()
