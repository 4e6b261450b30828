"""Runtime of a compiled graph: whole graph, per kernel, and the same graph in eager.

Per-kernel times come from proxies put in place of the module's kernel globals for
a few extra runs: the wrapper's ``call`` looks its kernels up at call time, so no
code generation changes (CUDA events on the GPU, perf_counter on the CPU).
"""

from __future__ import annotations

import statistics
import time
from collections import defaultdict

import torch

from fusionviz.model.capture.eager import eager_graph
from fusionviz.model.capture.kernels import KernelRecord
from fusionviz.model.trace import Timing

WARMUP = 2
MAX_REPEATS = 20
BUDGET_S = 3.0  # stop repeating once a measurement took this long


def clone_inputs(args) -> list:
    """Copies of the graph inputs (strides kept) so repeated runs never touch the user's."""
    out = []
    for a in args:
        if isinstance(a, torch.Tensor):
            c = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
            c.copy_(a)
            out.append(c)
        else:
            out.append(a)
    return out


class _Clock:
    def __init__(self, device: str) -> None:
        self.cuda = device == "cuda" and torch.cuda.is_available()

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def repeat(self, fn) -> tuple[float, int]:
        """Median ms of ``fn`` over up to MAX_REPEATS runs within BUDGET_S."""
        for _ in range(WARMUP):
            fn()
        self.sync()
        times: list[float] = []
        start = time.perf_counter()
        while len(times) < MAX_REPEATS and (time.perf_counter() - start) < BUDGET_S:
            t0 = time.perf_counter()
            fn()
            self.sync()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times), len(times)


class _Recorder:
    """Collects (label, start, end) per launch during one instrumented run."""

    def __init__(self, clock: _Clock) -> None:
        self.clock = clock
        self.spans: list[tuple[str, object, object]] = []

    def timed(self, label: str, fn):
        def run(*args, **kwargs):
            if self.clock.cuda:
                s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                s.record()
                out = fn(*args, **kwargs)
                e.record()
            else:
                s = time.perf_counter()
                out = fn(*args, **kwargs)
                e = time.perf_counter()
            self.spans.append((label, s, e))
            return out

        return run

    def totals(self) -> dict[str, float]:
        self.clock.sync()
        out: dict[str, float] = defaultdict(float)
        for label, s, e in self.spans:
            out[label] += s.elapsed_time(e) if self.clock.cuda else (e - s) * 1e3
        self.spans.clear()
        return out


class _KernelProxy:
    def __init__(self, obj, timed) -> None:
        self._obj, self._timed = obj, timed

    def run(self, *args, **kwargs):  # Triton kernels are launched with .run(...)
        return self._timed(self._obj.run)(*args, **kwargs)

    def __call__(self, *args, **kwargs):  # C++ kernels are plain callables
        return self._timed(self._obj)(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._obj, name)


class _ExternProxy:
    """Stands in for ``extern_kernels``: the k-th call of X is labelled X#k."""

    def __init__(self, ns, recorder: _Recorder) -> None:
        self._ns, self._rec = ns, recorder
        self.counts: dict[str, int] = defaultdict(int)

    def __getattr__(self, name):
        fn = getattr(self._ns, name)
        full = f"extern_kernels.{name}"
        k = self.counts[full]
        self.counts[full] += 1
        return self._rec.timed(f"{full}#{k}", fn)


def per_kernel_ms(module, call, inputs, records: list[KernelRecord], clock: _Clock) -> None:
    """Set ``rec.ms`` for every kernel: median over a few instrumented runs."""
    rec = _Recorder(clock)
    saved = {}
    for r in records:
        if not r.extern and hasattr(module, r.name):
            saved[r.name] = getattr(module, r.name)
            timed = lambda fn, n=r.name: rec.timed(n, fn)  # noqa: E731
            setattr(module, r.name, _KernelProxy(saved[r.name], timed))
    externs = getattr(module, "extern_kernels", None)
    proxy = _ExternProxy(externs, rec) if externs is not None else None
    runs: list[dict[str, float]] = []
    try:
        if proxy is not None:
            module.extern_kernels = proxy
        for _ in range(5):
            if proxy is not None:
                proxy.counts.clear()
            call(list(inputs))
            runs.append(rec.totals())
    finally:
        for name, obj in saved.items():
            setattr(module, name, obj)
        if proxy is not None:
            module.extern_kernels = externs
    runs = runs[1:] or runs  # the first instrumented run may still warm caches
    seen: dict[str, int] = defaultdict(int)
    for r in records:
        label = r.name
        if r.extern:
            label = f"{r.extern}#{seen[r.extern]}"
            seen[r.extern] += 1
        values = [run[label] for run in runs if label in run]
        r.ms = statistics.median(values) if values else None


def measure(module, call, inputs, gm, records, device: str) -> Timing:
    """Whole-graph compiled and eager ms, and per-kernel ms into ``records``."""
    clock = _Clock(device)
    notes = []
    compiled, n = clock.repeat(lambda: call(list(inputs)))
    try:
        per_kernel_ms(module, call, inputs, records, clock)
    except Exception as e:  # noqa: BLE001
        notes.append(f"per-kernel timing failed: {e}")
    eager = diff = None
    if gm is not None:
        try:
            runnable = eager_graph(gm)  # lowering-pattern calls put back as aten ops
            with torch.no_grad():
                eager, _ = clock.repeat(lambda: runnable(*inputs))
                diff = max_abs_diff(call(list(clone_inputs(inputs))),
                                    runnable(*clone_inputs(inputs)))
        except Exception as e:  # noqa: BLE001
            notes.append(f"eager run of the graph failed: {type(e).__name__}: {e}")
    method = "cuda events around each launch" if clock.cuda else "perf_counter around each call"
    return Timing(compiled_ms=compiled, eager_ms=eager, repeats=n, method=method,
                  note="; ".join(notes), max_abs_diff=diff)


def max_abs_diff(compiled, eager) -> float | None:
    """Largest |compiled - eager| over the floating-point outputs both runs returned."""
    if isinstance(eager, torch.Tensor):
        eager = (eager,)
    worst = None
    for c, e in zip(compiled or (), eager or ()):
        if isinstance(c, torch.Tensor) and isinstance(e, torch.Tensor) and c.shape == e.shape \
                and c.is_floating_point() and c.numel():
            d = float((c.float() - e.float()).abs().max())
            worst = d if worst is None else max(worst, d)
    return worst
