"""Compare two traces of the same script: the experiment table, verdicts and kernels.

Graphs are paired by position (same script, same torch: the same graphs in the same
order); kernels by the set of scheduler nodes they compute, since kernel names can
change between variants while node names stay stable on one torch version.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionviz.model.experiment.compare_entries import (
    EntryDelta,
    entry_deltas,
    entry_metric_rows,
    entry_table,
)
from fusionviz.model.queries import graph_summary
from fusionviz.model.report.formatting import number
from fusionviz.model.report.tables import csv_text, markdown_text
from fusionviz.model.trace import Graph, Kernel, Trace

Row = tuple[str, object, object, str]  # metric, value in A, value in B, change


@dataclass(frozen=True)
class VerdictChange:
    """A candidate pair whose last recorded outcome differs between A and B."""

    graph: int
    pair: str
    outcome_a: str
    outcome_b: str


@dataclass(frozen=True)
class KernelDelta:
    """A kernel (matched by its nodes) present in A, B or both, with its times."""

    graph: int
    nodes: tuple[str, ...]
    name_a: str
    name_b: str
    ms_a: float | None
    ms_b: float | None


@dataclass(frozen=True)
class Comparison:
    """Everything the comparison view and the report show."""

    label_a: str
    label_b: str
    rows: tuple[Row, ...]
    verdicts: tuple[VerdictChange, ...]
    kernels: tuple[KernelDelta, ...]
    entries: tuple[EntryDelta, ...] = ()  # the callables compiled, eager vs compiled

    @property
    def added(self) -> tuple[KernelDelta, ...]:
        return tuple(k for k in self.kernels if not k.name_a)

    @property
    def removed(self) -> tuple[KernelDelta, ...]:
        return tuple(k for k in self.kernels if not k.name_b)


def _sum(values) -> float | None:
    values = [v for v in values if v is not None]
    return sum(values) if values else None


def metrics(trace: Trace) -> dict[str, float | int | None]:
    """The seed experiment's metrics for a whole trace (its graphs' summaries, summed)."""
    per_graph = [graph_summary(g) for g in trace.graphs]
    compiled = _sum(s["compiled_ms"] for s in per_graph)
    eager = _sum(s["eager_ms"] for s in per_graph)
    return {
        "Compiled runtime (ms)": compiled,
        "Eager runtime (ms)": eager,
        "Compiled wall time (ms)": _sum(graph_time(g, "compiled_wall_ms") for g in trace.graphs),
        "Eager wall time (ms)": _sum(graph_time(g, "eager_wall_ms") for g in trace.graphs),
        "Compiled speedup vs eager": eager / compiled if compiled and eager else None,
        "FX compile time (s)": sum(s["compile_s"] for s in per_graph),
        "Fusion rounds": sum(s["rounds"] for s in per_graph),
        "Net node reduction": sum(len(g.nodes) - len(g.final_groups) for g in trace.graphs),
        "Kernels": sum(s["kernels"] for s in per_graph),
        "Benchmark decisions": sum(s["benchmark_decisions"] for s in per_graph),
        "Spill rejections": sum(s["spill_rejections"] for s in per_graph),
        "Kernel launches per call": sum(k.calls for g in trace.graphs for k in g.kernels),
    }


# metric → the Timing fields of its value and of its (min, max) spread
TIMES = {
    "Compiled runtime (ms)": ("compiled_ms", "compiled_spread"),
    "Eager runtime (ms)": ("eager_ms", "eager_spread"),
    "Compiled wall time (ms)": ("compiled_wall_ms", "compiled_wall_spread"),
    "Eager wall time (ms)": ("eager_wall_ms", "eager_wall_spread"),
}


def graph_time(g: Graph, name: str):
    """A ``Timing`` field of ``g`` (None where the graph was not timed)."""
    return getattr(g.timing, name) if g.timing is not None else None


def spreads(trace: Trace) -> dict[str, tuple[float, float]]:
    """(min, max) of each time metric over the trace's graphs (the sums of their
    samples' minima and maxima); left out where a graph has no spread recorded."""
    out = {}
    for metric, (_value, spread_of) in TIMES.items():
        ranges = [graph_time(g, spread_of) for g in trace.graphs]
        if trace.graphs and all(r and len(r) == 2 for r in ranges):
            out[metric] = (sum(r[0] for r in ranges), sum(r[1] for r in ranges))
    compiled, eager = out.get("Compiled runtime (ms)"), out.get("Eager runtime (ms)")
    if compiled and eager and compiled[0] > 0:  # the ratio's extremes: a range too
        out["Compiled speedup vs eager"] = (eager[0] / compiled[1], eager[1] / compiled[0])
    return out


def within_noise(a: tuple[float, float] | None, b: tuple[float, float] | None) -> bool:
    """Whether two measurements' (min, max) spreads overlap: their difference is not
    told apart from run-to-run noise."""
    return bool(a and b) and a[0] <= b[1] and b[0] <= a[1]


def _change(a, b, spread_a=None, spread_b=None) -> str:
    if a is None or b is None:
        return ""
    if within_noise(spread_a, spread_b):
        return "within noise"
    if isinstance(a, int) and isinstance(b, int):
        return f"{b - a:+d}"
    if a == 0:
        return ""
    return f"{(b - a) / abs(a) * 100:+.1f}%"


def _outcomes(g: Graph) -> dict[frozenset, str]:
    out = {}
    for r in g.rounds:
        for c in r.candidates:
            out[frozenset((c.a, c.b))] = c.outcome
    return out


def _pair_label(key: frozenset) -> str:
    return " + ".join(sorted("_".join(g) for g in key))


def _verdicts(i: int, ga: Graph, gb: Graph) -> list[VerdictChange]:
    a, b = _outcomes(ga), _outcomes(gb)
    keys = sorted(a.keys() | b.keys(), key=_pair_label)
    return [
        VerdictChange(i, _pair_label(k), a.get(k, "not a candidate"), b.get(k, "not a candidate"))
        for k in keys
        if a.get(k) != b.get(k)
    ]


def _kernels(i: int, ga: Graph, gb: Graph) -> list[KernelDelta]:
    def by_nodes(g: Graph) -> dict[frozenset, Kernel]:
        return {frozenset(k.nodes): k for k in g.kernels}

    a, b = by_nodes(ga), by_nodes(gb)
    order = list(a) + [k for k in b if k not in a]
    out = []
    for key in order:
        ka, kb = a.get(key), b.get(key)
        nodes = (ka or kb).nodes
        out.append(KernelDelta(i, tuple(nodes), ka.name if ka else "", kb.name if kb else "",
                               ka.ms if ka else None, kb.ms if kb else None))
    return out


def _origin_names(node) -> frozenset[str]:
    return frozenset(o.name for o in node.origins)


def node_mapping(ga: Graph, gb: Graph) -> dict[str, str]:
    """Node of ``ga`` → the same node in ``gb``: by name where the name exists in ``gb``
    and the two nodes come from the same FX nodes (or neither records any); otherwise
    the ``gb`` node sharing most FX origins (variants compiled under other settings
    can number their nodes differently)."""
    b_by_name = {n.name: n for n in gb.nodes}
    by_origin: dict[str, list] = {}
    for n in gb.nodes:
        for o in _origin_names(n):
            by_origin.setdefault(o, []).append(n)
    out = {}
    for n in ga.nodes:
        origins = _origin_names(n)
        same = b_by_name.get(n.name)
        if same is not None and (_origin_names(same) == origins or not origins):
            out[n.name] = n.name
            continue
        scores: dict[str, int] = {}
        for o in origins:
            for m in by_origin.get(o, ()):
                scores[m.name] = scores.get(m.name, 0) + 1
        if scores:
            out[n.name] = max(scores, key=lambda k: (scores[k], k == n.name))
        elif same is not None:
            out[n.name] = n.name
    return out


# the rows that read the graphs' eager figures: told apart only on the same baseline
EAGER_ROWS = ("Eager runtime (ms)", "Eager wall time (ms)", "Compiled speedup vs eager")
BASELINE = "Eager baseline"
DYNAMO_EAGER = "Dynamo graph eager forward (ms)"
NOT_COMPARABLE = "not comparable"


def eager_baseline(trace: Trace) -> str:
    """What the graphs' eager figures are: ``your program`` (the callable the user
    compiled, run eagerly), ``Dynamo graph`` (the graph Dynamo captured, run eagerly),
    ``none``, or a mix (``your program ×1, Dynamo graph ×2``); "" where no graph says
    (traces recorded before ``Timing.eager_source``)."""
    counts: dict[str, int] = {}
    for g in trace.graphs:
        kind = eager_kind(g)
        if kind:
            counts[kind] = counts.get(kind, 0) + 1
    if len(counts) <= 1:
        return next(iter(counts), "")
    return ", ".join(f"{kind} ×{n}" for kind, n in counts.items())


def eager_kind(g: Graph) -> str:
    """``your program``, ``Dynamo graph`` or ``none``: what the graph's eager figure
    timed (its ``eager_source`` up to the first comma or colon); "" where not said."""
    source = g.timing.eager_source if g.timing is not None else ""
    return source.split(",")[0].split(":")[0]


def dynamo_eager_forward(trace: Trace) -> float | None:
    """The forward graphs Dynamo captured, run eagerly, summed (main clock): kept beside
    the program's own eager figure where that is the baseline; None where a forward
    graph has neither (backward graphs are left out: their figure is not always taken)."""
    values = []
    for g in trace.graphs:
        t = g.timing
        if g.kind == "backward" or t is None:
            continue
        if t.dynamo_eager_ms is None and not t.eager_source.startswith("Dynamo graph"):
            return None
        values.append(t.dynamo_eager_ms if t.dynamo_eager_ms is not None else t.eager_ms)
    return _sum(values) if None not in values else None


def _eager_rows(a: Trace, b: Trace, rows: list[Row]) -> list[Row]:
    """``rows`` with what eager is on each side (after the speedup) and, where either
    side's eager is the program's, the Dynamo graph's eager forward beside it; eager
    rows of two different baselines say so instead of a change."""
    base_a, base_b = eager_baseline(a), eager_baseline(b)
    if base_a != base_b:
        rows = [(m, x, y, NOT_COMPARABLE if m in EAGER_ROWS and x is not None
                 and y is not None else ch) for m, x, y, ch in rows]
    extra: list[Row] = []
    if base_a or base_b:
        extra.append((BASELINE, base_a, base_b, "" if base_a == base_b else "differs"))
    if any(g.timing is not None and g.timing.dynamo_eager_ms is not None
           for g in (*a.graphs, *b.graphs)):
        da, db = dynamo_eager_forward(a), dynamo_eager_forward(b)
        extra.append((DYNAMO_EAGER, da, db, _change(da, db)))
    at = next((i + 1 for i, r in enumerate(rows) if r[0] == EAGER_ROWS[-1]), len(rows))
    return rows[:at] + extra + rows[at:]


def compare(a: Trace, b: Trace, label_a: str = "A", label_b: str = "B") -> Comparison:
    """Compare trace ``b`` (the variant) against ``a`` (the baseline)."""
    ma, mb = metrics(a), metrics(b)
    sa, sb = spreads(a), spreads(b)
    rows = [(name, ma[name], mb[name], _change(ma[name], mb[name], sa.get(name),
                                               sb.get(name))) for name in ma]
    verdicts, kernels = [], []
    for i, (ga, gb) in enumerate(zip(a.graphs, b.graphs)):
        verdicts += _verdicts(i, ga, gb)
        kernels += _kernels(i, ga, gb)
    return Comparison(label_a, label_b, tuple(_eager_rows(a, b, rows)), tuple(verdicts),
                      tuple(kernels), entry_deltas(a, b))


def table_markdown(c: Comparison) -> str:
    """The experiment table (seed 000's shape) as Markdown."""
    return markdown_text(["Metric", c.label_a, c.label_b, "Change"],
                         ([m, number(x), number(y), ch] for m, x, y, ch in c.rows)).rstrip("\n")


def table_csv(c: Comparison) -> str:
    """The metrics table, then each compiled callable's figures in the same shape
    (``BertModel (module) forward, device: compiled (ms)``, A, B, change)."""
    return csv_text(["metric", c.label_a, c.label_b, "change"],
                    [*c.rows, *entry_metric_rows(c.entries)])


ENTRIES_TITLE = "### Compiled vs eager, per compiled callable"


def eager_note(c: Comparison) -> str:
    """What the eager rows of the table are, where the baseline is the user's program:
    its wall time is the whole call's, timed in turns with the compiled callable, the
    compiled wall time the compiled graphs' own, timed apart ("" otherwise)."""
    bases = {r[1] for r in c.rows if r[0] == BASELINE} | {r[2] for r in c.rows
                                                           if r[0] == BASELINE}
    if not any("your program" in str(x) for x in bases):
        return ""
    return ("Eager is your program run eagerly: the function or module passed to "
            "torch.compile, for each graph that is all it compiled. Its wall time is the "
            "whole call's, timed in turns with the compiled callable; the compiled wall "
            "time above is the compiled graphs' own, timed apart: set wall clocks side by "
            "side per compiled callable"
            + (" (below)." if c.entries else "."))


def entries_markdown(c: Comparison) -> str:
    """Each compiled callable, eager vs compiled in A and B ("" where neither has any)."""
    if not c.entries:
        return ""
    headers, rows = entry_table(c.entries, c.label_a, c.label_b)
    return "\n".join([ENTRIES_TITLE, "", markdown_text(headers, (
        [number(v) for v in row] for row in rows)).rstrip("\n"), "", ENTRIES_LEGEND])


ENTRIES_LEGEND = (
    "Medians per call; a change or a speedup is said only where the middle halves of "
    "the samples do not overlap (else within noise); noisy: a figure's middle half spreads "
    "over a quarter of its median; uncertain: other processes kept the cores busy while "
    "the calls were timed.")


def report_markdown(c: Comparison, title: str = "") -> str:
    """Table, compiled callables, verdict changes and kernel deltas as one Markdown
    report."""
    parts = [f"## {title}\n" if title else "", table_markdown(c)]
    if eager_note(c):
        parts += ["", eager_note(c)]
    if c.entries:
        parts += ["", entries_markdown(c)]
    if c.verdicts:
        parts += ["", "### Verdicts that changed", "", markdown_text(
            ["graph", "pair", c.label_a, c.label_b],
            ([v.graph, v.pair, v.outcome_a, v.outcome_b] for v in c.verdicts))]
    changed = [k for k in c.kernels if k.name_a != k.name_b or k.ms_a != k.ms_b]
    if changed:
        parts += ["", "### Kernels", "", markdown_text(
            ["graph", "nodes", c.label_a, "ms", c.label_b, "ms"],
            ([k.graph, ", ".join(k.nodes), k.name_a or "—", number(k.ms_a), k.name_b or "—",
              number(k.ms_b)] for k in changed))]
    return "\n".join(parts).strip() + "\n"
