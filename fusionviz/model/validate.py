"""What in a loaded trace does not hold together: a file can parse and build and still
name nodes that are not there, repeat names, loop, or carry impossible numbers.

``graph_problems`` checks one graph's core (what every view reads at once);
``round_problems`` its rounds (the lazily built bulk: call it where the rounds are read
anyway) and ``trace_problems`` what the whole trace says of itself. Each returns one
readable line per kind of problem, with a few examples. The window lists them as
notices and ``fusionviz summary`` prints them; nothing is refused for them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from fusionviz.model.errors import TraceError
from fusionviz.model.trace import CATEGORIES, OUTCOMES, Graph, Trace

EXAMPLES = 3
MAX_BYTES = 1 << 50  # 1 PiB: more than any device holds
STATUSES = ("running", "ok", "error", "crashed", "timeout", "cancelled", "no_graphs")


class _Say(list):
    """Problem lines: ``what: a, b, c (+n more)``, one per kind that has items."""

    def __call__(self, what: str, items: list) -> None:
        if items:
            shown = ", ".join(str(x)[:80] for x in items[:EXAMPLES])
            more = f" (+{len(items) - EXAMPLES} more)" if len(items) > EXAMPLES else ""
            self.append(f"{what}: {shown}{more}")


def graph_problems(graph: Graph) -> list[str]:
    names = [n.name for n in graph.nodes]
    known = set(names)
    out = say = _Say()

    say("node names used twice", [n for n, c in Counter(names).items() if c > 1])
    say("edges naming nodes that are not in the graph",
        [f"{e.src} → {e.dst}" for e in graph.edges if e.src not in known or e.dst not in known])
    say("edges from a node to itself", [e.src for e in graph.edges if e.src == e.dst])
    say("edges that form a cycle, through", _on_cycles(graph, known))
    say("kernels computing nodes that are not in the graph",
        [k.name for k in graph.kernels if any(m not in known for m in k.nodes)])
    say("nodes of an unknown category",
        [f"{n.name} ({n.category})" for n in graph.nodes if n.category not in CATEGORIES])
    say("negative sizes", [n.name for n in graph.nodes if isinstance(n.bytes, int) and n.bytes < 0]
        + [k.name for k in graph.kernels if k.bytes is not None and k.bytes < 0])
    say(f"sizes over {MAX_BYTES:,} bytes (1 PiB)",
        [n.name for n in graph.nodes if _over(n.bytes)]
        + [k.name for k in graph.kernels if _over(k.bytes)])
    say("kernel groups naming nodes that are not in the graph",
        [k.name for k in graph.kernels if any(m not in known for g in k.groups for m in g)])
    say("compile or fusion times that are not finite or are negative",
        [f"{f} {getattr(graph, f)}" for f in ("compile_s", "fusion_s")
         if not _ok_time(getattr(graph, f))])
    say("times that are not finite or are negative",
        [k.name for k in graph.kernels if not _ok_time(k.ms)] + [
            f"graph {f}" for f in ("compiled_ms", "eager_ms", "compiled_wall_ms",
                                   "compiled_device_ms", "eager_wall_ms", "eager_device_ms")
            if graph.timing is not None and not _ok_time(getattr(graph.timing, f))])
    return out


def round_problems(graph: Graph, *, quiet_if_unreadable: bool = False) -> list[str]:
    """What the rounds of ``graph`` name or say that cannot be (reads its rounds). A
    malformed part of them is a line of its own, or nothing with
    ``quiet_if_unreadable`` (the window: whichever view reads it says so)."""
    try:
        return _round_problems(graph)
    except TraceError as e:
        return [] if quiet_if_unreadable else [f"the rounds cannot be read: {e}"]


def _round_problems(graph: Graph) -> list[str]:
    known = {n.name for n in graph.nodes}
    say = _Say()
    lost, outcomes, strays, bad_sizes, bad_times = [], [], [], [], []
    for r in graph.rounds:  # (lazily built, as are their candidates and verdicts)
        where = f"round {r.index}"
        before = [set(g) for g in r.groups_before]
        groups = [*r.groups_before, *r.groups_after]
        for c in r.candidates:
            groups += [c.a, c.b, *c.tried]
            if c.outcome not in OUTCOMES:
                outcomes.append(f"{where} #{c.rank} {c.outcome}")
            if before and not all(any(set(g) <= b for b in before) for g in (c.a, c.b)):
                strays.append(f"{where} #{c.rank} {'+'.join(c.a)} / {'+'.join(c.b)}")
            if c.bytes_saved is not None and abs(c.bytes_saved) > MAX_BYTES:
                bad_sizes.append(f"{where} #{c.rank}")
        for v in r.verdicts:
            groups += [v.a, v.b]
        for f in r.fusions:
            groups += [f.a, f.b]
            if any(_over(x) or (isinstance(x, int) and x < 0)
                   for x in (f.bytes_a, f.bytes_b, f.bytes_fused)):
                bad_sizes.append(f"{where} fusion {'+'.join(f.a)} / {'+'.join(f.b)}")
        if not _ok_time(r.wall_s):
            bad_times.append(f"{where} {r.wall_s}")
        lost += [f"{where}: {m}" for g in groups for m in g if m not in known]
    say("rounds naming nodes that are not in the graph", list(dict.fromkeys(lost)))
    say("candidates of an unknown outcome", outcomes)
    say("candidates whose sides are not among the round's groups", strays)
    say(f"round sizes negative or over {MAX_BYTES:,} bytes", bad_sizes)
    say("round times that are not finite or are negative", bad_times)
    return say


def trace_problems(trace: Trace) -> list[str]:
    """What the trace says of itself that cannot be: the script's status and numbers,
    the compiled callables' times."""
    say = _Say()
    s = trace.script
    say("a script status fusionviz does not know", [s.status] if s.status not in STATUSES
        else [])
    say("script numbers that are not finite or are negative",
        [f"duration_s {s.duration_s}"] if not _ok_time(s.duration_s) else [])
    say("compiled callables' times that are not finite or are negative",
        [e.name for e in trace.entries if not all(
            _ok_time(ms) for part in ("eager", "compiled") for side in ("forward", "backward")
            for samples in (getattr(e, f"{part}_{side}"),) if samples is not None
            for ms in (*samples.wall, *samples.device))])
    return say


def _over(size) -> bool:
    return isinstance(size, int | float) and not isinstance(size, bool) and (
        not math.isfinite(size) or size > MAX_BYTES)


def _ok_time(ms) -> bool:
    return ms is None or (isinstance(ms, int | float) and math.isfinite(ms) and ms >= 0)


def _on_cycles(graph: Graph, known: set[str]) -> list[str]:
    """Nodes left over by a topological sort (Kahn): those on or behind a cycle."""
    indeg: Counter = Counter()
    out_edges: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        if e.src in known and e.dst in known and e.src != e.dst:
            out_edges[e.src].append(e.dst)
            indeg[e.dst] += 1
    ready = [n for n in known if not indeg[n]]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for m in out_edges[n]:
            indeg[m] -= 1
            if not indeg[m]:
                ready.append(m)
    if seen == len(known):
        return []
    return sorted((n for n in known if indeg[n] > 0), key=_natural)


def _natural(name: str):
    digits = "".join(c for c in name if c.isdigit())
    return (int(digits) if digits else -1, name)
