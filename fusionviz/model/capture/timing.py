"""Runtime of a compiled graph: whole graph and per kernel (eager: ``baseline``).

GPU: device time from the CUDA profiler (``torch.profiler``: CUPTI activity records)
over ``PROFILED_CALLS`` calls of the compiled module. Every launch in the wrapper's
``call`` runs inside a ``record_function`` range named for its trace kernel, through
proxies of the module's kernel globals, ``extern_kernels`` and ``torch.ops`` (the
wrapper looks them up at call time, so no generated code changes); the device work a
range launched is that kernel's time. A CUDA event pair around one launch would also
measure the CPU's launch latency whenever the GPU waits for it (docs: the timing
notes in README "What the times mean"). Whole graph: device-busy time per call (the
profiler) and steady-state wall time per call, each a median with its spread.

CPU: each call is synchronous, so wall time around a call or a kernel is its time.

Every run gets fresh copies of the graph's inputs (a graph may write into buffers it
was donated), and the RNG states of the CPU and of every CUDA device are restored
after the extra runs: the user's program computes what it would without capture.
"""

from __future__ import annotations

import os
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from contextlib import contextmanager

import torch

from fusionviz.model.capture.eager import eager_graph
from fusionviz.model.capture.kernels import KernelRecord
from fusionviz.model.trace import Timing

WARMUP = 2
MAX_REPEATS = 20
BUDGET_S = 3.0  # stop repeating once a measurement took this long
PROFILED_CALLS = 5  # calls of the compiled module under the CUDA profiler
KERNEL_RUNS = 5  # instrumented calls on the CPU (the first is dropped: caches warm up)
GRAPH_RANGE = "fusionviz::graph_call"
_RANDOM_OPS = ("rand", "dropout", "bernoulli", "philox", "seed", "normal", "uniform",
               "multinomial", "exponential", "poisson", "cauchy", "geometric")


def graph_range(index: int) -> str:
    """The profiler range around one call of graph ``index`` (``step_profile``)."""
    return f"{GRAPH_RANGE} {index}"


def clone_inputs(args, keep_grad: bool = False) -> list:
    """Copies of the graph inputs (strides kept) so repeated runs never touch the user's.

    ``keep_grad``: floating-point copies require grad where the originals did (leaves:
    the eager baseline's autograd backward reaches them)."""
    out = []
    with torch.no_grad():  # a copy is a new leaf, never part of the user's autograd graph
        for a in args:
            if isinstance(a, torch.Tensor):
                c = _copy(a)
                if keep_grad and a.requires_grad and (c.is_floating_point() or c.is_complex()):
                    c.requires_grad_()
                out.append(c)
            else:
                out.append(a)
    return out


def _copy(a: torch.Tensor) -> torch.Tensor:
    c = torch.empty_strided(a.size(), a.stride(), dtype=a.dtype, device=a.device)
    try:
        return c.copy_(a)
    except RuntimeError:  # an expanded input (stride 0) cannot be written into
        return a.clone()


@contextmanager
def preserved_rng():
    """The CPU's and every initialized CUDA device's RNG state, as they were on entry."""
    cpu = torch.random.get_rng_state()
    cuda = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None
    try:
        yield
    finally:
        torch.random.set_rng_state(cpu)
        if cuda is not None:
            torch.cuda.set_rng_state_all(cuda)


def has_random_ops(gm) -> bool:
    """Whether the FX graph draws random numbers (its outputs differ run to run)."""
    for node in getattr(getattr(gm, "graph", None), "nodes", ()):
        if node.op == "call_function" and any(
                word in str(node.target).lower() for word in _RANDOM_OPS):
            return True
    return False


def spread(values: list[float]) -> tuple[float, ...]:
    return (min(values), max(values)) if values else ()


class _Clock:
    def __init__(self, device: str) -> None:
        self.cuda = device == "cuda" and torch.cuda.is_available()

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def wall(self, fn: Callable, inputs) -> list[float]:
        """Wall ms per call of ``fn(fresh inputs)``, up to MAX_REPEATS within BUDGET_S;
        the copies are made outside the timed part."""
        for _ in range(WARMUP):
            fn(clone_inputs(inputs))
        self.sync()
        times: list[float] = []
        start = time.perf_counter()
        lockstep = in_lockstep()
        while len(times) < MAX_REPEATS and (lockstep or time.perf_counter() - start < BUDGET_S):
            args = clone_inputs(inputs)
            self.sync()
            t0 = time.perf_counter()
            fn(args)
            self.sync()
            times.append((time.perf_counter() - t0) * 1e3)
        return times


def quiet_children(timeout_s: float = 3.0, poll_s: float = 0.02) -> float:
    """Wait (at most ``timeout_s``) until this process's children use no CPU: Inductor's
    compile workers import torch and compile for seconds after a graph's first call, and
    on a machine of few cores a CPU timing taken meanwhile measures them. Returns the
    seconds waited. Linux only (elsewhere: no wait)."""
    start = time.perf_counter()
    last, still = _children_cpu(), 0
    while last is not None and time.perf_counter() - start < timeout_s:
        time.sleep(poll_s)
        now = _children_cpu()
        if now is None:
            break
        still = still + 1 if now - last < 0.2 * poll_s else 0
        if still >= 2:
            break
        last = now
    return time.perf_counter() - start


def _children_cpu() -> float | None:
    """CPU seconds used so far by this process's direct children (None: unknown)."""
    try:
        pids = set()
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/children") as f:
                pids.update(f.read().split())
        total = 0
        for pid in pids:
            try:
                with open(f"/proc/{pid}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])  # utime, stime (ticks)
            except (OSError, IndexError, ValueError):
                continue
        return total / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError):
        return None


class OtherCpu:
    """How many cores other processes kept busy while a CPU timing ran (from
    ``/proc/stat`` less this process and its children): the 1-minute load average
    lags, and a timing taken while another program spins is not this program's cost.
    ``cores`` is None where it cannot be read (not Linux)."""

    def __enter__(self) -> OtherCpu:
        self.cores: float | None = None
        self._start = _cpu_now()
        return self

    MIN_WINDOW_S = 0.25  # /proc/stat counts 10 ms ticks: a shorter window says little

    def __exit__(self, *exc) -> None:
        if self._start is not None:  # a short timing: watch the others a little longer
            time.sleep(max(0.0, self.MIN_WINDOW_S - (time.perf_counter() - self._start[0])))
        end = _cpu_now()
        if self._start is not None and end is not None and end[0] > self._start[0]:
            wall, busy, own = (b - a for a, b in zip(self._start, end, strict=True))
            self.cores = max(0.0, (busy - own) / wall)


def _cpu_now() -> tuple[float, float, float] | None:
    """(wall s, CPU s used by the whole machine, CPU s used by this process and its
    children)."""
    try:
        with open("/proc/stat") as f:
            ticks = [int(v) for v in f.readline().split()[1:]]
        tick = os.sysconf("SC_CLK_TCK")
        busy = (sum(ticks) - ticks[3] - (ticks[4] if len(ticks) > 4 else 0)) / tick
        own = sum(os.times()[:2]) + (_children_cpu() or 0.0)
        return time.perf_counter(), busy, own
    except (OSError, ValueError, IndexError):
        return None


def in_lockstep() -> bool:
    """Whether this process is one rank of several (torch.distributed): a graph with a
    collective must then run as often on every rank, so the repeats are a fixed count,
    never "as many as fit in the time budget" (ranks would wait on each other forever)."""
    dist = getattr(torch, "distributed", None)
    try:
        return bool(dist and dist.is_available() and dist.is_initialized()
                    and dist.get_world_size() > 1)
    except Exception:  # noqa: BLE001 - a half-torn-down process group: be safe
        return True


class _Launches:
    """Wraps each kernel launch: a named profiler range (GPU) or a timed span (CPU)."""

    def __init__(self, cuda: bool) -> None:
        self.cuda = cuda
        # CPU: each launch's (start, end) in ms from the graph call's start (``begin``)
        self.spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
        self.t0 = time.perf_counter()

    def begin(self) -> None:
        """A graph call starts now: its spans are measured from here."""
        self.spans.clear()
        self.t0 = time.perf_counter()

    def timed(self, label: str, fn):
        if self.cuda:
            def run(*args, **kwargs):
                with torch.profiler.record_function(label):
                    return fn(*args, **kwargs)
        else:
            def run(*args, **kwargs):
                t0 = time.perf_counter()
                out = fn(*args, **kwargs)
                t1 = time.perf_counter()
                self.spans[label].append(((t0 - self.t0) * 1e3, (t1 - self.t0) * 1e3))
                return out
        return run


def _offsets(per_call: list[list[tuple[float, float]]]):
    """(start_ms, end_ms, launches) of a kernel within a graph call: the median over
    the calls of its first launch's start and of its last launch's end, and of each
    launch's (start, end) when it was launched more than once and as often in every
    call (each launch a (start, end) pair in ms from its call's start)."""
    calls = [sorted(spans) for spans in per_call if spans]
    if not calls:
        return None, None, ()
    n = len(calls[0])
    launches = ()
    if n > 1 and all(len(c) == n for c in calls):
        launches = tuple((statistics.median(c[i][0] for c in calls),
                          statistics.median(c[i][1] for c in calls)) for i in range(n))
    return (statistics.median(c[0][0] for c in calls),
            statistics.median(max(e for _, e in c) for c in calls), launches)


class _KernelProxy:
    def __init__(self, obj, run) -> None:
        self._obj, self._run = obj, run

    def run(self, *args, **kwargs):  # Triton kernels are launched with .run(...)
        return self._run(self._obj.run)(*args, **kwargs)

    def __call__(self, *args, **kwargs):  # C++ kernels are plain callables
        return self._run(self._obj)(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self._obj, name)


class _CallOrder:
    """The k-th call of a Python name (``extern_kernels.mm``) is the k-th trace kernel
    with that name, in the wrapper's call order."""

    def __init__(self, records: list[KernelRecord], launches: _Launches) -> None:
        self.names: dict[str, list[str]] = defaultdict(list)
        for r in records:
            if r.extern:
                self.names[r.extern].append(r.name)
        self.launches = launches
        self.seen: dict[str, int] = defaultdict(int)

    def wrap(self, path: str, fn):
        labels = self.names.get(path)
        if not labels:
            return fn
        k = self.seen[path]
        self.seen[path] += 1
        return self.launches.timed(labels[k % len(labels)], fn)


class _ExternProxy:
    """Stands in for ``extern_kernels``."""

    def __init__(self, ns, order: _CallOrder) -> None:
        self._ns, self._order = ns, order

    def __getattr__(self, name):
        return self._order.wrap(f"extern_kernels.{name}", getattr(self._ns, name))


class _OpsProxy:
    """Stands in for ``torch`` (and op namespaces such as ``aten``) in the wrapper:
    ``torch.ops.<ns>.<op>[.<overload>]`` and ``aten.<op>.<overload>`` calls (Inductor's
    fallbacks: SDPA, sort, cumsum, randint, ...) are labelled; the rest is torch."""

    def __init__(self, obj, path: str, order: _CallOrder) -> None:
        self._obj, self._path, self._order = obj, path, order

    def __getattr__(self, name):
        value = getattr(self._obj, name)
        if self._path == "torch" and name != "ops":
            return value
        return _OpsProxy(value, f"{self._path}.{name}", self._order)

    def __repr__(self) -> str:
        return f"<fusionviz proxy of {self._path}>"

    def __call__(self, *args, **kwargs):
        return self._order.wrap(self._path, self._obj)(*args, **kwargs)


@contextmanager
def _instrumented(module, records: list[KernelRecord], launches: _Launches):
    """The module's kernels, ``extern_kernels`` and ``torch`` replaced by labelling
    proxies for the duration; yields the call-order counter (reset it per call)."""
    order = _CallOrder(records, launches)
    saved = {}
    for r in records:
        if not r.extern and hasattr(module, r.name):
            saved[r.name] = getattr(module, r.name)
            setattr(module, r.name,
                    _KernelProxy(saved[r.name], lambda fn, n=r.name: launches.timed(n, fn)))
    proxies = {"extern_kernels": lambda v: _ExternProxy(v, order),
               "torch": lambda v: _OpsProxy(v, "torch", order)}
    for name, value in vars(module).items():  # op namespaces: aten = torch.ops.aten
        if isinstance(value, torch._ops._OpNamespace):
            proxies[name] = lambda v, n=name: _OpsProxy(v, n, order)
    for name, proxy in proxies.items():
        if getattr(module, name, None) is not None:
            saved[name] = getattr(module, name)
            setattr(module, name, proxy(saved[name]))
    try:
        yield order
    finally:
        for name, obj in saved.items():
            setattr(module, name, obj)


def _cpu_kernel_times(module, call, inputs, records) -> None:
    """Per-kernel ms per call, launches per call and when each kernel ran within the
    call, from timed spans (CPU)."""
    launches = _Launches(cuda=False)
    per_run: list[dict[str, list[tuple[float, float]]]] = []
    with _instrumented(module, records, launches) as order:
        for _ in range(KERNEL_RUNS):
            order.seen.clear()
            args = clone_inputs(inputs)  # copied before the call's start
            launches.begin()
            call(args)
            per_run.append({k: list(v) for k, v in launches.spans.items()})
    per_run = per_run[1:] or per_run  # the first instrumented run may still warm caches
    for r in records:
        totals = [sum(e - s for s, e in run[r.name]) for run in per_run if r.name in run]
        if totals:
            r.ms, r.ms_spread = statistics.median(totals), spread(totals)
            r.calls = len(per_run[-1].get(r.name, ()))
            r.start_ms, r.end_ms, r.launches = _offsets([run.get(r.name, [])
                                                         for run in per_run])


def _ranges(prof) -> list:
    """The CPU-side events of a profile; a range's ``device_time_total`` is the device
    time of everything launched inside it."""
    return [e for e in prof.events()
            if getattr(e, "device_type", None) == torch.autograd.DeviceType.CPU]


def _gpu_times(module, call, inputs, records) -> list[float]:
    """Per-kernel device ms per call from the CUDA profiler; returns the device-busy ms
    of each profiled call of the whole graph."""
    from torch.profiler import ProfilerActivity, profile, record_function

    launches = _Launches(cuda=True)
    activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    with _instrumented(module, records, launches) as order:
        call(clone_inputs(inputs))  # warm the proxies' paths
        torch.cuda.synchronize()
        with profile(activities=activities) as prof:
            for _ in range(PROFILED_CALLS):
                order.seen.clear()
                args = clone_inputs(inputs)  # copied outside the graph's range
                with record_function(GRAPH_RANGE):
                    call(args)
            torch.cuda.synchronize()
    events = _ranges(prof)
    calls = sorted((e.time_range.start, e.time_range.end, e.device_time_total / 1e3)
                   for e in events if e.name == GRAPH_RANGE)
    by_name = {r.name: r for r in records}
    # label -> per profiled call, the device ms of each of its launches in that call,
    # and each launch's CPU-side range in ms from the start of its call's GRAPH_RANGE
    per_label: dict[str, list[list[float]]] = defaultdict(lambda: [[] for _ in calls])
    spans: dict[str, list[list[tuple[float, float]]]] = defaultdict(
        lambda: [[] for _ in calls])
    for e in events:
        if e.name not in by_name:
            continue
        i = _call_of(calls, e.time_range.start)
        if i is not None:
            per_label[e.name][i].append(e.device_time_total / 1e3)
            start = calls[i][0]
            spans[e.name][i].append(((e.time_range.start - start) / 1e3,
                                     (e.time_range.end - start) / 1e3))
    for label, per_call in per_label.items():
        r = by_name[label]
        # median over calls: one slow call (the profiler's first, a clock change)
        # does not move it; the spread is that of one launch
        r.ms = statistics.median(sum(launches) for launches in per_call)
        r.calls = round(statistics.median(len(launches) for launches in per_call))
        every = [ms for launches in per_call for ms in launches]
        r.ms_spread = spread(every) if len(every) > 1 else ()
        r.start_ms, r.end_ms, r.launches = _offsets(spans[label])
    return [ms for _, _, ms in calls]


def _call_of(calls: list[tuple[float, float, float]], start: float) -> int | None:
    """Index of the profiled graph call whose range holds ``start``."""
    for i, (begin, end, _) in enumerate(calls):
        if begin <= start <= end:
            return i
    return None


def machine_load() -> dict:
    """The machine's load while timing (CPU times are wall times: a busy machine
    stretches them)."""
    try:
        load1 = os.getloadavg()[0]
    except OSError:
        return {}
    return {"loadavg_1m": round(load1, 2), "cores": os.cpu_count() or 0}


def measure(module, call, inputs, gm, records, device: str) -> Timing:
    """Whole-graph compiled times and per-kernel times into ``records``, and a check of
    the outputs against the lowered graph run eagerly (eager times: ``baseline``).

    ``call`` runs the compiled module on a list of inputs; ``inputs`` are a copy of
    the first call's inputs, taken before it ran; ``gm`` the FX graph Inductor lowered.
    """
    clock = _Clock(device)
    notes: list[str] = []
    if not clock.cuda:
        quiet_children()
    # no_grad: the lowered graphs are functional, autograd has nothing to record
    with preserved_rng(), torch.no_grad():
        wall = clock.wall(call, inputs)
        busy: list[float] = []
        try:
            if clock.cuda:
                busy = _gpu_times(module, call, inputs, records)
            else:
                _cpu_kernel_times(module, call, inputs, records)
        except Exception as e:  # noqa: BLE001 - timing must never break the user's run
            notes.append(f"per-kernel timing failed: {type(e).__name__}: {e}")
        diff, diff_note = _compare(call, inputs, gm, notes)
    compiled = busy or wall
    method = ("CUDA profiler (device time), wall time per call" if clock.cuda
              else "perf_counter around each call and kernel (CPU, synchronous)")
    return Timing(
        compiled_ms=median(compiled), compiled_spread=spread(compiled),
        compiled_wall_ms=median(wall), compiled_wall_spread=spread(wall),
        compiled_device_ms=median(busy), repeats=len(wall), profiled_calls=len(busy),
        method=method, note="; ".join(notes),
        max_abs_diff=diff, diff_note=diff_note, load={} if clock.cuda else machine_load(),
    )


def _compare(call, inputs, gm, notes: list[str]) -> tuple[float | None, str]:
    """(max |compiled - eager|, why not compared) of the lowered graph run eagerly once on
    the same inputs: a check of the compiled code's numbers, not a time (the eager
    baseline is the graph Dynamo captured: ``baseline``)."""
    if gm is None:
        return None, ""
    if has_random_ops(gm):
        return None, "random ops: outputs not compared"
    try:
        runnable = eager_graph(gm)  # lowering-pattern calls put back as aten ops
        return max_abs_diff(call(clone_inputs(inputs)), runnable(*clone_inputs(inputs))), ""
    except Exception as e:  # noqa: BLE001 - measuring must never break the user's run
        notes.append(f"eager check of the outputs failed: {type(e).__name__}: {e}")
        return None, ""


def median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


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
