"""Questions the UI and the CLI ask of a trace: lookups, "why not fused?", summaries.

Everything here is a pure function of the frozen trace objects, so the answers are
the same in the desktop app, in exports and in tests. The round ledger as table rows
(``ledger_rows``, ``filter_rows``, CSV/Markdown) lives in ``report.ledger_table``.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.trace import (
    Benchmark,
    Graph,
    Group,
    Kernel,
    Node,
    Reason,
    Round,
    Timing,
    Trace,
)

_NEVER_FUSED = {
    "extern": "an extern kernel call",
    "collective": "a collective (communication) op, run as a kernel of its own",
    "nop": "a no-op that emits no kernel",
    "template": "a template kernel (fused only with epilogues/prologues it accepts)",
}


def node_index(graph: Graph) -> dict[str, Node]:
    """Pre-fusion node name → Node."""
    return {n.name: n for n in graph.nodes}


def kernel_of_node(graph: Graph) -> dict[str, Kernel]:
    """Pre-fusion node name → the final kernel computing it (the first, if several)."""
    out: dict[str, Kernel] = {}
    for k in graph.kernels:
        for name in k.nodes:
            out.setdefault(name, k)
    return out


@dataclass(frozen=True)
class WhyEntry:
    """One recorded decision about a pair of groups holding the two nodes."""

    round: int  # Round.index
    phase: str  # "candidate" (a ranked pair) | "scan" (can_fuse while collecting)
    a: Group
    b: Group
    outcome: str  # the candidate's outcome, or "accepted"/"rejected" for scan verdicts
    reasons: tuple[Reason, ...]
    benchmark: Benchmark | None
    rank: int | None
    # the groups actually tried, when earlier fusions of the round grew a or b
    tried: tuple[Group, ...] = ()


@dataclass(frozen=True)
class WhyNot:
    """Why two pre-fusion nodes did, or did not, end up in one kernel."""

    node_a: str
    node_b: str
    same_kernel: bool
    entries: tuple[WhyEntry, ...]
    summary: str
    fused: bool = False  # their groups became one (in a round, before or after them)
    fused_round: int | None = None  # the Round.index that joined them, when a round did


def why_not_fused(graph: Graph, node_a: str, node_b: str) -> WhyNot:
    """Every decision recorded between the groups of ``node_a`` and ``node_b``."""
    entries = tuple(e for r in graph.rounds for e in _round_entries(r, node_a, node_b))
    kernels = kernel_of_node(graph)
    ka, kb = kernels.get(node_a), kernels.get(node_b)
    same_kernel = ka is not None and ka is kb
    merged = _merged_at(graph, node_a, node_b) if node_a != node_b else None
    summary = _summary(graph, node_a, node_b, entries, ka if same_kernel else None, merged)
    return WhyNot(node_a, node_b, same_kernel, entries, summary, fused=merged is not None,
                  fused_round=merged[1] if merged else None)


def _round_entries(rnd: Round, x: str, y: str) -> list[WhyEntry]:
    def between(a: Group, b: Group) -> bool:
        return (x in a and y in b) or (y in a and x in b)

    scans = [
        WhyEntry(
            rnd.index,
            "scan",
            v.a,
            v.b,
            "accepted" if v.ok else "rejected",
            v.reasons,
            None,
            None,
        )
        for v in rnd.verdicts
        if between(v.a, v.b)
    ]
    # A pair listed as (a, b) may be tried as larger groups after earlier fusions of
    # the round: the decision then concerns every node of the groups tried.
    ranked = [
        WhyEntry(
            rnd.index,
            "candidate",
            c.a,
            c.b,
            c.outcome,
            c.reasons,
            c.benchmark,
            c.rank,
            c.tried,
        )
        for c in rnd.candidates
        if between(c.a, c.b) or (len(c.tried) == 2 and between(*c.tried))
    ]
    return scans + ranked  # the scan runs before the ranked pairs are tried


def _summary(graph, x, y, entries, kernel, merged) -> str:
    nodes = node_index(graph)
    missing = [n for n in (x, y) if n not in nodes]
    if missing:
        return f"unknown node {missing[0]} in graph {graph.index}"
    if x == y:
        return "the same node"
    if merged is not None:
        return merged[0]
    detail = _decision(graph, nodes[x], nodes[y], entries)
    if kernel is not None:  # e.g. the C++ backend emits a kernel group per loop nest
        return f"not fused, but generated into one kernel ({kernel.name}); {detail}"
    return detail


def _decision(graph: Graph, a: Node, b: Node, entries) -> str:
    decisive = [e for e in entries if not (e.phase == "scan" and e.outcome == "accepted")]
    if decisive:
        return _explain(decisive, len(entries))
    if entries:
        return (
            f"can_fuse accepted them in round {entries[-1].round}, "
            "but no ranked candidate between them was recorded"
        )
    return "never a candidate: " + _never_candidate(graph, a, b)


def _merged_at(graph: Graph, x: str, y: str) -> tuple[str, int | None] | None:
    """How and in which round (None: not in a round) ``x`` and ``y`` became one group."""
    for step in fusion_steps(graph):
        gx, gy = step.group_of.get(x), step.group_of.get(y)
        if gx is None or gx != gy:
            continue
        if step.label == "before fusion":
            return "already one group before fusion (grouped before the fusion rounds)", None
        if step.round is None:
            return "combined after the fusion rounds (e.g. into a combo kernel)", None
        return f"fused in {step.label}", step.round.index
    return None


def _explain(decisive: list[WhyEntry], n_entries: int) -> str:
    """The latest decision, with every round that decided the same way for the same reason."""
    last = decisive[-1]

    def verdict(e: WhyEntry):
        return e.phase, e.outcome, e.reasons

    rounds = sorted({e.round for e in decisive if verdict(e) == verdict(last)})
    where = f"round {rounds[0]}" if len(rounds) == 1 else _rounds_text(rounds)
    recorded = "; ".join(r.text for r in last.reasons)
    reason = recorded or (
        "no reason recorded (backend checks such as CppScheduling.can_fuse_* never explain)"
    )
    b = last.benchmark
    if last.phase == "scan":
        text = f"rejected while collecting candidates in {where}: {reason}"
    elif last.outcome == "benchmark_slower":
        speedup = f" ({b.speedup:.2f}x)" if b and b.speedup else ""
        text = (
            f"not fused in {where}: benchmark_fusion timed the fused kernel slower{speedup}"
        )
    elif last.outcome == "spill":
        which = b.spill if b and b.spill else "fused"
        text = f"not fused in {where}: the {which} kernel spilled registers"
    elif last.outcome == "rejected":
        text = f"rejected in {where}: {reason}"
    else:
        text = (
            f"not fused in {where}: {recorded or _OUTCOME_TEXT.get(last.outcome, reason)}"
        )
    others = n_entries - sum(verdict(e) == verdict(last) for e in decisive)
    if others:
        text += f" (and {others} other recorded decision{'s' if others > 1 else ''})"
    return text


_OUTCOME_TEXT = {
    "cycle": "fusing would create a cycle in the graph",
    "skipped": "the pair was never tried (e.g. a template pair already seen)",
    "stale": "one side had already fused with another node earlier in that round",
    "pending": "a deferred decision never resolved",
}


def _rounds_text(rounds: list[int]) -> str:
    """``rounds`` (sorted, no repeats) as a span when they are consecutive. Counted, not
    listed: a trace's round indices may be anything (1 and 10**9, or 10**30)."""
    if rounds[-1] - rounds[0] == len(rounds) - 1:
        return f"rounds {rounds[0]}-{rounds[-1]}"
    return "rounds " + ", ".join(map(str, rounds))


def _never_candidate(graph: Graph, a: Node, b: Node) -> str:
    for n in (a, b):
        if n.category in _NEVER_FUSED:
            what = _NEVER_FUSED[n.category]
            kernel = f" ({n.extern_kernel})" if n.extern_kernel else ""
            return f"{n.name} is {what}{kernel}"
    shared = _shared_buffers(a, b)
    adjacent = any(
        (e.src, e.dst) in ((a.name, b.name), (b.name, a.name)) for e in graph.edges
    )
    if not shared and not adjacent:
        return f"they share no buffer ({_io(a)}; {_io(b)}) and neither feeds the other"
    dropped = sum(r.verdicts_dropped for r in graph.rounds)
    note = f"; {dropped} scan verdicts were not recorded" if dropped else ""
    return (
        f"they share {', '.join(shared) or 'an edge'} but no can_fuse decision between "
        f"their groups was recorded{note}"
    )


def _shared_buffers(a: Node, b: Node) -> list[str]:
    bufs_a = {x.buffer for x in a.reads + a.writes}
    return sorted(bufs_a & {x.buffer for x in b.reads + b.writes})


def _io(n: Node) -> str:
    reads = ", ".join(x.buffer for x in n.reads) or "nothing"
    writes = ", ".join(x.buffer for x in n.writes) or "nothing"
    return f"{n.name} reads {reads}, writes {writes}"


def time_kind(timing: Timing | None) -> str:
    """What ``compiled_ms``/``eager_ms`` of a timing are: "device" time per call (the
    CUDA profiler) or "wall" time per call (the CPU, or a GPU trace of an older
    fusionviz, whose times were CUDA events around each launch)."""
    return "device" if timing is not None and timing.profiled_calls else "wall"


def peak_dram_gb_s(trace: Trace | None) -> float | None:
    """The peak DRAM bandwidth (GB/s) of the GPU the trace ran on, when recorded."""
    peak = trace.env.get("peak_dram_gb_s") if trace is not None else None
    return float(peak) if isinstance(peak, int | float) and peak > 0 else None


def load_warning(timing: Timing | None) -> str:
    """A warning when the machine was busier than its cores while timing ("" if not)."""
    load = timing.load if timing is not None else {}
    cores, busy = load.get("cores"), load.get("loadavg_1m")
    if not cores or busy is None or busy <= cores:
        return ""
    return (f"timed while the machine was busy (load {busy:g} on {cores} cores): wall "
            "times are stretched and comparisons are less certain")


def graph_headline(graph: Graph) -> dict:
    """The numbers of ``graph_summary`` that need no round's ledger (cheap on a lazily
    loaded trace: its candidates stay unbuilt)."""
    t = graph.timing
    compiled = t.compiled_ms if t else None
    eager = t.eager_ms if t else None
    final = graph.final_groups or (graph.rounds[-1].groups_after if graph.rounds else ())
    return {
        "nodes": len(graph.nodes),
        "kernels": len(graph.kernels),
        "rounds": len(graph.rounds),
        "fusions": sum(len(r.fusions) for r in graph.rounds),
        "compiled_ms": compiled,
        "eager_ms": eager,
        "time_kind": time_kind(t),
        "launches": sum(k.calls for k in graph.kernels),
        "speedup_vs_eager": eager / compiled if compiled and eager else None,
        "node_reduction": len(graph.nodes) / len(final) if final else None,
        "compile_s": graph.compile_s,
    }


def graph_summary(graph: Graph) -> dict:
    """Headline numbers of one graph.

    ``node_reduction`` is pre-fusion nodes per final group (3.0: a third as many);
    ``speedup_vs_eager`` is eager time over compiled time; missing values are None.
    """
    candidates = [c for r in graph.rounds for c in r.candidates]
    return {
        **graph_headline(graph),
        "benchmark_decisions": sum(c.benchmark is not None for c in candidates),
        "spill_rejections": sum(
            c.outcome == "spill" or bool(c.benchmark and c.benchmark.spill)
            for c in candidates
        ),
    }
