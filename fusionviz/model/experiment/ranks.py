"""The ranks of one multi-process capture, compared: do they make the same decisions?

Every rank of a ``torchrun`` job compiles its own graphs, and Inductor's choices there
can differ (autotuning and ``benchmark_fusion`` are timing-based; a rank may see other
shapes). ``differences`` lists what differs between rank 0 and each other rank;
``finish_ranks`` writes the capture folder as an experiment of kind ``ranks`` (one
variant per rank), so the comparison view opens any two ranks side by side.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from fusionviz.model.comms.collective_times import CollectiveTime, collective_times
from fusionviz.model.experiment import compare as cmp
from fusionviz.model.experiment.runs import Experiment, Variant, read_meta
from fusionviz.model.report.formatting import collective_text, number
from fusionviz.model.report.tables import csv_text, markdown_text
from fusionviz.model.trace import Graph, Trace

KIND = "ranks"
SLOWER = 0.25  # a kernel time differing by more than this share (beyond noise) is listed
MIN_MS = 0.001  # … and by more than this (a microsecond): shorter gaps are timer noise


@dataclass(frozen=True)
class RankDiff:
    """How one rank differs from rank 0: its decisions, and its times beyond noise."""

    rank: int
    decisions: list[str]
    times: list[str]


def compare_ranks(traces: list[Trace]) -> list[RankDiff]:
    """Every rank after the first against rank 0 (each pair compared once)."""
    out = []
    for rank, t in enumerate(traces[1:], start=1):
        c = cmp.compare(traces[0], t)
        out.append(RankDiff(rank, differences(traces[0], t, c),
                            time_differences(traces[0], t, c)))
    return out


def differences(a: Trace, b: Trace, c: cmp.Comparison | None = None) -> list[str]:
    """What rank ``b`` decided otherwise than rank ``a``: graphs, nodes, kernels and
    fusion verdicts (benchmark outcomes included); [] when they agree. ``c``: their
    ``compare.compare``, when the caller has it."""
    out = []
    if len(a.graphs) != len(b.graphs):
        out.append(f"graphs: {len(a.graphs)} vs {len(b.graphs)}")
    for ga, gb in zip(a.graphs, b.graphs, strict=False):
        out += _graph_differences(ga, gb)
    c = c or cmp.compare(a, b)
    out += [f"graph {v.graph}: {v.pair}: {v.outcome_a} vs {v.outcome_b}" for v in c.verdicts]
    for k in c.kernels:
        if not (k.name_a and k.name_b):
            out.append(f"graph {k.graph}: kernel of {', '.join(k.nodes)} only on one rank "
                       f"({k.name_a or k.name_b})")
        elif k.name_a != k.name_b:
            out.append(f"graph {k.graph}: kernel of {', '.join(k.nodes)} named {k.name_a} vs "
                       f"{k.name_b}")
    return out


def time_differences(a: Trace, b: Trace, c: cmp.Comparison | None = None) -> list[str]:
    """Compiled runtimes and kernel times of ``b`` more than SLOWER apart from ``a``'s
    (beyond their spreads, for whole graphs). Collectives and their waits are left out:
    their time is mostly waiting for the slowest rank, so it moves between them."""
    c = c or cmp.compare(a, b)
    out = [f"graph {k.graph}: {k.name_a} took {number(k.ms_a)} vs {number(k.ms_b)} ms"
           for k in c.kernels
           if k.name_a == k.name_b and not _collective(k.name_a) and _apart(k.ms_a, k.ms_b)]
    for metric, ma, mb, change in c.rows:
        if metric.endswith("(ms)") and "runtime" in metric.lower() and change not in (
                "", "within noise") and _apart(ma, mb):
            out.append(f"{metric}: {number(ma)} vs {number(mb)} ({change})")
    return out


def _collective(kernel_name: str) -> bool:
    return "c10d_functional." in kernel_name


def _graph_differences(ga: Graph, gb: Graph) -> list[str]:
    out = []
    if len(ga.nodes) != len(gb.nodes):
        out.append(f"graph {ga.index}: {len(ga.nodes)} vs {len(gb.nodes)} nodes")
    if len(ga.rounds) != len(gb.rounds):
        out.append(f"graph {ga.index}: {len(ga.rounds)} vs {len(gb.rounds)} fusion rounds")
    return out + _reorder_differences(ga, gb)


def _reorder_differences(ga: Graph, gb: Graph) -> list[str]:
    """Post-fusion reordering passes that ran or ordered otherwise (ranks that issue
    their collectives in another order can wait on each other for ever)."""
    names_a, names_b = [r.name for r in ga.reorders], [r.name for r in gb.reorders]
    if names_a != names_b:
        return [f"graph {ga.index}: reordering passes {', '.join(names_a) or 'none'} vs "
                f"{', '.join(names_b) or 'none'}"]
    out = []
    for ra, rb in zip(ga.reorders, gb.reorders):
        a, b = [frozenset(g) for g in ra.order_after], [frozenset(g) for g in rb.order_after]
        if a != b:
            k = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            shown = " vs ".join("+".join(sorted(o[k])) if k < len(o) else "end" for o in (a, b))
            out.append(f"graph {ga.index}: pass {ra.index} ({ra.name}) left another order "
                       f"(position {k + 1}: {shown})")
    return out


def _apart(x: float | None, y: float | None) -> bool:
    """Times far enough apart to list (each is a median of several runs)."""
    if x is None or y is None or min(x, y) <= 0:
        return False
    return abs(x - y) > MIN_MS and abs(x - y) / min(x, y) > SLOWER


def agreement(traces: list[Trace]) -> dict[int, list[str]]:
    """rank → how its decisions differ from rank 0's, for every rank after the first."""
    return {d.rank: d.decisions for d in compare_ranks(traces)}


def agree(traces: list[Trace]) -> bool:
    """Whether every rank made rank 0's graphs, kernels and fusion decisions."""
    return not any(d.decisions for d in compare_ranks(traces))


def report_markdown(script: str, traces: list[Trace],
                    diffs: list[RankDiff] | None = None) -> str:
    """Whether the ranks agree, what differs, the times that differ, and each rank's
    headline numbers. ``diffs``: ``compare_ranks(traces)``, when the caller has it."""
    diffs = compare_ranks(traces) if diffs is None else diffs
    name = Path(script).name or "the script"
    lines = [f"## {len(traces)} ranks of {name}", ""]
    lines.append("Ranks agree: the same graphs, kernels and fusion decisions on every rank."
                 if not any(d.decisions for d in diffs) else
                 "Ranks disagree: some rank made other graphs, kernels or fusion decisions.")
    lines.append("")
    for d in diffs:
        if d.decisions:
            lines += [f"### rank {d.rank} differs from rank 0 ({len(d.decisions)})", "",
                      *[f"- {x}" for x in d.decisions], ""]
    for d in diffs:
        if d.times:
            lines += [f"### times of rank {d.rank} beyond noise (vs rank 0)", "",
                      *[f"- {x}" for x in d.times], ""]
    lines += ["", markdown_text(["rank", *_METRICS], _metric_rows(traces))]
    lines += collective_section(traces)
    return "\n".join(lines).rstrip() + "\n"


def collective_section(traces: list[Trace]) -> list[str]:
    """Markdown: each collective's time on every rank (and its wait), and which rank
    the others waited for; [] when no graph has a collective."""
    per_rank = [[collective_times(g) for g in t.graphs] for t in traces]
    rows = []
    for gi, first in enumerate(per_rank[0] if per_rank else ()):
        for ci, c in enumerate(first):
            times = [ranks[gi][ci] if gi < len(ranks) and ci < len(ranks[gi]) else None
                     for ranks in per_rank]
            rows.append([gi, f"{c.node} {collective_text(c.collective)}",
                         *[_rank_time(t) for t in times], _waited_for(times)])
    if not rows:
        return []
    head = ["graph", "collective", *[f"rank {r}" for r in range(len(traces))],
            "waited for"]
    return ["", "### collectives on each rank", "",
            "Each collective's time on the rank (its wait in brackets): on the CPU and "
            "with gloo, from its issue to the end of its wait; with NCCL, its kernel's "
            "device time. The rank that waited least arrived last: the others waited "
            "for it.", "", markdown_text(head, rows)]


def _rank_time(t: CollectiveTime | None) -> str:
    if t is None or t.time_ms is None:
        return "—"
    wait = "" if t.on_device or t.wait_ms is None else f" (wait {t.wait_ms:.3f})"
    return f"{t.time_ms:.3f} ms{wait}"


def _waited_for(times: list[CollectiveTime | None]) -> str:
    """The rank the others waited for, where the waits differ beyond noise."""
    waits = [(t.device_ms if t.on_device else t.wait_ms) if t is not None else None
             for t in times]
    known = [(w, r) for r, w in enumerate(waits) if w is not None]
    if len(known) < 2:
        return "—"
    (low, rank), high = min(known), max(w for w, _ in known)
    return f"rank {rank}" if _apart(low, high) else "none (within noise)"


_METRICS = ("status", "graphs", "kernels", "Compiled runtime (ms)")


def _metric_rows(traces: list[Trace]) -> list[list]:
    rows = []
    for rank, t in enumerate(traces):
        m = cmp.metrics(t)
        rows.append([rank, t.script.status, len(t.graphs), sum(len(g.kernels) for g in t.graphs),
                     number(m.get("Compiled runtime (ms)"))])
    return rows


def finish_ranks(script: str, folder: str | Path, traces: list[Trace],
                 files: list[str] | None = None) -> Experiment:
    """Write the ranks' comparison into ``folder``: report.md, report.csv and an
    experiment.json of kind ``ranks`` that the comparison view opens."""
    folder = Path(folder)
    files = files or [f"rank{r}.json.gz" for r in range(len(traces))]
    variants = [Variant(f"rank {r}", f, t) for r, (f, t) in enumerate(zip(files, traces))]
    diffs = compare_ranks(traces)
    report = report_markdown(script, traces, diffs)
    (folder / "report.md").write_text(report)
    (folder / "report.csv").write_text(csv_text(["rank", *_METRICS], _metric_rows(traces)))
    meta = {"kind": KIND, "script": script, "report": "report.md",
            "agree": not any(d.decisions for d in diffs),
            "variants": [{"label": v.label, "trace": v.file, "status": v.trace.script.status}
                         for v in variants]}
    (folder / "experiment.json").write_text(json.dumps(meta, indent=1))
    return Experiment(KIND, script, tuple(variants), report)


def rank_siblings(path: str | Path) -> list[tuple[str, Path]]:
    """(label, trace path) of every rank, when ``path`` is one rank's trace in the
    folder of a multi-rank capture ([] otherwise): what the explorer's rank selector
    lists. Reads only the folder's experiment.json."""
    folder = Path(path).parent
    try:  # read within bounds, its traces kept in the folder (read_meta)
        meta = read_meta(folder)
    except ValueError:  # TraceError: not a readable experiment.json, so no siblings
        return []
    return list(meta.variants) if meta.kind == KIND else []
