"""Three compiled callables whose eager baseline must be the program's own eager run.

1. ``Branchy``: its forward does much more work when it is NOT being compiled
   (``torch.compiler.is_compiling()``): the program's eager time is that heavy path,
   while the graph Dynamo captured holds the light one.
2. ``Block``: a small pre-norm transformer block (LayerNorm, SDPA attention, MLP),
   trained forward and backward: every eager kernel of it maps to compiled kernels.
3. A BatchNorm model in train mode and a compiled Adam step: the RESULT line (exact
   bytes of the parameters, running statistics and a draw of the RNG afterwards) must
   be the same with and without capture.
4. ``same``: a function called with one tensor twice (as HF models get ``input_ids``
   and ``labels``): Dynamo guards on that aliasing, so the capture's extra calls must
   keep it, or the function is compiled again.
"""

import hashlib

import torch
import torch.nn.functional as F  # noqa: N812
from torch import nn


class Branchy(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(256, 256)
        self.w = nn.Parameter(torch.randn(256, 256) / 16)

    def forward(self, x):
        y = self.lin(x)
        # eager only: 80 more matmuls (about 15 times the compiled call's cost, so that
        # the test can tell them apart on a 2-core machine running three test workers)
        if not torch.compiler.is_compiling():
            for _ in range(80):
                y = torch.tanh(y @ self.w)
        return y.relu()


class Block(nn.Module):
    def __init__(self, d: int = 64, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class Norm(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1, self.bn, self.l2 = nn.Linear(32, 64), nn.BatchNorm1d(64), nn.Linear(64, 8)

    def forward(self, x):
        return self.l2(torch.relu(self.bn(self.l1(x))))


def digest(*tensors) -> str:
    h = hashlib.sha256()
    for t in tensors:
        h.update(t.detach().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def main() -> None:
    torch.manual_seed(0)
    branchy = torch.compile(Branchy())
    with torch.no_grad():
        branchy(torch.randn(64, 256))

    block = torch.compile(Block())
    block(torch.randn(2, 16, 64)).sum().backward()

    model = Norm()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    compiled = torch.compile(model)

    @torch.compile
    def step():
        opt.step()

    for _ in range(3):
        compiled(torch.randn(16, 32)).square().mean().backward()
        step()
        opt.zero_grad()
    @torch.compile
    def same(a, b):
        return (a * b).sum()

    x = torch.randn(8, 8)
    same(x, x)
    same(x, x)

    state = [p for p in model.parameters()] + [model.bn.running_mean, model.bn.running_var]
    print("RESULT", digest(*state), int(model.bn.num_batches_tracked), torch.rand(1).item())


if __name__ == "__main__":
    main()
