"""One whole train step of a rank under ``torch.profiler`` (``Trace.step``).

DDP's bucket all-reduces and FSDP2's all-gathers and reduce-scatters are issued by
hooks outside the compiled graphs, so no graph's timeline holds them. In a job of
several ranks, the profiler runs from the start of the 2nd call of the first compiled
graph the rank runs (its 1st call compiled and timed everything) to the start of its
3rd call: one step, forward, backward, collectives and optimizer. Each compiled graph's
call runs inside a profiler range named for it (``timing.graph_range``). Should the
script end first (or call ``destroy_process_group``), the window closes there. A graph
compiled inside the window (a recompile: its timing runs a profiler of its own) drops
the window, and the next call of the first graph opens it again (``TRIES`` times).

What is kept (``StepSpan``, ms from the start of the first graph's call): each graph's
call (lane ``compute``; on the GPU also its device span, ``device compute``: from the
first start to the last end of the kernels it launched, a kernel and the CUDA call that
launched it sharing their correlation id), the optimizer's ``step`` and ``zero_grad``
(the same two ways), each collective as
its backend ran it (gloo: the op on gloo's worker thread, from its start to its end,
waiting for the other ranks included; NCCL: the ``nccl:*`` call on the CPU and the
``ncclDevKernel_*`` kernel on the device, ``device communication``), with its tensor's
shape, dtype and bytes (``record_shapes``) and when the script's thread issued it.

A single process issues no collectives: the step is not profiled there (``note``).
The profiler only costs time in that one step; the script computes what it would.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import threading
import traceback

import torch

from fusionviz.model.capture.timing import graph_range, in_lockstep
from fusionviz.model.comms.step_overlap import SINGLE_PROCESS
from fusionviz.model.trace import StepSpan, StepTimeline

START_CALL = 2  # the first graph's call that opens the window (its 1st compiled it)
TRIES = 3  # windows dropped for a graph compiled inside them, at most
STEP_END = "fusionviz::step_end"
METHOD = ("torch.profiler over one step ({activities}, record_shapes), each compiled "
          "graph's call in a range of its own; the profiler adds overhead to this step "
          "only: its times run a little long")
_ITEMSIZE = {"float": 4, "c10::Half": 2, "c10::BFloat16": 2, "double": 8, "long int": 8,
             "int": 4, "short int": 2, "signed char": 1, "unsigned char": 1, "bool": 1,
             "c10::Float8_e4m3fn": 1, "c10::Float8_e5m2": 1}
_NCCL_KINDS = (("AllReduce", "all_reduce"), ("AllGather", "all_gather"),
               ("ReduceScatter", "reduce_scatter"), ("Broadcast", "broadcast"),
               ("Reduce", "reduce"), ("SendRecv", "send_recv"), ("AllToAll", "all_to_all"))


def install(patcher, step: StepProfile) -> None:
    """Close the window when the script destroys its process group."""
    try:
        import torch.distributed as dist
        from torch.distributed import distributed_c10d
    except ImportError:
        return
    if not dist.is_available():
        return
    for owner in (dist, distributed_c10d):
        patcher.wrap(owner, "destroy_process_group", lambda orig: _closing(orig, step),
                     f"step profile: {owner.__name__}.destroy_process_group")


def _closing(orig, step: StepProfile):
    def destroy_process_group(*args, **kwargs):
        step.close("destroy_process_group")
        return orig(*args, **kwargs)

    return destroy_process_group


class StepProfile:
    """The profiled step of this rank: opened and closed by the first graph's calls."""

    def __init__(self, graphs: list, on_error=None) -> None:
        self.graphs = graphs  # the recorder's GraphRecords (index, kind)
        self.on_error = on_error or (lambda where, tb: None)
        self.anchor: int | None = None  # the first graph called: its calls open and close
        self.calls = 0  # of the anchor
        self.prof = None
        self.tries = 0
        self.dropped = ""  # why the last window was dropped
        self.pending = ""  # why the open window is to be dropped (seen on another thread)
        self.timeline: StepTimeline | None = None  # settled: recorded, or why not
        self._lock = threading.Lock()

    # -- calls of compiled graphs ---------------------------------------------------
    def first_call(self, index: int) -> None:
        """Graph ``index`` runs for the first time (it will be compiled and timed)."""
        if self.timeline is not None:
            return
        if self.anchor is None:
            self.anchor, self.calls = index, 1
        elif self.prof is not None:
            why = f"graph {index} was compiled inside the profiled step"
            if threading.current_thread() is threading.main_thread():
                self._drop(why)
            else:  # (a backward's thread): the profiler stops where it started
                self.pending = why

    def call(self, index: int, orig, args):
        """A later call of graph ``index``: inside its profiler range while profiling."""
        if self.timeline is not None:
            return orig(args)
        if index == self.anchor and threading.current_thread() is threading.main_thread():
            self.calls += 1
            self._guard(self._at_anchor)
        if self.prof is None:
            return orig(args)
        with torch.profiler.record_function(graph_range(index)):
            return orig(args)

    def _at_anchor(self) -> None:
        if self.pending:  # dropped: this call starts a new window
            self._drop(self.pending)
            if self.timeline is not None:  # (the last try)
                return
        if self.prof is not None:
            self.close(f"the {_nth(self.calls)} call of graph {self.anchor}")
        elif self.calls >= START_CALL:
            self._open()

    # -- the window ---------------------------------------------------------------
    def _open(self) -> None:
        if not in_lockstep():
            self.timeline = StepTimeline(note=SINGLE_PROCESS)
            return
        from torch.profiler import ProfilerActivity, profile

        acts = [ProfilerActivity.CPU]
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            acts.append(ProfilerActivity.CUDA)
        self.opened_at = self.calls
        prof = profile(activities=acts, record_shapes=True)
        prof.start()
        self.prof = prof

    def close(self, by: str) -> None:
        """End the window (``by``: what ended it) and keep the step; never raises."""
        if self.pending:
            self._drop(self.pending)
        with self._lock:
            prof, self.prof = self.prof, None
            if prof is None:
                if self.timeline is None:
                    self.timeline = StepTimeline(note=self._not_recorded(by))
                return
            try:
                cuda = self._stop(prof)
                self.timeline = _timeline(
                    prof, self.graphs, cuda,
                    window=f"from the {_nth(self.opened_at)} call of graph {self.anchor} "
                           f"to {by}")
            except Exception as e:  # noqa: BLE001 - profiling must never break the run
                self.on_error("step profile", traceback.format_exc())
                self.timeline = StepTimeline(
                    note=f"not recorded: the profile could not be read ({type(e).__name__}: "
                         f"{e})"[:500])

    def _not_recorded(self, by: str) -> str:
        if int(os.environ.get("WORLD_SIZE", "1") or 1) <= 1:
            return SINGLE_PROCESS
        if self.dropped:
            return f"not recorded: {self.dropped} ({self.tries} tries)"
        if self.anchor is None:
            return "not recorded: no compiled graph ran"
        return (f"not recorded: graph {self.anchor}, the first compiled graph, ran "
                f"{self.calls} time{'s' if self.calls != 1 else ''} before {by} (the "
                f"step profiled is its {_nth(START_CALL)} call to its next)")

    @staticmethod
    def _stop(prof) -> bool:
        cuda = torch.cuda.is_available() and torch.cuda.is_initialized()
        if cuda:
            torch.cuda.synchronize()  # the device's work of the step, done and recorded
        with torch.profiler.record_function(STEP_END):
            pass
        prof.stop()
        return cuda

    def _drop(self, why: str) -> None:
        self.pending = ""
        with self._lock:
            prof, self.prof = self.prof, None
        if prof is not None:
            self._guard(prof.stop)
        self.tries += 1
        self.dropped = why  # (the anchor's next call opens a new window)
        if self.tries >= TRIES:
            self.timeline = StepTimeline(note=self._not_recorded("the script's end"))

    def _guard(self, fn) -> None:
        try:
            fn()
        except Exception:  # noqa: BLE001 - profiling must never break the run
            self.on_error("step profile", traceback.format_exc())
            self.prof = None
            self.timeline = StepTimeline(note="not recorded: the profiler failed "
                                              "(see problems)")


def _nth(n: int) -> str:
    return f"{n}{'th' if 10 <= n % 100 <= 20 else {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')}"


# -- reading the profile ------------------------------------------------------------
def _timeline(prof, graphs: list, cuda: bool, window: str) -> StepTimeline:
    events = list(prof.events())
    cpu_type = torch.autograd.DeviceType.CPU
    prefix = graph_range(0)[:-1]
    starts = [e.time_range.start for e in events
              if e.device_type == cpu_type and e.name.startswith(prefix)]
    if not starts:
        return StepTimeline(note="not recorded: no compiled graph's call in the window",
                            window=window)
    t0 = min(starts)
    end = next((e.time_range.start for e in events if e.name == STEP_END), None)
    spans = _spans(events, graphs, t0, prefix)
    activities = "CPU and CUDA activity" if cuda else "CPU activity"
    return StepTimeline(
        spans=tuple(sorted(spans, key=lambda s: (s.lane, s.start_ms))),
        duration_ms=None if end is None else round((end - t0) / 1e3, 4),
        device="cuda" if cuda else "cpu", window=window,
        method=METHOD.format(activities=activities))


def _ms(t: float, t0: float) -> float:
    return round((t - t0) / 1e3, 4)


def _spans(events, graphs: list, t0: float, prefix: str) -> list[StepSpan]:
    cpu_type = torch.autograd.DeviceType.CPU
    spans: list[StepSpan] = []  # the CPU's: each graph's call, the optimizer
    issued: dict[str, list[float]] = {}  # c10d op kind -> when the script issued each
    cpu_comms: list[tuple[object, str, str]] = []  # (event, backend, kind)
    nccl_kernels: list[tuple[object, str]] = []
    kernels = []  # the device's other work
    launches: dict[int, float] = {}  # a CUDA API call's id (its kernel's too) -> its start
    for e in events:
        name, cpu = e.name, e.device_type == cpu_type
        if cpu and name.startswith("cu"):  # cudaLaunchKernel, cuLaunchKernel, ...
            launches[e.id] = e.time_range.start
        if e.time_range.end < t0 or (not cpu and getattr(e, "is_user_annotation", False)):
            continue  # (a range's device copy: the device spans come from its kernels)
        if cpu and name.startswith(prefix):
            index = int(name[len(prefix):])
            kind = graphs[index].kind if 0 <= index < len(graphs) else ""
            spans.append(StepSpan(lane="compute", name=f"graph {index}", kind=kind,
                                  graph=index, start_ms=_ms(e.time_range.start, t0),
                                  end_ms=_ms(e.time_range.end, t0)))
        elif cpu and name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
            spans.append(StepSpan(lane="compute", name=name.split("#", 1)[1],
                                  kind="optimizer", start_ms=_ms(e.time_range.start, t0),
                                  end_ms=_ms(e.time_range.end, t0)))
        elif cpu and name.startswith("c10d::"):
            issued.setdefault(_plain(name[6:]), []).append(e.time_range.start)
        elif cpu and (m := re.fullmatch(r"(gloo|nccl):(\w+)", name)):
            cpu_comms.append((e, m[1], _kind(m[2])))
        elif not cpu and name.startswith(("ncclDevKernel_", "ncclKernel_")):
            kind = next((k for word, k in _NCCL_KINDS if word in name), "nccl")
            nccl_kernels.append((e, kind))
        elif not cpu:
            kernels.append(e)
    spans += _device_spans(spans, kernels, launches, t0)
    facts = _comm_facts(cpu_comms, issued, t0)
    # the k-th NCCL kernel of a kind was launched by the k-th nccl:<kind> call
    by_kind: dict[str, list] = {}
    for e, backend, kind in sorted(cpu_comms, key=lambda c: c[0].time_range.start):
        if backend == "nccl":
            by_kind.setdefault(kind, []).append(facts[id(e)])
    seen: dict[str, int] = {}
    device = []
    for e, kind in sorted(nccl_kernels, key=lambda k: k[0].time_range.start):
        k = seen[kind] = seen.get(kind, -1) + 1
        fact = by_kind[kind][k] if k < len(by_kind.get(kind, ())) else {}
        _dtype_from_kernel(fact, e.name)  # (the nccl:* call records no dtype)
        device.append(StepSpan(lane="device communication", name=e.name[:80], kind=kind,
                               backend="nccl", start_ms=_ms(e.time_range.start, t0),
                               end_ms=_ms(e.time_range.end, t0), **fact))
    spans += [StepSpan(lane="communication", name=f"{backend}:{kind}", kind=kind,
                       backend=backend, start_ms=_ms(e.time_range.start, t0),
                       end_ms=_ms(e.time_range.end, t0), **facts[id(e)])
              for e, backend, kind in cpu_comms]
    return spans + device


_NCCL_DTYPES = {"f32": ("float", 4), "f16": ("c10::Half", 2), "bf16": ("c10::BFloat16", 2),
                "f64": ("double", 8), "i8": ("signed char", 1), "u8": ("unsigned char", 1),
                "i32": ("int", 4), "u32": ("int", 4), "i64": ("long int", 8),
                "u64": ("long int", 8)}


def _dtype_from_kernel(fact: dict, kernel: str) -> None:
    """Where its call recorded none, the dtype an NCCL kernel's name says
    (``ncclDevKernel_AllReduce_Sum_f32_RING_LL``) and the bytes of its tensor."""
    if not fact or fact.get("dtype"):
        return
    word = next((w for w in re.split(r"[_(]", kernel) if w in _NCCL_DTYPES), None)
    if word is not None:
        fact["dtype"], size = _NCCL_DTYPES[word]
        if fact.get("shape"):
            fact["bytes"] = _numel(fact["shape"]) * size


def _device_spans(calls: list[StepSpan], kernels, launches: dict[int, float],
                  t0: float) -> list[StepSpan]:
    """Each graph call's (and optimizer call's) device span: from the first start to
    the last end of the kernels launched inside its CPU range (a kernel and the CUDA
    API call that launched it share their correlation id)."""
    extent: dict[int, tuple[float, float]] = {}
    for k in kernels:
        launched = launches.get(k.id)
        if launched is None:
            continue
        at = _ms(launched, t0)
        i = next((i for i, c in enumerate(calls) if c.start_ms <= at <= c.end_ms), None)
        if i is not None:
            a, b = extent.get(i, (math.inf, -math.inf))
            extent[i] = (min(a, k.time_range.start), max(b, k.time_range.end))
    return [dataclasses.replace(calls[i], lane="device compute", start_ms=_ms(a, t0),
                                end_ms=_ms(b, t0)) for i, (a, b) in sorted(extent.items())]


def _comm_facts(cpu_comms, issued: dict[str, list[float]], t0: float) -> dict[int, dict]:
    """Per collective event: its tensor (shape, dtype, bytes), its bucket (the k-th
    all-reduce) and when it was issued (the k-th c10d call of its kind)."""
    facts: dict[int, dict] = {}
    count: dict[str, int] = {}
    for e, _, kind in sorted(cpu_comms, key=lambda c: c[0].time_range.start):
        k = count[_plain(kind)] = count.get(_plain(kind), -1) + 1
        shapes = [tuple(int(d) for d in s) for s in (e.input_shapes or []) if s]
        dtypes = list(getattr(e, "input_dtypes", None) or [])
        shape = shapes[0] if shapes else ()
        dtype = str(dtypes[0]) if dtypes else ""
        size = _ITEMSIZE.get(dtype)
        nbytes = _numel(shape) * size if shapes and size else None  # its first tensor
        times = issued.get(_plain(kind), [])
        issue = _ms(times[k], t0) if len(times) == _count_of(cpu_comms, kind) else None
        facts[id(e)] = {"shape": shape, "dtype": dtype, "bytes": nbytes, "issue_ms": issue,
                        "bucket": k if kind == "all_reduce" else None}
    return facts


def _count_of(cpu_comms, kind: str) -> int:
    return sum(1 for _, _, k in cpu_comms if _plain(k) == _plain(kind))


def _plain(kind: str) -> str:
    """A collective's kind as both c10d (``_allgather_base_``) and its backend
    (``all_gather``) name it: ``allgather``."""
    plain = kind.strip("_").removesuffix("_base").replace("_", "")
    return plain.replace("intotensor", "").replace("tensor", "").removesuffix("coalesced")


_KINDS = {"allreduce": "all_reduce", "allgather": "all_gather",
          "reducescatter": "reduce_scatter", "alltoall": "all_to_all"}


def _kind(name: str) -> str:
    """``_allgather_base`` -> ``all_gather`` (the NCCL kernels' kinds)."""
    return _KINDS.get(_plain(name), name.strip("_"))


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n
