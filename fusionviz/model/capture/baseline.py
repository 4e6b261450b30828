"""The eager baseline a user means: the graph Dynamo captured, run without compiling.

``compile_fx`` (Inductor's backend entry) receives the GraphModule Dynamo traced from
the user's code, before AOTAutograd and decompositions. The function it returns is
wrapped: after its first call, that GraphModule runs eagerly on copies of the same
inputs: its forward, and where the call built an autograd graph, the autograd
backward of its outputs. They are timed as the compiled side is (wall time per call;
on the GPU also device time, from the CUDA profiler) and set against the compiled
forward and backward graphs of the same compile id.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass, field, replace

import torch

from fusionviz.model.capture.eager_program import grad_targets
from fusionviz.model.capture.state_guard import StateGuard
from fusionviz.model.capture.timing import (
    clone_inputs,
    median,
    preserved_rng,
    quiet_children,
    spread,
)
from fusionviz.model.trace import Timing

REPEATS = 10
WARMUP = 2
PROFILED_CALLS = 3


@dataclass
class EagerTimes:
    """Samples of one side (forward or backward) of a Dynamo graph run eagerly."""

    wall: list[float] = field(default_factory=list)
    device: list[float] = field(default_factory=list)

    def onto(self, timing: Timing, source: str) -> Timing:
        """``timing`` with this eager side as its eager baseline."""
        main = self.device or self.wall
        return replace(
            timing, eager_ms=median(main), eager_spread=spread(main),
            eager_wall_ms=median(self.wall), eager_wall_spread=spread(self.wall),
            eager_device_ms=median(self.device), eager_source=source)


@dataclass
class Baseline:
    """What was measured for one compile id (or why not)."""

    forward: EagerTimes | None = None
    backward: EagerTimes | None = None
    why_not: str = ""

    def apply(self, timing: Timing | None, kind: str) -> Timing | None:
        """The compiled graph's timing with its eager counterpart (``kind``: the graph's
        forward | backward | inference), or the reason there is none."""
        if timing is None:
            return None
        side = self.backward if kind == "backward" else self.forward
        if side is not None and (side.wall or side.device):
            what = "autograd backward" if kind == "backward" else "forward"
            return side.onto(timing, f"Dynamo graph, eager {what}")
        why = self.why_not or _why_no_side(kind, self.backward)
        return replace(timing, eager_ms=None, eager_spread=(), eager_wall_ms=None,
                       eager_wall_spread=(), eager_device_ms=None,
                       eager_source=f"none: {why}")


def _why_no_side(kind: str, backward: EagerTimes | None) -> str:
    """Why a side has no eager figure though its graph ran (no error to name)."""
    if kind != "backward":
        return "its Dynamo graph was never called with real tensors"
    if backward is None:
        return ("the Dynamo graph's first call built no autograd graph (no input required "
                "grad, or grad mode was off), so its backward was not run eagerly")
    return ("run eagerly, the Dynamo graph's outputs reached no tensor that requires grad: "
            "no autograd backward to time")


def program_baseline(timing: Timing | None, kind: str, entry) -> Timing | None:
    """``timing`` with the user's own program run eagerly (``entry``: an ``Entry`` whose
    first call compiled this graph's frame alone) as its eager baseline; the Dynamo
    graph's eager figures stay beside it (``dynamo_eager_*``)."""
    side = entry.eager_backward if kind == "backward" else entry.eager_forward
    if timing is None or side is None or not (side.wall or side.device):
        return timing
    main = list(side.device or side.wall)
    what = "autograd backward" if kind == "backward" else "forward"
    return replace(
        timing, dynamo_eager_ms=timing.eager_ms, dynamo_eager_wall_ms=timing.eager_wall_ms,
        dynamo_eager_device_ms=timing.eager_device_ms,
        eager_ms=median(main), eager_spread=spread(main),
        eager_wall_ms=median(list(side.wall)), eager_wall_spread=spread(list(side.wall)),
        eager_device_ms=median(list(side.device)),
        eager_source=f"your program, eager {what} ({entry.name})")


def wrap_compiled(compiled, gm, on_first_call):
    """``compiled`` (what compile_fx returned) calling ``on_first_call(gm, inputs,
    grad_enabled)`` after its first call, with a copy of that call's inputs.

    Its calling convention is kept: Dynamo calls it with the inputs as arguments, or
    (for flattened inputs) with one list of them that it empties."""
    state = {"done": False}

    @functools.wraps(compiled)
    def run(*args, **kwargs):
        flat = args[0] if len(args) == 1 and isinstance(args[0], list) else args
        if state["done"] or fake_call(flat):
            return compiled(*args, **kwargs)
        state["done"] = True
        inputs, grad = clone_inputs(flat, keep_grad=True), torch.is_grad_enabled()
        out = compiled(*args, **kwargs)
        on_first_call(gm, inputs, grad)
        return out

    return run


def fake_call(values) -> bool:
    """A call on FakeTensors: Dynamo's DDP optimizer runs each compiled piece once on
    them, while compiling, to get the next piece's inputs. Not the first real call:
    timed, it measured nothing (a "0.000 ms" eager figure)."""
    try:
        from torch._subclasses.fake_tensor import FakeTensor
    except ImportError:  # no fake tensors in this torch
        return False
    return any(isinstance(v, FakeTensor) for v in values)


def measure_eager(gm, inputs, grad_enabled: bool, cuda: bool) -> Baseline:
    """Time ``gm`` eagerly: forward, and the autograd backward of its outputs when the
    call built an autograd graph. The RNG is left as it was."""
    if not cuda:
        quiet_children()  # compile workers still busy would be timed with the calls
    guard = StateGuard([gm])  # the graph may hold the user's tensors (an optimizer's)
    with preserved_rng():
        needs_grad = grad_enabled and any(
            isinstance(a, torch.Tensor) and a.requires_grad for a in inputs)
        forward, backward = EagerTimes(), EagerTimes() if needs_grad else None
        try:
            with torch.set_grad_enabled(grad_enabled):
                try:
                    with guard.watch():  # keeps what the graph writes into before it does
                        _step(gm, inputs, backward is not None, cuda)
                except Exception:  # noqa: BLE001 - an op the dispatch mode cannot see
                    guard.keep_all()
                    _step(gm, inputs, backward is not None, cuda)
                for _ in range(WARMUP - 1):
                    _step(gm, inputs, backward is not None, cuda)
                for _ in range(REPEATS):
                    f, b = _step(gm, inputs, backward is not None, cuda)
                    forward.wall.append(f)
                    if backward is not None and b is not None:
                        backward.wall.append(b)
                if cuda:
                    _profile(gm, inputs, forward, backward)
        finally:
            guard.restore()
    return Baseline(forward, backward)


def _backward(out) -> bool:
    """The gradients of ``out`` with respect to the leaves it reaches, taken without
    accumulating into any ``.grad`` (the graph may hold the user's parameters)."""
    outs, leaves = grad_targets(out)
    if outs and leaves:
        torch.autograd.grad(outs, leaves, [torch.ones_like(o) for o in outs],
                            allow_unused=True)
    return bool(outs and leaves)


def _sync(cuda: bool) -> None:
    if cuda:
        torch.cuda.synchronize()


def _step(gm, inputs, with_backward: bool, cuda: bool) -> tuple[float, float | None]:
    args = clone_inputs(inputs, keep_grad=True)
    _sync(cuda)
    t0 = time.perf_counter()
    out = gm(*args)
    _sync(cuda)
    t1 = time.perf_counter()
    if not with_backward:
        return (t1 - t0) * 1e3, None
    _sync(cuda)
    t2 = time.perf_counter()
    if not _backward(out):
        return (t1 - t0) * 1e3, None
    _sync(cuda)
    return (t1 - t0) * 1e3, (time.perf_counter() - t2) * 1e3


def _profile(gm, inputs, forward: EagerTimes, backward: EagerTimes | None) -> None:
    """Device time per call from the CUDA profiler: of the forward alone, then of forward
    and backward (the backward runs on autograd's own threads, outside any range of
    this one, so its share is the difference of the two totals)."""
    forward.device.append(_device_ms(gm, inputs, with_backward=False))
    if backward is not None and backward.wall:  # no wall sample: the backward never ran
        both = _device_ms(gm, inputs, with_backward=True)
        backward.device.append(max(both - forward.device[-1], 0.0))


def _device_ms(gm, inputs, with_backward: bool) -> float:
    """Device time (all kernels and copies) per call, over PROFILED_CALLS calls whose
    inputs were copied before profiling."""
    from torch.profiler import ProfilerActivity, profile

    calls = [clone_inputs(inputs, keep_grad=True) for _ in range(PROFILED_CALLS)]
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        for args in calls:
            out = gm(*args)
            if with_backward:
                _backward(out)
        torch.cuda.synchronize()
    device = torch.autograd.DeviceType.CUDA
    total_us = sum(e.time_range.elapsed_us() for e in prof.events()
                   if getattr(e, "device_type", None) == device)
    return total_us / 1e3 / PROFILED_CALLS
