"""Compile time with fusionviz's capture hooks ÷ plain torch.compile, side by side.

Both run in this one process with Inductor's caches off and a fresh cache directory,
alternating plain and captured compiles so drift hits both alike. Target: ≤ 1.05.

    python benchmarks/capture_overhead.py [--repeats 5] [--device cpu|cuda]
        [--workloads mlp_block hub_branches gpt2]

Timing runs are excluded: the in-process capture records with measure_runtime off,
so the ratio is the cost of the recording hooks in the compile. ``gpt2`` is the
12-layer GPT-2-size train step of ``benchmarks/workloads/gpt2_train.py`` (its first
step: compiling the forward and the backward graph).
"""

from __future__ import annotations

import argparse
import contextlib
import runpy
import statistics
import tempfile
import time
from pathlib import Path

import torch
from torch._inductor.utils import fresh_inductor_cache

from fusionviz.model.capture.inprocess import capturing

EXAMPLES = Path(__file__).resolve().parents[1] / "assets" / "examples"
WORKLOADS = Path(__file__).resolve().parent / "workloads"


class _GPT2Step:
    """A fresh GPT-2 train step per compile (model and batch built outside the timing)."""

    def __init__(self, device: str) -> None:
        self.make_step = runpy.run_path(str(WORKLOADS / "gpt2_train.py"))["make_step"]
        self.device = device

    def __call__(self):
        return self.make_step(self.device, compiled=True)


def workloads(device: str, names=("mlp_block", "hub_branches")):
    """(name, fn, args) of the bundled examples, built without running their main()."""
    mlp = runpy.run_path(str(EXAMPLES / "mlp_block.py"))
    hub = runpy.run_path(str(EXAMPLES / "hub_branches.py"))
    torch.manual_seed(0)
    block = mlp["GatedMLPBlock"](256, 1024).to(device)
    x = torch.randn(512, 256, device=device, requires_grad=True)

    def train_step(model, inp):
        model(inp).sum().backward()

    n = 1024 if device == "cuda" else 256
    every = {
        "mlp_block": ("mlp_block fwd+bwd", block, x, train_step),
        "hub_branches": ("hub_branches", hub["hub_model"],
                         (torch.randn(n, n, device=device), torch.randn(n, device=device)), None),
        "gpt2": ("gpt2 train step", _GPT2Step(device), (), "built"),
    }
    return [every[name] for name in names]


def compile_once(fn, args, step, capture: bool) -> float:
    torch._dynamo.reset()
    with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True):
        compiled = fn() if step == "built" else torch.compile(fn)  # built: compiles itself
        with tempfile.TemporaryDirectory() as d:
            ctx = capturing(str(Path(d) / "t.json")) if capture else contextlib.nullcontext()
            with ctx:
                t0 = time.perf_counter()
                if step == "built":
                    compiled()
                elif step:
                    step(compiled, *args)
                else:
                    compiled(*args)
                if torch.cuda.is_available():
                    torch.cuda.synchronize()
                return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument("--workloads", nargs="+", default=["mlp_block", "hub_branches"],
                    choices=["mlp_block", "hub_branches", "gpt2"])
    opts = ap.parse_args()
    print(f"torch {torch.__version__} on {opts.device}; {opts.repeats} alternating repeats each")
    print(f"{'workload':<20} {'plain s':>9} {'captured s':>11} {'paired ratio':>13} {'min ratio':>10}")
    ratios = []
    for name, fn, args, step in workloads(opts.device, opts.workloads):
        args = args if isinstance(args, tuple) else (args,)
        compile_once(fn, args, step, capture=False)  # warm the process (imports, first codegen)
        plain, captured = [], []
        for k in range(opts.repeats):
            plain.append(compile_once(fn, args, step, capture=False))
            captured.append(compile_once(fn, args, step, capture=True))
            print(f"  {name} pair {k + 1}: plain {plain[-1]:.3f} s, captured "
                  f"{captured[-1]:.3f} s, ratio {captured[-1] / plain[-1]:.3f}", flush=True)
        p, c = statistics.median(plain), statistics.median(captured)
        paired = statistics.median(x / y for x, y in zip(captured, plain))
        best = min(captured) / min(plain)  # least disturbed run of each: least noise
        ratios.append(paired)
        print(f"{name:<20} {p:9.3f} {c:11.3f} {paired:13.3f} {best:10.3f}")
    verdict = "meets" if max(ratios) <= 1.05 else "MISSES"
    print(f"worst median ratio {max(ratios):.3f}: {verdict} the ≤ 1.05 target")


if __name__ == "__main__":
    main()
