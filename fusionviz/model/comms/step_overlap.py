"""What a rank's profiled train step spent on communication, and how much of it the
compute hid (``Trace.step``, recorded by ``capture/step_profile``).

Times are unions of spans (two all-reduces in flight at once count once). On the
GPU, where the step has device lanes, the device's clock is used: the NCCL kernels
against the compiled graphs' device spans; on the CPU, gloo's ops (from their start on
gloo's worker thread to their end, waiting for the other ranks included) against the
compiled graphs' calls and the optimizer. *Hidden* communication ran while some
compute ran; *exposed* is the rest: time the step would lose were the network slower.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from fusionviz.model.trace import StepSpan, StepTimeline

Interval = tuple[float, float]
SINGLE_PROCESS = ("not recorded: a single process (no collectives to show); the step is "
                  "profiled only in a job of several ranks")


@dataclass(frozen=True)
class CollectiveOverlap:
    """One collective of the step, and the backward graphs it overlaps."""

    span: StepSpan
    hidden_ms: float  # of its span, the time some compute ran
    backward: tuple[int, ...]  # the backward graphs whose spans overlap its span
    backward_ms: float  # of its span, the time a backward graph ran

    @property
    def ms(self) -> float:
        return self.span.end_ms - self.span.start_ms


@dataclass(frozen=True)
class StepOverlap:
    """Per step: compute, communication, hidden and exposed communication (ms)."""

    clock: str  # "device" (the GPU's lanes) or "cpu"
    step_ms: float | None
    compute_ms: float
    communication_ms: float
    hidden_ms: float  # communication while some compute ran
    behind_backward_ms: float  # communication while a backward graph ran
    collectives: tuple[CollectiveOverlap, ...]

    @property
    def exposed_ms(self) -> float:
        return max(0.0, self.communication_ms - self.hidden_ms)


def lanes(step: StepTimeline) -> tuple[str, str]:
    """(compute lane, communication lane) the overlap is measured on."""
    if any(s.lane == "device communication" for s in step.spans):
        return "device compute", "device communication"
    return "compute", "communication"


MAX_MS = float(1 << 50)


def step_span_ok(span: StepSpan) -> bool:
    """Whether a span has finite times (a file may hold anything), its end not before
    its start; the others are left out."""
    times = (span.start_ms, span.end_ms)
    return (all(type(v) in (int, float) and math.isfinite(v) and abs(v) <= MAX_MS
                for v in times) and span.start_ms <= span.end_ms)


def step_overlap(step: StepTimeline | None) -> StepOverlap | None:
    """The step's communication and its overlap with compute; None when no step was
    recorded."""
    spans = [s for s in step.spans if step_span_ok(s)] if step is not None else []
    if not spans:
        return None
    compute_lane, comm_lane = lanes(step)
    compute = [s for s in spans if s.lane == compute_lane]
    comms = [s for s in spans if s.lane == comm_lane]
    backward = [s for s in compute if s.kind == "backward"]
    busy, back = union(_iv(compute)), union(_iv(backward))
    comm = union(_iv(comms))
    out = []
    for c in comms:
        mine = [(c.start_ms, c.end_ms)]
        out.append(CollectiveOverlap(
            span=c, hidden_ms=length(intersect(mine, busy)),
            backward=tuple(sorted({b.graph for b in backward if b.graph is not None
                                   and b.start_ms < c.end_ms and c.start_ms < b.end_ms})),
            backward_ms=length(intersect(mine, back))))
    return StepOverlap(
        clock="device" if compute_lane.startswith("device") else "cpu",
        step_ms=step.duration_ms, compute_ms=length(busy), communication_ms=length(comm),
        hidden_ms=length(intersect(comm, busy)),
        behind_backward_ms=length(intersect(comm, back)), collectives=tuple(out))


def overlap_line(o: StepOverlap) -> str:
    """``communication 3.1 ms, 2.2 ms hidden behind the backward, 0.9 ms exposed``."""
    if not o.collectives:
        return f"no communication in the step; compute {o.compute_ms:.3g} ms"
    text = (f"communication {o.communication_ms:.3g} ms, {o.behind_backward_ms:.3g} ms "
            f"hidden behind the backward")
    other = o.hidden_ms - o.behind_backward_ms
    if other >= 0.001:
        text += f", {other:.3g} ms behind other compute"
    return text + f", {o.exposed_ms:.3g} ms exposed"


def _iv(spans: list[StepSpan]) -> list[Interval]:
    return [(s.start_ms, s.end_ms) for s in spans if s.end_ms > s.start_ms]


def union(intervals: list[Interval]) -> list[Interval]:
    """Sorted, disjoint intervals covering the same time."""
    out: list[Interval] = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


def intersect(xs: list[Interval], ys: list[Interval]) -> list[Interval]:
    """The time both of two disjoint sorted interval lists cover."""
    out, i, j = [], 0, 0
    while i < len(xs) and j < len(ys):
        a, b = max(xs[i][0], ys[j][0]), min(xs[i][1], ys[j][1])
        if a < b:
            out.append((a, b))
        if xs[i][1] < ys[j][1]:
            i += 1
        else:
            j += 1
    return out


def length(intervals: list[Interval]) -> float:
    return sum(b - a for a, b in intervals)
