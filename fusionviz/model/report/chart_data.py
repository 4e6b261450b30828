"""Chart data for a graph: kernel times, per-step node and traffic series, benchmarks,
and the timeline of one graph call.

Pure lists and dicts, so charts (pyqtgraph) and exports draw the same numbers.
"""

from __future__ import annotations

from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.comms.reorders import comm_names
from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.queries import time_kind
from fusionviz.model.report.formatting import share_of_peak
from fusionviz.model.trace import Graph, Kernel


def kernel_times(graph: Graph) -> list[tuple[str, float, str]]:
    """(kernel name, ms, kind) of every kernel with a measured time, in call order."""
    return [(k.name, k.ms, k.kind) for k in graph.kernels if k.ms is not None]


def achieved_gb_s(kernel: Kernel) -> float | None:
    """Inductor's estimated bytes of one launch over the time of one launch, GB/s."""
    if not kernel.bytes or not kernel.ms or kernel.ms <= 0:
        return None
    return kernel.bytes / (kernel.ms / max(kernel.calls, 1)) / 1e6


def bandwidth_text(kernel: Kernel, peak_gb_s: float | None = None) -> str:
    """``"2,869 GB/s (86% of peak 3,352 GB/s)"``; "" when bytes or time are unknown."""
    gb_s = achieved_gb_s(kernel)
    return "" if gb_s is None else share_of_peak(gb_s, peak_gb_s)


def kernel_tip(kernel: Kernel, peak_gb_s: float | None = None, extern: str = "") -> str:
    """What a kernel's bar says on hover: time per call, launches, bandwidth, and an
    extern kernel's facts (``extern``: ``extern_facts.extern_text``)."""
    lines = [f"{kernel.name} ({kernel.kind})", f"{kernel.ms:.4g} ms per graph call"
             + (f", {kernel.calls} launches" if kernel.calls > 1 else "")]
    bandwidth = bandwidth_text(kernel, peak_gb_s)
    lines += [text for text in (bandwidth, extern) if text]
    return "\n".join(lines)


def round_series(graph: Graph) -> dict[str, list]:
    """One value per fusion step (index i is ``fusion_steps(graph)[i]``).

    Keys: ``label`` ("before", "r1", ..., "final" when a post-fusion pass changed
    groups, "p1", ... for each pass that reordered the fused nodes), ``nodes`` (groups at the step), ``bytes`` (estimated memory traffic:
    the nodes' own byte estimates minus the ``bytes_saved`` of every fusion so far,
    which is how Inductor scores a fusion), ``wall_s`` (the round's wall time; 0 for
    the before and final steps).
    """
    own = {n.name: n.bytes for n in graph.nodes}
    series: dict[str, list] = {"label": [], "nodes": [], "bytes": [], "wall_s": []}
    saved = 0
    for step in fusion_steps(graph):
        rnd = step.round
        if rnd is not None:
            saved += sum(f.bytes_saved for f in rnd.fusions)
        label = "before" if step.label == "before fusion" else step.label
        if step.reorder is not None:  # a post-fusion pass: same groups, new order
            label = f"p{step.reorder.index}"
        series["label"].append(f"r{rnd.index}" if rnd is not None else label)
        series["nodes"].append(len(step.groups))
        series["bytes"].append(sum(own.get(n, 0) for g in step.groups for n in g) - saved)
        series["wall_s"].append(rnd.wall_s if rnd is not None
                                else step.reorder.wall_s if step.reorder is not None
                                else 0.0)
    return series


def benchmark_points(graph: Graph) -> list[dict]:
    """One point per candidate that benchmark_fusion decided, in round then rank order.

    Keys: round, rank, a, b, outcome, speedup (None when not timed), fuse, spill,
    ms_a, ms_b, ms_fused.
    """
    points = []
    for rnd in graph.rounds:
        for c in rnd.candidates:
            b = c.benchmark
            if b is None:
                continue
            points.append(
                {
                    "round": rnd.index,
                    "rank": c.rank,
                    "a": c.a,
                    "b": c.b,
                    "outcome": c.outcome,
                    "speedup": b.speedup,
                    "fuse": b.fuse,
                    "spill": b.spill,
                    "ms_a": b.ms_a,
                    "ms_b": b.ms_b,
                    "ms_fused": b.ms_fused,
                }
            )
    return points


def timeline(graph: Graph) -> dict:
    """When each kernel ran within one graph call, and each collective's span.

    ``kernels``: ``{name, start, end, collective, calls, launches}`` per kernel with
    ``start_ms`` and ``end_ms``, in call order (``collective``: the kernel is a
    collective's call or its wait; ``launches``: each launch's (start, end) where the
    trace has them, else one span from the first launch's start to the last's end); ``spans``: ``{node, kind, start, end, wait_start, kernel, between}`` per
    collective whose call and wait both have them: from its issue to the end of its
    (last) wait, when the wait began, and the compute kernels that ran in between
    (``CollectiveTime.kernels_between``, collectives left out). ``clock``: what the times are (``wall``: the kernels'
    own calls, on the CPU; ``launch``: the CPU side of each launch, on the GPU, where
    the device runs them later). Empty lists for traces recorded before kernels'
    start and end were."""
    kernels = [k for k in graph.kernels if k.start_ms is not None and k.end_ms is not None]
    by_name = {k.name: k for k in kernels}
    comm_nodes = comm_names(graph)
    comm = {k.name for k in kernels if any(n in comm_nodes for n in k.nodes)}
    spans = []
    for t in collective_times(graph):
        own = by_name.get(t.kernel)
        waits = [by_name[name] for name in t.wait_kernels if name in by_name]
        if own is None or not waits:
            continue
        spans.append({"node": t.node, "kind": t.collective.kind, "start": own.start_ms,
                      "end": max(w.end_ms for w in waits),
                      "wait_start": min(w.start_ms for w in waits), "kernel": own.name,
                      "between": tuple(n for n in t.kernels_between or () if n not in comm)})
    clock = "launch" if time_kind(graph.timing) == "device" else "wall"
    end = max((k.end_ms for k in kernels), default=0.0)
    return {"kernels": [{"name": k.name, "start": k.start_ms, "end": k.end_ms,
                         "collective": k.name in comm, "calls": k.calls,
                         "launches": list(k.launches) or [(k.start_ms, k.end_ms)]}
                        for k in kernels],
            "spans": spans,
            "clock": clock,
            "note": clock_note(graph.timing, clock, end) if kernels else ""}


def clock_note(timing, clock: str, span_ms: float) -> str:
    """How the timeline's span compares with the graph's measured time per call, and
    why they differ where they do (one clock per chart, or a reason in place)."""
    wall = timing.compiled_wall_ms if timing is not None else None
    device = timing.compiled_device_ms if timing is not None else None
    measured = ", ".join(f"{v:.3f} ms {what}" for v, what in ((wall, "wall"),
                                                             (device, "on the device"))
                         if v is not None)
    text = f"span {span_ms:.3f} ms" + (f"; the call measures {measured}" if measured else "")
    if wall is None or abs(span_ms - wall) <= 0.2 * wall:
        return text
    if clock == "launch":
        why = ("the bars are when the CPU issued each launch during the profiled calls: "
               "the profiler slows the CPU side, and the device runs each kernel later")
    else:
        why = ("the bars come from calls with a timer around each kernel, which run "
               f"{'slower' if span_ms > wall else 'faster'} than the plain calls timed "
               "for the graph")
    return f"{text}:\n{why}"
