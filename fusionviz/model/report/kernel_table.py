"""A graph's kernels as table rows: what each runs, where in the model, how long,
how fast, and how many registers it took; for the kernel table pane and export."""

from __future__ import annotations

from fusionviz.model.names import Names
from fusionviz.model.report.chart_data import achieved_gb_s
from fusionviz.model.trace import Graph

# (key, header) in display order
COLUMNS = (
    ("name", "kernel"), ("kind", "kind"), ("module", "ops · module"),
    ("launches", "launches"), ("ms", "ms / call"), ("share", "% of graph"),
    ("bytes", "est. bytes"), ("gb_s", "GB/s"), ("regs", "regs"), ("spills", "spills"),
    ("nodes", "nodes"),
)


def kernel_rows(graph: Graph) -> list[dict]:
    """One row per kernel, in call order; times as recorded (device ms per graph call
    on the GPU), ``share`` of the summed kernel time, ``nodes`` its members."""
    names = Names(graph)
    total = sum(k.ms for k in graph.kernels if k.ms is not None)
    return [{
        "name": k.name,
        "kind": k.kind,
        "module": names.about(k.nodes),
        "launches": k.calls or None,
        "ms": k.ms,
        "share": 100.0 * k.ms / total if k.ms is not None and total > 0 else None,
        "bytes": k.bytes,
        "gb_s": achieved_gb_s(k),
        "regs": k.n_regs,
        "spills": k.n_spills,
        "nodes": ", ".join(k.nodes),
    } for k in graph.kernels]


def matches(row: dict, text: str) -> bool:
    """``text`` in the kernel's name, kind, ops and module, or its nodes."""
    text = text.lower()
    return any(text in str(row[k]).lower() for k in ("name", "kind", "module", "nodes"))
