"""Which aten op and which module ran each kernel of an eager call (from the profiler).

While the eager calls are profiled, every module of the user's model runs inside a
``record_function`` range named ``MODULE_RANGE + path`` (global forward hooks, on for
that run only), and each call's forward inside ``FORWARD_RANGE``. A device kernel is
linked by the profiler to the CPU op that launched it; walking up from that op gives
the outermost aten op and the module. The backward runs on autograd's threads, under
``autograd::engine::evaluate_function: <Node>`` ranges whose sequence number is the
forward op's that made the node: that forward op's module is the backward kernel's.
On the CPU the "kernels" are the aten ops, each with its own CPU time (its children's
left out).
"""

from __future__ import annotations

from collections import defaultdict
from contextlib import contextmanager

import torch

from fusionviz.model.trace import EagerKernel

MODULE_RANGE = "fusionviz.module:"
FORWARD_RANGE = "fusionviz::forward"
CALL_RANGE = "fusionviz::call"
SETUP_RANGE = "fusionviz::setup"  # fusionviz's own work inside a call (not counted)
_BACKWARD_NODE = "autograd::engine::evaluate_function: "


@contextmanager
def module_ranges(roots):
    """Every module reachable from ``roots`` runs inside a range named by its path
    (its path in the first root that holds it; the roots' own path is "")."""
    paths: dict[int, tuple[str, str]] = {}
    for root in roots:
        if isinstance(root, torch.nn.Module):
            for path, m in root.named_modules(remove_duplicate=False):
                paths.setdefault(id(m), (path, type(m).__name__))
    stack: list = []

    def pre(module, _args):
        entry = paths.get(id(module))
        if entry is not None:
            rf = torch.profiler.record_function(f"{MODULE_RANGE}{entry[0]}|{entry[1]}")
            rf.__enter__()
            stack.append((module, rf))

    def post(module, _args, _out):
        if stack and stack[-1][0] is module:
            stack.pop()[1].__exit__(None, None, None)

    hooks = torch.nn.modules.module
    handles = [hooks.register_module_forward_pre_hook(pre),
               hooks.register_module_forward_hook(post)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()
        while stack:  # a forward that raised left its range open
            stack.pop()[1].__exit__(None, None, None)


def _module(e) -> tuple[str, str] | None:
    while e is not None:
        if e.name.startswith(MODULE_RANGE):
            path, _, cls = e.name[len(MODULE_RANGE):].partition("|")
            return path, cls
        e = e.cpu_parent
    return None


def _ancestors(e):
    while e is not None:
        yield e
        e = e.cpu_parent


def _outer_op(e) -> str:
    """The outermost aten op (or autograd node) above and including ``e``."""
    best = e.name
    for a in _ancestors(e):
        if a.name.startswith(_BACKWARD_NODE):
            return a.name[len(_BACKWARD_NODE):]
        if a.name.startswith("aten::"):
            best = a.name
        elif a is not e:
            break
    return best


def attribute(events, calls: int, cuda: bool) -> tuple[EagerKernel, ...]:
    """Eager kernels per call of ``calls`` profiled calls, heaviest first."""
    cpu = [e for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CPU]
    by_seq: dict[int, tuple[str, str]] = {}  # forward op's sequence number -> module
    for e in cpu:
        if e.name.startswith("aten::") and getattr(e, "sequence_nr", -1) >= 0:
            mod = _module(e)
            if mod is not None and any(a.name == FORWARD_RANGE for a in _ancestors(e)):
                by_seq.setdefault(e.sequence_nr, mod)
    totals: dict[tuple, list[float]] = defaultdict(lambda: [0.0, 0])
    for e in cpu:
        names = {a.name for a in _ancestors(e)}
        if SETUP_RANGE in names or (CALL_RANGE not in names and not any(
                n.startswith(_BACKWARD_NODE) for n in names)):
            continue  # fusionviz's own work (copying inputs, seeding gradients)
        for name, ms in _launched(e, cuda):
            forward = any(a.name == FORWARD_RANGE for a in _ancestors(e))
            mod = _module(e) if forward else _backward_module(e, by_seq)
            path, cls = mod or ("", "")
            key = (name, _outer_op(e), e.name, path, cls,
                   "forward" if forward else "backward")
            totals[key][0] += ms
            totals[key][1] += 1
    out = [EagerKernel(name=k[0], op=k[1], launcher=k[2], module=k[3], module_class=k[4],
                       side=k[5], ms=round(ms / calls, 6), calls=round(n / calls, 3))
           for k, (ms, n) in totals.items()]
    return tuple(sorted(out, key=lambda k: -k.ms))


def _launched(e, cuda: bool):
    """(kernel name, ms) of what the CPU op ``e`` ran itself: its device kernels (GPU),
    or, for an aten op, its own CPU time, its children's left out (CPU)."""
    if cuda:
        for k in getattr(e, "kernels", ()) or ():
            yield k.name, k.duration / 1e3
    elif e.name.startswith("aten::"):
        yield e.name, e.self_cpu_time_total / 1e3


def _backward_module(e, by_seq) -> tuple[str, str] | None:
    for a in _ancestors(e):
        if a.name.startswith(_BACKWARD_NODE):
            return by_seq.get(getattr(a, "sequence_nr", -1))
    return None


def per_call_device(events, calls: int) -> tuple[list[float], list[float], float]:
    """(forward device ms of each call, backward device ms of each call, kernels launched
    per call) from a profile of ``calls`` calls, each inside a ``CALL_RANGE`` range on
    this thread, its forward inside ``FORWARD_RANGE``: a kernel belongs to the call
    whose range was open when its CPU op started."""
    cpu = [e for e in events if getattr(e, "device_type", None) == torch.autograd.DeviceType.CPU]
    spans = sorted((e.time_range.start, e.time_range.end) for e in cpu if e.name == CALL_RANGE)
    fwd, bwd, launches = [0.0] * len(spans), [0.0] * len(spans), 0
    for e in cpu:
        kernels = getattr(e, "kernels", ()) or ()
        if not kernels or any(a.name == SETUP_RANGE for a in _ancestors(e)):
            continue
        i = next((j for j, (s, t) in enumerate(spans) if s <= e.time_range.start <= t), None)
        if i is None:
            continue
        ms = sum(k.duration for k in kernels) / 1e3
        launches += len(kernels)
        if any(a.name == FORWARD_RANGE for a in _ancestors(e)):
            fwd[i] += ms
        else:
            bwd[i] += ms
    return fwd, bwd, launches / max(len(spans), 1)
