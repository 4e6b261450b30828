"""What in a loaded trace does not hold together: a file can parse and build and still
name nodes that are not there, repeat names, loop, or carry impossible numbers.

``graph_problems`` checks one graph's core (what every view reads at once);
``detail_problems`` its rounds and node details (the lazily built bulk: call it where
they are read anyway) and ``trace_problems`` what the whole trace says of itself.
Every count, size, time, line and index field (``AMOUNTS``) must be finite,
non-negative and at most 2^50; every field naming a node must name one of its graph;
every field with a closed list of values must hold one of them. Each returns one
readable line per kind of problem, with a few examples. The window lists them as
notices and ``fusionviz summary`` prints them; nothing is refused for them.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter, defaultdict

from fusionviz.model import trace as t
from fusionviz.model.comms.step_overlap import step_span_ok
from fusionviz.model.errors import TraceError
from fusionviz.model.trace import CATEGORIES, OUTCOMES, Graph, Samples, Trace

EXAMPLES = 3
MAX_BYTES = 1 << 50  # 1 PiB: more than any device holds
MAX_AMOUNT = 1 << 50  # nor is any count, time (ms or s), line or index this large
STATUSES = ("running", "ok", "error", "crashed", "timeout", "cancelled", "no_graphs")
KINDS = ("forward", "backward", "inference")
ENTRY_KINDS = ("module", "function")
SIDES = ("forward", "backward")
SPILLS = ("", "first", "second", "fused")
# The fields (a number, None, or a tuple of numbers) that count, size or time something,
# or say where: each must be finite, >= 0 and <= MAX_AMOUNT. Node and kernel bytes and
# times, graph and round times, fusion sizes and the script's duration have lines of
# their own below and are not repeated here.
AMOUNTS = {
    t.Access: ("bytes",), t.Origin: ("line",), t.Edge: ("bytes",),
    t.Collective: ("group_size", "bytes"), t.TensorSpec: ("size", "stride"),
    t.Kernel: ("n_regs", "n_spills", "shared", "calls", "ms_spread", "start_ms", "end_ms",
               "launches"),
    t.Timing: ("repeats", "compiled_spread", "eager_spread", "compiled_wall_spread",
               "eager_wall_spread", "profiled_calls", "dynamo_eager_ms",
               "dynamo_eager_wall_ms", "dynamo_eager_device_ms"),
    t.BreakReason: ("line",), t.Graph: ("index",),
    t.Round: ("index", "verdicts_dropped"), t.Candidate: ("rank",),
    t.Benchmark: ("ms_a", "ms_b", "ms_fused", "speedup"),
    t.BenchKernel: ("ms", "n_regs", "n_spills"), t.Reorder: ("index", "wall_s"),
    t.Samples: ("launches", "faults", "repeated", "fresh", "fresh_faults"),
    t.EagerKernel: ("ms", "calls"),
    t.Entry: ("restored",), t.Split: ("piece", "pieces", "bytes"),
    t.Frame: ("line",),
    t.StepSpan: ("graph", "bytes", "shape", "bucket"), t.StepTimeline: ("duration_ms",),
}


# The view that shows the part a problem is in (``Problems.views``): the window says
# so in that view, above what it shows.
GRAPH, KERNELS, ROUNDS, DETAILS, ENTRIES, SCRIPT = (
    "graph", "kernels", "rounds", "details", "entries", "script")


class Problems(list):
    """Problem lines, ``what: a, b, c (+n more)``, one per kind that has items; and
    ``views``: the same lines by the view that shows the broken part."""

    def __init__(self, *parts: Problems) -> None:
        super().__init__(line for part in parts for line in part)
        self.views: dict[str, list[str]] = {}
        for part in parts:
            for view, lines in part.views.items():
                self.views.setdefault(view, []).extend(lines)

    def __call__(self, what: str, items: list, view: str = GRAPH) -> None:
        if items:
            shown = ", ".join(str(x)[:80] for x in items[:EXAMPLES])
            more = f" (+{len(items) - EXAMPLES} more)" if len(items) > EXAMPLES else ""
            self.append(f"{what}: {shown}{more}")
            self.views.setdefault(view, []).append(self[-1])


def graph_problems(graph: Graph) -> Problems:
    names = [n.name for n in graph.nodes]
    known = set(names)
    out = say = Problems()

    say("node names used twice", [n for n, c in Counter(names).items() if c > 1])
    say("edges naming nodes that are not in the graph",
        [f"{e.src} → {e.dst}" for e in graph.edges if e.src not in known or e.dst not in known])
    say("edges from a node to itself", [e.src for e in graph.edges if e.src == e.dst])
    say("edges that form a cycle, through", _on_cycles(graph, known))
    say("kernels computing nodes that are not in the graph",
        [k.name for k in graph.kernels if any(m not in known for m in k.nodes)], KERNELS)
    say("nodes of an unknown category",
        [f"{n.name} ({n.category})" for n in graph.nodes if n.category not in CATEGORIES])
    for view, items in ((GRAPH, graph.nodes), (KERNELS, graph.kernels)):
        say("negative sizes", [x.name for x in items
                               if isinstance(x.bytes, int | float) and x.bytes < 0], view)
        say(f"sizes over {MAX_BYTES:,} bytes (1 PiB)",
            [x.name for x in items if _over(x.bytes)], view)
    say("kernel groups naming nodes that are not in the graph",
        [k.name for k in graph.kernels if any(m not in known for g in k.groups for m in g)],
        KERNELS)
    say("final groups naming nodes that are not in the graph",
        sorted({m for g in graph.final_groups for m in g if m not in known}, key=_natural))
    say("reorders naming nodes that are not in the graph",
        [f"{r.name}: {m}" for r in graph.reorders
         for m in dict.fromkeys(m for g in (*r.order_before, *r.order_after) for m in g)
         if m not in known])
    say("a graph kind fusionviz does not know", [graph.kind] if graph.kind not in KINDS else [])
    say("compile or fusion times that are not finite or are negative",
        [f"{f} {getattr(graph, f)}" for f in ("compile_s", "fusion_s")
         if not _ok_time(getattr(graph, f))])
    say(IMPOSSIBLE, _amounts(graph, f"graph {graph.index}")
        + [x for e in graph.edges for x in _amounts(e, f"edge {e.src} → {e.dst}")]
        + [x for n in graph.nodes if n.collective is not None
           for x in _amounts(n.collective, f"{n.name} collective")]
        + [x for n in graph.nodes if n.extern_call is not None
           for s in (*n.extern_call.inputs, *n.extern_call.outputs)
           for x in _amounts(s, f"{n.name} {s.name}")]
        + [x for b in (*graph.break_reasons, *filter(None, [graph.resumed_after]))
           for x in _amounts(b, "graph break")]
        + (_amounts(graph.frame, "frame") if graph.frame is not None else [])
        + [x for r in graph.reorders for x in _amounts(r, f"reorder {r.name}")])
    say(IMPOSSIBLE, [x for k in graph.kernels for x in _amounts(k, f"kernel {k.name}")
                     + _measures(k.launch, f"kernel {k.name}")]
        + (_amounts(graph.timing, "timing") + _measures(graph.timing.load, "timing")
           if graph.timing is not None else []), KERNELS)
    say("times that are not finite or are negative",
        [k.name for k in graph.kernels if not _ok_time(k.ms)] + [
            f"graph {f}" for f in ("compiled_ms", "eager_ms", "compiled_wall_ms",
                                   "compiled_device_ms", "eager_wall_ms", "eager_device_ms")
            if graph.timing is not None and not _ok_time(getattr(graph.timing, f))], KERNELS)
    return out


def detail_problems(graph: Graph, *, quiet_if_unreadable: bool = False) -> Problems:
    """What the rounds and node details of ``graph`` name or say that cannot be (reads
    them). A malformed part of them is a line of its own, or nothing with
    ``quiet_if_unreadable`` (the window: whichever view reads it says so)."""
    parts = []
    for what, view, check in (("rounds", ROUNDS, _round_problems),
                              ("node details", DETAILS, _node_problems)):
        try:
            parts.append(check(graph))
        except TraceError as e:
            parts.append(unreadable := Problems())
            if not quiet_if_unreadable:
                unreadable.append(f"the {what} cannot be read: {e}")
                unreadable.views[view] = list(unreadable)
    return Problems(*parts)


def _node_problems(graph: Graph) -> Problems:
    say = Problems()
    say(IMPOSSIBLE, [x for n in graph.nodes for a in (*n.reads, *n.writes, *n.origins)
                     for x in _amounts(a, n.name)], DETAILS)
    return say


def _round_problems(graph: Graph) -> Problems:
    known = {n.name for n in graph.nodes}
    say = Problems()
    lost, outcomes, strays, bad_sizes, bad_times = [], [], [], [], []
    amounts, spills = [], []
    for r in graph.rounds:  # (lazily built, as are their candidates and verdicts)
        where = f"round {r.index}"
        before = _groups_of(r.groups_before)
        groups = [*r.groups_before, *r.groups_after]
        amounts += _amounts(r, where)
        for c in r.candidates:
            groups += [c.a, c.b, *c.tried]
            amounts += _amounts(c, f"{where} #{c.rank}") + _measures(c.score, f"{where} #{c.rank}")
            if c.benchmark is not None:
                amounts += _amounts(c.benchmark, f"{where} #{c.rank} benchmark")
                for k in c.benchmark.kernels:
                    groups.append(k.nodes)
                    amounts += _amounts(k, f"{where} #{c.rank} benchmark {k.role}")
                if c.benchmark.spill not in SPILLS:
                    spills.append(f"{where} #{c.rank} {c.benchmark.spill}")
            if c.outcome not in OUTCOMES:
                outcomes.append(f"{where} #{c.rank} {c.outcome}")
            if before and not all(_inside_one(g, before) for g in (c.a, c.b)):
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
    say("rounds naming nodes that are not in the graph", list(dict.fromkeys(lost)), ROUNDS)
    say("candidates of an unknown outcome", outcomes, ROUNDS)
    say("candidates whose sides are not among the round's groups", strays, ROUNDS)
    say(f"round sizes negative or over {MAX_BYTES:,} bytes", bad_sizes, ROUNDS)
    say("round times that are not finite or are negative", bad_times, ROUNDS)
    say("benchmark spills fusionviz does not know", spills, ROUNDS)
    say(IMPOSSIBLE, amounts, ROUNDS)
    return say


def _groups_of(groups) -> dict[str, set[int]]:
    """Node name → the indices of the groups holding it."""
    out: dict[str, set[int]] = {}
    for i, g in enumerate(groups):
        for n in g:
            out.setdefault(n, set()).add(i)
    return out


def _inside_one(group, groups_of: dict[str, set[int]]) -> bool:
    """Whether one group (of those ``_groups_of`` indexed) holds every node of ``group``
    (an empty group is inside any)."""
    common = None
    for n in group:
        common = groups_of.get(n, set()) if common is None else common & groups_of.get(n, set())
        if not common:
            return False
    return True


def trace_problems(trace: Trace) -> Problems:
    """What the trace says of itself that cannot be: the script's status and numbers,
    the compiled callables' times."""
    say = Problems()
    s = trace.script
    say("a script status fusionviz does not know", [s.status] if s.status not in STATUSES
        else [], SCRIPT)
    say("script numbers that are not finite or are negative",
        ([f"duration_s {s.duration_s}"] if not _ok_time(s.duration_s) else [])
        + ([f"exit_code {s.exit_code}"] if s.exit_code is not None
           and not -(1 << 31) <= s.exit_code < 1 << 31 else []), SCRIPT)
    say("compiled callables of a kind fusionviz does not know",
        [f"{e.name} ({e.kind})" for e in trace.entries if e.kind not in ENTRY_KINDS], ENTRIES)
    say("eager kernels of a side fusionviz does not know",
        [f"{e.name} {k.name} ({k.side})" for e in trace.entries for k in e.kernels
         if k.side not in SIDES], ENTRIES)
    say(IMPOSSIBLE, [x for e in trace.entries for x in [
        *_amounts(e, e.name), *_measures(e.load, e.name),
        *(x for k in e.kernels for x in _amounts(k, f"{e.name} eager kernel {k.name}")),
        *(x for samples in _samples(e) for x in _amounts(samples, e.name))]], ENTRIES)
    say("compiled callables' times that are not finite or are negative",
        [e.name for e in trace.entries if not all(
            _ok_time(ms) for samples in _samples(e) for ms in (*samples.wall, *samples.device))],
        ENTRIES)
    step = trace.step
    if step is not None:  # (a span may start before the step: negative is fine)
        say(IMPOSSIBLE, [*_amounts(step, "step"), *(
            x for sp in step.spans for x in _amounts(sp, f"step {sp.name}"))], SCRIPT)
        say("train step spans whose times are not finite or end before they start",
            [sp.name for sp in step.spans if not step_span_ok(sp)], SCRIPT)
    return say


def _samples(entry) -> list[Samples]:
    """Every side an entry timed: eager, compiled and CUDA graphs, forward and backward."""
    return [v for f in dataclasses.fields(entry)
            if isinstance(v := getattr(entry, f.name), Samples)]


def _over(size) -> bool:
    return isinstance(size, int | float) and not isinstance(size, bool) and (
        not math.isfinite(size) or size > MAX_BYTES)


def _ok_time(ms) -> bool:
    return ms is None or (isinstance(ms, int | float) and math.isfinite(ms)
                          and 0 <= ms <= MAX_AMOUNT)


IMPOSSIBLE = "numbers that cannot be (not finite, negative or over 2^50)"


def _amounts(obj, where: str) -> list[str]:
    """``where field value`` for each field of ``obj`` in ``AMOUNTS`` that holds a
    number that cannot be."""
    out = []
    for name in AMOUNTS.get(type(obj), ()):
        value = getattr(obj, name)
        if value is None or (type(value) in (int, float) and 0 <= value <= MAX_AMOUNT) or (
                type(value) is tuple and all(type(v) is int and 0 <= v <= MAX_AMOUNT
                                             for v in value)):
            continue  # the common case, at a glance (a bool is not a number here)
        bad = next((x for x in _numbers(value) if not _ok_time(x)), None)
        if bad is not None:
            out.append(f"{where} {name} {bad!r:.30}")
    return out


def _measures(values: dict, where: str) -> list[str]:
    """A dict of measures (score fields, launch settings, the load while timing): a
    number in it that is not finite (its sign is its own: proximity scores are < 0)."""
    bad = [k for k, v in values.items() if isinstance(v, float) and not math.isfinite(v)]
    return [f"{where} {bad[0]} {values[bad[0]]!r}"] if bad else []


def _numbers(value):
    if isinstance(value, tuple | list):
        for v in value:
            yield from _numbers(v)
    elif value is not None and not isinstance(value, bool):
        yield value


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
