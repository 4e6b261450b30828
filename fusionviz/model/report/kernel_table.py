"""A graph's kernels as table rows: what each runs, where in the model, how long,
how fast, and how many registers it took; for the kernel table pane and export. And
the same rows grouped by the work they do (``op_groups``)."""

from __future__ import annotations

from fusionviz.model.names import Names, main_ops
from fusionviz.model.report.chart_data import achieved_gb_s
from fusionviz.model.report.extern_facts import ExternFacts, extern_facts, short_dtype
from fusionviz.model.report.formatting import byte_size, significant
from fusionviz.model.trace import Graph, Kernel

# (key, header) in display order
COLUMNS = (
    ("name", "kernel"), ("kind", "kind"), ("module", "ops · module"),
    ("launches", "launches"), ("ms", "ms / call"), ("share", "% of graph"),
    ("bytes", "est. bytes"), ("gb_s", "GB/s"), ("dtype", "dtype"), ("tflops", "TFLOP/s"),
    ("peak", "% of peak"), ("regs", "regs"), ("spills", "spills"), ("nodes", "nodes"),
)
TEXT_KEYS = ("name", "kind", "module", "dtype", "nodes", "op")  # the columns of text
FLAG = "⚠"  # marks a matmul or convolution left in float32 (``ExternFacts.fp32_warning``)


def kernel_rows(graph: Graph, env: dict | None = None) -> list[dict]:
    """One row per kernel, in call order; times as recorded (device ms per graph call
    on the GPU), ``share`` of the summed kernel time, ``nodes`` its members. An extern
    kernel's facts (``extern_facts``; ``env``: the trace's) give its ``dtype``,
    ``tflops`` and ``peak`` (% of the GPU's peak for its math); ``op`` is the work it
    does (what ``op_groups`` groups by), ``flag`` the fp32 warning, ``facts`` them all."""
    names = Names(graph)
    facts = extern_facts(graph, env)
    total = sum(k.ms for k in graph.kernels if k.ms is not None)
    rows = []
    for k in graph.kernels:
        f = facts.get(k.name)
        rows.append({
            "name": k.name,
            "kind": k.kind,
            "module": names.about(k.nodes),
            "launches": k.calls or None,
            "ms": k.ms,
            "share": 100.0 * k.ms / total if k.ms is not None and total > 0 else None,
            "bytes": k.bytes,
            "gb_s": achieved_gb_s(k),
            "dtype": _dtype(f),
            "tflops": f.tflop_s if f else None,
            "peak": f.peak_share if f else None,
            "regs": k.n_regs,
            "spills": k.n_spills,
            "nodes": ", ".join(k.nodes),
            "op": f.signature if f else _work(names, k),
            "flag": f.fp32_warning if f else "",
            "facts": f,
        })
    return rows


def _dtype(f: ExternFacts | None) -> str:
    """``bf16``, ``fp32 ⚠`` (flagged), ``fp8, bf16``; "" when not known."""
    if f is None or not f.dtypes:
        return ""
    text = ", ".join(map(short_dtype, f.dtypes[:2]))
    return f"{text} {FLAG}" if f.fp32_warning else text


def _work(names: Names, k: Kernel) -> str:
    """What a generated kernel does, for grouping: ``poi · add, gelu``."""
    ops = list(dict.fromkeys(o for m in k.nodes if m in names.nodes
                             for o in main_ops(names.nodes[m])))
    shown = ", ".join(ops[:3]) + (", …" if len(ops) > 3 else "")
    return f"{k.kind} · {shown}" if shown else k.kind


def op_groups(rows: list[dict]) -> list[dict]:
    """The rows grouped by ``op`` (``12 × addmm 2048×768×3072 bf16``), slowest first:
    ``op``, ``rows`` (the kernels' rows), ``kernels``, ``launches``, ``ms`` and
    ``share`` summed, ``tflops`` (their FLOPs over their time) and ``peak``, ``dtype``,
    ``flag`` (the first kernel's fp32 warning)."""
    groups: dict[str, list[dict]] = {}
    for row in rows:
        groups.setdefault(row["op"], []).append(row)
    out = []
    for op, members in groups.items():
        timed = [r for r in members if r["ms"] is not None]
        ms = sum(r["ms"] for r in timed) if timed else None
        rated = [r for r in timed if r["tflops"] is not None and r["ms"] > 0]
        rated_ms = sum(r["ms"] for r in rated)
        tflops = (sum(r["tflops"] * r["ms"] for r in rated) / rated_ms) if rated_ms else None
        peaks = [r["facts"].peak_tflop_s for r in rated if r["facts"].peak_tflop_s]
        out.append({
            "op": op,
            "rows": members,
            "kernels": len(members),
            "launches": sum(r["launches"] or 0 for r in members) or None,
            "ms": ms,
            "share": sum(r["share"] for r in members if r["share"] is not None)
            if any(r["share"] is not None for r in members) else None,
            "dtype": members[0]["dtype"],
            "tflops": tflops,
            "peak": 100.0 * tflops / peaks[0] if tflops is not None and peaks
            and len(set(peaks)) == 1 else None,
            "flag": next((r["flag"] for r in members if r["flag"]), ""),
        })
    out.sort(key=lambda g: -(g["ms"] or 0.0))
    return out


def sort_value(key: str, value):
    """What a cell sorts by: its raw value; a missing one below every number, or first
    among texts."""
    if value is not None:
        return value
    return "" if key in TEXT_KEYS else -1.0


def cell_text(key: str, value) -> str:
    """A cell of the table as shown: sizes in binary units, shares and rates rounded,
    "" for an unknown value."""
    if value is None:
        return ""
    if key == "bytes":
        return byte_size(value)
    if key == "share":
        return f"{value:.1f}"
    if key in ("gb_s", "peak"):
        return f"{value:.0f}"
    if key == "tflops":  # a GPU's hundreds, a CPU's thousandths
        return significant(value) if value >= 1 else "< 0.001" if value < 0.001 \
            else f"{value:.3f}"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def matches(row: dict, text: str) -> bool:
    """``text`` in the kernel's name, kind, ops and module, dtype, work, or its nodes."""
    text = text.lower()
    return any(text in str(row[k]).lower()
               for k in ("name", "kind", "module", "dtype", "op", "nodes"))
