"""A row sum whose result a pointwise op reads broadcast over another size: Inductor's
scheduler asks can_fuse(sum, mul) (producer, consumer); Triton's backend checks a
reduction and a pointwise the other way round, so its "cannot fuse" log line names the
pair (mul, sum). Each variant is a compiled function of its own."""

import torch

device = "cuda" if torch.cuda.is_available() else "cpu"
torch.manual_seed(0)
x = torch.randn(64, 256, device=device)
y = torch.randn(3, 64, device=device)


@torch.compile
def broadcast_rows(x, y):
    a = x.sum(dim=1)
    return a[None, :] * y


@torch.compile
def broadcast_cols(x, y):
    a = x.sum(dim=1)
    return (y.t()[:, :, None] * a[:, None, None]).sin()


for f in (broadcast_rows, broadcast_cols):
    out = f(x, y)
    print("RESULT", f.__name__, f"{float(out.sum()):.4f}")
