"""The passes that reorder scheduler nodes after fusion for compute/communication
overlap, recorded as ``trace.Reorder`` steps.

Inductor's ``Scheduler.__init__`` calls ``comms.reorder_compute_and_comm_for_overlap``
when ``config.reorder_for_compute_comm_overlap`` is on; it runs each pass of
``config.reorder_for_compute_comm_overlap_passes`` in turn (a built-in pass by name,
e.g. ``sink_waits_iterative``, or a user's callable). For the duration of that call the
list is swapped for the same passes, each wrapped to record the node order before and
after it: the passes, their order and their results are unchanged (a pass that returns
an iterator hands Inductor a list of the same nodes, which Inductor reads once anyway).
Only the main scheduler of the graph being recorded is followed: the schedulers of its
subgraphs (``torch.cond`` branches, ``invoke_subgraph``) run the passes too.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable

from fusionviz.model.capture.nodes import members
from fusionviz.model.capture.patcher import Patcher
from fusionviz.model.trace import Reorder

HOOK = "torch._inductor.comms.reorder_compute_and_comm_for_overlap"


def install(p: Patcher, current: Callable[[], object]) -> None:
    """Wrap the overlap reordering; ``current()`` is the GraphRecord being compiled."""
    try:
        from torch._inductor import comms, config
    except Exception:  # noqa: BLE001 - a torch without it: listed as missing
        comms = config = None
    if config is not None and not hasattr(config, "reorder_for_compute_comm_overlap_passes"):
        comms = None

    def factory(orig):
        def reorder(snodes, *args, **kwargs):
            g = current()
            if g is None or not _of_scheduler(snodes, getattr(g, "scheduler", None)):
                return orig(snodes, *args, **kwargs)
            passes = list(config.reorder_for_compute_comm_overlap_passes)
            steps = [_recording(p, pass_, comms, g) for pass_ in passes]
            with config.patch(reorder_for_compute_comm_overlap_passes=steps):
                return orig(snodes, *args, **kwargs)

        return reorder

    p.wrap(comms, "reorder_compute_and_comm_for_overlap", factory, HOOK)


def _of_scheduler(snodes, scheduler) -> bool:
    """Whether ``snodes`` are the recorded graph's own scheduler's (not a subgraph's)."""
    try:
        return scheduler is not None and bool(snodes) and \
            getattr(snodes[0], "scheduler", None) is scheduler
    except Exception:  # noqa: BLE001 - an unexpected sequence: leave it alone
        return False


def _recording(p: Patcher, pass_, comms, g):
    """``pass_`` as Inductor would call it, recording into ``g.reorders``."""
    fn = getattr(comms, pass_, None) if isinstance(pass_, str) else pass_
    if not callable(fn):
        return pass_  # Inductor's own check reports it, as without fusionviz
    return _RecordedPass(p, pass_, fn, pass_ if isinstance(pass_, str) else _name(fn), g)


def _original(pass_):
    """What a recorded pass pickles as: the pass it wraps (the config stays portable)."""
    return pass_


class _RecordedPass:
    """A pass that records the order before and after it; calls it unchanged."""

    def __init__(self, p: Patcher, original, fn, name: str, g) -> None:
        self.p, self.original, self.fn, self.name, self.g = p, original, fn, name, g

    def __reduce__(self):
        return _original, (self.original,)

    def __call__(self, order, *args, **kwargs):
        if not isinstance(order, list | tuple):  # an earlier pass gave an iterator
            order = list(order)
        before = self.p.guard("reorder pass (before)", _order, order)
        t0 = time.perf_counter()
        try:
            out = self.fn(order, *args, **kwargs)
        except BaseException as e:
            self.p.guard("reorder pass", _add, self.g, self.name, before, (), t0,
                         f"{type(e).__name__}: {e}")
            raise
        if out is not None and not isinstance(out, list | tuple):
            out = list(out)  # read once here, handed on as the same nodes
        self.p.guard("reorder pass", lambda: _add(self.g, self.name, before, _order(out),
                                                   t0, ""))
        return out


def _order(snodes) -> tuple[tuple[str, ...], ...]:
    return tuple(members(n) for n in snodes)


def _add(g, name: str, before, after, t0: float, error: str) -> None:
    g.reorders.append(Reorder(index=len(g.reorders) + 1, name=name,
                              order_before=before or (), order_after=after,
                              wall_s=time.perf_counter() - t0, error=error[:2000]))


def _name(fn) -> str:
    """A pass's name, the same on every rank: no object addresses."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if not hasattr(fn, "__qualname__"):  # a callable object: its class
        fn = type(fn)
    module = getattr(fn, "__module__", "") or ""
    qual = getattr(fn, "__qualname__", "") or getattr(fn, "__name__", "") or "pass"
    return f"{module}.{qual}" if module and module != "builtins" else qual
