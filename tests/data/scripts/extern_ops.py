"""Extern calls whose facts fusionviz records, compiled for inference on the GPU where
there is one, else the CPU: a Linear with bias (addmm) and one without (mm), bmm,
baddbmm, a convolution, a grouped transposed one and causal attention (``Ops``); and a
model under bfloat16 autocast with one Linear in a region where autocast is off, left
in float32 (``Mixed``).

Run as a script it compiles both (two graphs); the tests import its classes and sizes
(tests/capture/test_extern_calls.py, tests/model/test_extern_facts.py)."""

import torch
from torch import nn
from torch.nn import functional

TOKENS, BATCH = 32, 4  # rows of the Linears; batch of bmm, baddbmm and the images
IMAGE = (3, 16, 16)  # channels, height, width
HEADS, SEQ, HEAD_DIM = 4, 64, 32


class Ops(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(64, 96)  # addmm
        self.mix = nn.Linear(96, 48, bias=False)  # mm
        self.conv = nn.Conv2d(IMAGE[0], 16, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(16, 8, 2, stride=2, groups=2)

    def forward(self, x, a, b, img, q):
        y = self.mix(self.proj(x))
        c = torch.bmm(a, b)
        d = torch.baddbmm(c, a, b)
        pic = self.up(self.conv(img))
        att = functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        return y, d, pic, att


class Mixed(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.up = nn.Linear(64, 128)
        self.gate = nn.Linear(128, 8)
        self.down = nn.Linear(128, 64)

    def forward(self, x):
        device = x.device.type
        with torch.autocast(device, dtype=torch.bfloat16):
            h = torch.relu(self.up(x))
            with torch.autocast(device, enabled=False):
                g = self.gate(h.float())  # float32: autocast is off in this region
            return self.down(h), g


def inputs() -> tuple:
    """The inputs of ``Ops`` (those of ``Mixed``: the first)."""
    return (torch.randn(TOKENS, 64), torch.randn(BATCH, 24, 40), torch.randn(BATCH, 40, 56),
            torch.randn(BATCH, *IMAGE), torch.randn(BATCH, HEADS, SEQ, HEAD_DIM))


def main() -> None:
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"  # tests/data/*_extern_ops
    args = tuple(a.to(device) for a in inputs())
    with torch.no_grad():
        torch.compile(Ops().to(device))(*args)
        torch.compile(Mixed().to(device))(args[0])


if __name__ == "__main__":
    main()
