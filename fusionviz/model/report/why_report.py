"""The "why not fused?" answer (``queries.why_not_fused``) as table cells, plain text
and JSON: the window's dialog and ``fusionviz why`` both write it from here, so the
two say the same thing."""

from __future__ import annotations

from fusionviz.model.names import Names
from fusionviz.model.queries import WhyEntry, WhyNot
from fusionviz.model.report.formatting import cell
from fusionviz.model.report.query import json_safe, trace_header
from fusionviz.model.report.tables import plain_text
from fusionviz.model.trace import Benchmark, Graph, Reason, Trace
from fusionviz.model.tracefile.io import to_dict

WHY_SCHEMA = "fusionviz.why/1"
# The columns of the decisions table, one row per recorded decision (``entry_cells``).
COLUMNS = ("round", "phase", "rank", "pair", "outcome", "reasons", "benchmark")


def entry_cells(e: WhyEntry) -> tuple[str, ...]:
    """One decision as the text of ``COLUMNS``."""
    return (str(e.round), e.phase, "" if e.rank is None else str(e.rank),
            f"{cell(e.a)}  ×  {cell(e.b)}", e.outcome,
            "; ".join(reason_text(r) for r in e.reasons), benchmark_text(e.benchmark))


def reason_text(r: Reason) -> str:
    """``"the text (the check that said no)"``, and whether Inductor's log names the
    pair the other way round."""
    check = f"{r.check}; Inductor's log names the pair the other way round" if r.swapped \
        else r.check
    return f"{r.text} ({check})" if check else r.text


def benchmark_text(b: Benchmark | None) -> str:
    """What benchmark_fusion measured for the pair ("" when it did not)."""
    if b is None:
        return ""
    if b.spill:
        return f"vetoed: {b.spill} kernel spills registers"
    timed = [f"{name} {ms:.4g} ms" for name, ms in (("a", b.ms_a), ("b", b.ms_b),
                                                   ("fused", b.ms_fused)) if ms is not None]
    speed = f", speedup {b.speedup:.2f}×" if b.speedup is not None else ""
    return ", ".join(timed) + speed


def why_text(why: WhyNot, names: Names) -> str:
    """The answer as the dialog shows it: the two nodes by readable name, the summary,
    then one line per recorded decision."""
    lines = [names.label(why.node_a), f"× {names.label(why.node_b)}", "", why.summary]
    if why.entries:
        lines += ["", plain_text(COLUMNS, (entry_cells(e) for e in why.entries))]
    return "\n".join(lines)


def why_json(why: WhyNot, names: Names) -> dict:
    """The answer as plain JSON data (the ``fusionviz.why/1`` document without its
    trace header): both nodes, whether and where they fused, the summary, and every
    recorded decision with its reasons and benchmark."""
    return {
        "a": {"name": why.node_a, "label": names.label(why.node_a)},
        "b": {"name": why.node_b, "label": names.label(why.node_b)},
        "fused": why.fused,
        "fused_round": why.fused_round,
        "same_kernel": why.same_kernel,
        "summary": why.summary,
        "decisions": [{
            "round": e.round,
            "phase": e.phase,
            "rank": e.rank,
            "a": list(e.a),
            "b": list(e.b),
            "tried": [list(g) for g in e.tried],
            "outcome": e.outcome,
            "reasons": [to_dict(r) for r in e.reasons],
            "benchmark": None if e.benchmark is None else to_dict(e.benchmark),
            "cells": dict(zip(COLUMNS, entry_cells(e), strict=True)),  # as the dialog shows it
        } for e in why.entries],
    }


def why_document(trace: Trace, path: str, graph: Graph, why: WhyNot) -> dict:
    """The ``fusionviz.why/1`` document: the trace header, the graph, the answer."""
    return json_safe({
        "schema": WHY_SCHEMA,
        **trace_header(trace, path),
        "graph": {"index": graph.index, "kind": graph.kind, "compile_id": graph.compile_id},
        **why_json(why, Names(graph)),
    })
