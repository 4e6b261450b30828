"""The command line the real-model workloads share: a compiled run, or a plain eager profile.

``main(build)`` parses ``--device auto|cpu|cuda --size full|tiny --steps N
--eager-profile OUT.json --modes-wall OUT.json``, seeds with ``torch.manual_seed(0)``,
calls ``build(device, size) -> Workload`` and then either

- runs ``torch.compile(w.module)`` (default options, or ``--compile-mode``) for N steps
  (the default), or
- with ``--eager-profile``, never compiles: times and profiles the plain eager module
  and writes a JSON summary (wall medians, device time per side, kernels per side), or
- with ``--compiled-profile``, compiles with the given Inductor settings and mode and
  writes the device time per step (every kernel, from the profiler; no fusionviz), or
- with ``--modes-wall``, times the module eager, compiled (default mode) and compiled
  with ``mode="reduce-overhead"`` (CUDA graphs), each step's forward and backward
  separately, synchronised, and writes the wall medians.

A train workload's module returns the scalar loss, so the compiled callable's backward is
exactly ``loss.backward()``; an inference workload's module returns the model's output.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F  # noqa: N812 - the usual torch alias
from torch import nn

WARMUP, TIMED, PROFILED = 3, 20, 5


@dataclass
class Workload:
    """One model, its fixed inputs and how a step runs it."""

    module: nn.Module  # train: forward returns the scalar loss
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    train: bool = False
    amp: torch.dtype | None = None  # torch.autocast dtype on the device, or None
    optimizer_factory: Callable | None = None  # params -> optimizer


class LossOf(nn.Module):
    """Wraps a transformers model called with labels: its forward returns ``.loss``."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, *args, **kwargs) -> torch.Tensor:
        return self.model(*args, **kwargs).loss


class ClassifierLoss(nn.Module):
    """Wraps an image classifier: cross-entropy of its logits against ``target``."""

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, images: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(self.model(images), target)


def first_tensor(out):
    """The first tensor of a model output (a tensor, a ModelOutput, a tuple or a dict)."""
    if isinstance(out, torch.Tensor):
        return out
    values = out.values() if isinstance(out, dict) else out
    return next(v for v in values if isinstance(v, torch.Tensor))


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def _forward(w: Workload, fn, device: str):
    """One model call, under autocast when the workload asks for it."""
    amp = (torch.autocast(device_type=device.split(":")[0], dtype=w.amp)
           if w.amp is not None else contextlib.nullcontext())
    with amp:
        return fn(*w.args, **w.kwargs)


def _optimizer(w: Workload):
    factory = w.optimizer_factory if w.train else None
    return factory(w.module.parameters()) if factory is not None else None


def _finish(w: Workload, opt) -> None:
    """The optimizer step (if any), then grads set to None."""
    if opt is not None:
        opt.step()
    (opt or w.module).zero_grad(set_to_none=True)


def run_compiled(w: Workload, device: str, steps: int, mode: str | None = None) -> None:
    cm = torch.compile(w.module, mode=mode) if mode else torch.compile(w.module)
    opt = _optimizer(w)
    value = float("nan")
    for _ in range(steps):
        if w.train:
            loss = _forward(w, cm, device)
            loss.backward()
            _finish(w, opt)
            value = loss.detach()
        else:
            with torch.no_grad():
                value = first_tensor(_forward(w, cm, device)).float().abs().sum()
    _sync(device)
    what = "loss" if w.train else "checksum"
    print(f"done: {steps} steps, {what} {float(value):.4g} (exactly {float(value)!r})")


def _side(evt) -> str:
    """forward, optimizer or backward: the innermost named range above a CPU op."""
    while evt is not None:
        if evt.name == "eager_forward":
            return "forward"
        if evt.name == "optimizer":
            return "optimizer"
        evt = evt.cpu_parent
    return "backward"  # autograd threads: no range of ours above them


def _median_ms(device: str, fn, after=None) -> float:
    """Median wall time of TIMED synchronized calls of ``fn`` (``after`` untimed), in ms."""
    walls = []
    for _ in range(TIMED):
        _sync(device)
        t0 = time.perf_counter()
        fn()
        _sync(device)
        walls.append(time.perf_counter() - t0)
        if after is not None:
            after()
    return 1000.0 * statistics.median(walls)


def eager_profile(w: Workload, device: str, size: str, out_path: str) -> None:
    opt = _optimizer(w)

    def fwd_bwd() -> None:
        out = _forward(w, w.module, device)
        if w.train:
            out.backward()

    def finish() -> None:
        if w.train:
            _finish(w, opt)

    with torch.enable_grad() if w.train else torch.no_grad():
        for _ in range(WARMUP):
            fwd_bwd()
            finish()
        forward_wall = _median_ms(device, lambda: _forward(w, w.module, device))
        step_wall = _median_ms(device, fwd_bwd, after=finish)  # optimizer untimed
        acts = [torch.profiler.ProfilerActivity.CPU]
        if device.startswith("cuda"):
            acts.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=acts) as prof:
            for _ in range(PROFILED):
                with torch.profiler.record_function("eager_forward"):
                    out = _forward(w, w.module, device)
                if w.train:
                    with torch.profiler.record_function("eager_backward"):
                        out.backward()
                    with torch.profiler.record_function("optimizer"):
                        if opt is not None:
                            opt.step()
                    (opt or w.module).zero_grad(set_to_none=True)
                del out
            _sync(device)
    sums = {"forward": 0.0, "backward": 0.0, "optimizer": 0.0}
    kernels: dict[tuple[str, str], list] = {}
    for evt in prof.events():
        # kernels hang on CPU ops; skip our ranges, which may carry their GPU span
        if (evt.device_type != torch.autograd.DeviceType.CPU or not evt.kernels
                or getattr(evt, "is_user_annotation", False)):
            continue
        side = _side(evt)
        for k in evt.kernels:
            sums[side] += k.duration
            if side != "optimizer":
                agg = kernels.setdefault((k.name, side), [0.0, 0])
                agg[0] += k.duration
                agg[1] += 1
    per_step = 1000.0 * PROFILED  # us summed over PROFILED steps -> ms per step
    rows = [{"name": name, "side": side, "ms": us / per_step, "calls": n / PROFILED}
            for (name, side), (us, n) in kernels.items()]
    rows.sort(key=lambda r: r["ms"], reverse=True)
    result = {
        "torch": torch.__version__,
        "device": (torch.cuda.get_device_name() if device.startswith("cuda")
                   else platform.processor() or "cpu"),
        "size": size,
        "train": w.train,
        "amp": str(w.amp) if w.amp is not None else None,
        "forward_device_ms": sums["forward"] / per_step,
        "backward_device_ms": sums["backward"] / per_step,
        "optimizer_device_ms": sums["optimizer"] / per_step,
        "forward_wall_ms": forward_wall,
        "step_wall_ms": step_wall,
        "kernels": rows,
    }
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"eager profile: forward {result['forward_device_ms']:.3f} ms, backward "
          f"{result['backward_device_ms']:.3f} ms device; step wall "
          f"{result['step_wall_ms']:.2f} ms; {len(rows)} kernels -> {out_path}")


MODES = {"eager": None, "compiled": {}, "cudagraphs": {"mode": "reduce-overhead"}}


def modes_wall(w: Workload, device: str, size: str, out_path: str) -> None:
    """Wall time per step of each of ``MODES``: forward and backward timed apart, as
    fusionviz's entry timing does (optimizer step and zero_grad untimed), after
    WARMUP + 2 steps (CUDA graphs record on the second call, replay from the third);
    the modes' steps interleaved, TIMED rounds."""
    opt = _optimizer(w)
    fns = {name: (w.module if kw is None else torch.compile(w.module, **kw))
           for name, kw in MODES.items()}
    walls = {name: ([], []) for name in fns}

    def step(name: str, record: bool) -> None:
        if name == "cudagraphs":
            torch.compiler.cudagraph_mark_step_begin()
        _sync(device)
        t0 = time.perf_counter()
        out = _forward(w, fns[name], device)
        _sync(device)
        t1 = time.perf_counter()
        if w.train:
            out.backward()
            _sync(device)
        t2 = time.perf_counter()
        if record:
            walls[name][0].append(1000.0 * (t1 - t0))
            walls[name][1].append(1000.0 * (t2 - t1))
        del out
        if w.train:
            _finish(w, opt)

    with torch.enable_grad() if w.train else torch.no_grad():
        for name in fns:
            for _ in range(WARMUP + 2):
                step(name, record=False)
        for i in range(TIMED):
            order = list(fns)
            for j in range(len(order)):
                step(order[(i + j) % len(order)], record=True)
    result = {"torch": torch.__version__, "size": size, "train": w.train,
              "device": (torch.cuda.get_device_name() if device.startswith("cuda")
                         else platform.processor() or "cpu")}
    for name, (fwd, bwd) in walls.items():
        result[f"{name}_forward_wall_ms"] = statistics.median(fwd)
        result[f"{name}_backward_wall_ms"] = statistics.median(bwd) if w.train else None
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print("modes wall (forward ms): " + ", ".join(
        f"{n} {result[f'{n}_forward_wall_ms']:.3f}" for n in MODES) + f" -> {out_path}")


def compiled_profile(w: Workload, device: str, settings: list[str], mode: str | None,
                     out_path: str) -> None:
    """Device time per step of the compiled module, with no fusionviz anywhere: the
    Inductor ``settings`` (KEY=VALUE) and ``mode`` applied, WARMUP steps, then BLOCKS
    profiled blocks of PROFILED steps (optimizer step and zero_grad outside the
    profile); every kernel's device time summed, per block (the spread)."""
    import ast

    import torch._inductor.config as inductor_config

    for item in settings:
        key, _, text = item.partition("=")
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = text
        setattr(inductor_config, key, value)
    cm = torch.compile(w.module, **({"mode": mode} if mode else {}))
    opt = _optimizer(w)

    def step() -> None:
        out = _forward(w, cm, device)
        if w.train:
            out.backward()

    blocks = []
    with torch.enable_grad() if w.train else torch.no_grad():
        for _ in range(WARMUP):
            step()
            if w.train:
                _finish(w, opt)
        _sync(device)
        for _ in range(BLOCKS):
            total = 0.0
            for _ in range(PROFILED):
                with torch.profiler.profile(activities=[
                        torch.profiler.ProfilerActivity.CPU,
                        torch.profiler.ProfilerActivity.CUDA]) as prof:
                    step()
                    _sync(device)
                total += sum(k.duration for evt in prof.events()
                             if evt.device_type == torch.autograd.DeviceType.CPU
                             and not getattr(evt, "is_user_annotation", False)
                             for k in evt.kernels)
                if w.train:
                    _finish(w, opt)
            blocks.append(total / 1000.0 / PROFILED)
    result = {"torch": torch.__version__, "settings": settings, "mode": mode,
              "device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
              "step_device_ms": statistics.median(blocks), "blocks_ms": blocks}
    with open(out_path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"compiled profile ({' '.join(settings) or 'defaults'}"
          f"{', mode ' + mode if mode else ''}): {result['step_device_ms']:.3f} ms device "
          f"per step, blocks {', '.join(f'{b:.3f}' for b in blocks)} -> {out_path}")


BLOCKS = 3  # profiled blocks of a compiled profile (its spread)


def main(build: Callable[[str, str], Workload], sizes=("full", "tiny")) -> None:
    ap = argparse.ArgumentParser(description="A real-model workload for fusionviz.")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--size", choices=sizes, default="full")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--eager-profile", metavar="OUT.json", default=None)
    ap.add_argument("--modes-wall", metavar="OUT.json", default=None)
    ap.add_argument("--compiled-profile", metavar="OUT.json", default=None)
    ap.add_argument("--inductor", action="append", default=[], metavar="KEY=VALUE",
                    help="an Inductor setting for --compiled-profile (repeatable)")
    ap.add_argument("--no-cudnn-attention", action="store_true", help="SDPA without its "
                    "cuDNN backend, as on GPUs before Hopper (an A100 never picks it)")
    ap.add_argument("--compile-mode", default=None, help="torch.compile mode "
                    "(the compiled run, --compiled-profile)")
    opts = ap.parse_args()
    device = opts.device
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    if opts.no_cudnn_attention and hasattr(torch.backends.cuda, "enable_cudnn_sdp"):
        torch.backends.cuda.enable_cudnn_sdp(False)
    torch.manual_seed(0)
    w = build(device, opts.size)
    n_params = sum(p.numel() for p in w.module.parameters())
    name = type(getattr(w.module, "model", w.module)).__name__
    print(f"{name} ({opts.size}, {n_params / 1e6:.1f}M parameters, "
          f"{'train' if w.train else 'inference'}) on {device}")
    if opts.eager_profile:
        eager_profile(w, device, opts.size, opts.eager_profile)
    elif opts.modes_wall:
        modes_wall(w, device, opts.size, opts.modes_wall)
    elif opts.compiled_profile:
        compiled_profile(w, device, opts.inductor, opts.compile_mode, opts.compiled_profile)
    else:
        run_compiled(w, device, opts.steps, opts.compile_mode)
