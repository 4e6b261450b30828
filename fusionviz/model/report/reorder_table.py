"""A post-fusion reordering pass as table rows and a one-line summary: the fused nodes
in their new order, which ones the pass moved, and for each collective how much other
work now runs between it and its wait."""

from __future__ import annotations

from fusionviz.model.comms.reorders import comm_names, moves, overlaps
from fusionviz.model.names import Names
from fusionviz.model.trace import Graph, Reorder


def reorder_rows(graph: Graph, step: Reorder, names: Names | None = None) -> list[dict]:
    """One row per fused node, in the order ``step`` left them: position, was (its
    position before, 1-based), moved (``↓2``: two places later), the node and what it
    is, its kind (compute or the collective's kind) and, for a collective, the kernels
    of other work between it and its wait (``0 → 2``). ``group_a``/``group_b``
    (not shown): the node and, for a collective, its wait, to highlight."""
    names = names or Names(graph)
    before = {frozenset(g): i for i, g in enumerate(step.order_before)}
    moved = {frozenset(m.group) for m in moves(step, comm_names(graph))}
    kinds = {n.name: n.collective.kind for n in graph.nodes if n.collective is not None}
    over = {o.collective: o for o in overlaps(graph, step)}
    at = {name: g for g in step.order_after for name in g}
    rows = []
    for i, group in enumerate(step.order_after):
        key = frozenset(group)
        was = before.get(key)
        o = next((over[m] for m in group if m in over), None)
        rows.append({
            "position": i + 1,
            "was": None if was is None else was + 1,
            "moved": _arrow(was, i) if key in moved else "",
            "fused node": names.label(group),
            "kind": " + ".join(dict.fromkeys(kinds[m] for m in group if m in kinds))
                    or "compute",
            "between issue and wait": _between(o) if o else "",
            "group_a": tuple(group),
            "group_b": tuple(at.get(o.wait, group)) if o else tuple(group),
        })
    return rows


def _arrow(was: int | None, now: int) -> str:
    if was is None:
        return "new"
    return f"↓{now - was}" if now > was else f"↑{was - now}"


def _between(o) -> str:
    if o.between_after is None:
        return "no wait found" if not o.wait else "wait not in this order"
    if o.between_before is None or o.between_before == o.between_after:
        return str(o.between_after)
    return f"{o.between_before} → {o.between_after}"


def reorder_summary(graph: Graph, step: Reorder, names: Names | None = None) -> str:
    """``moved 1 of 6 fused nodes (op2 ↓2); all_reduce op1: 0 → 2 kernels of other work
    before its wait``, or why nothing changed."""
    names = names or Names(graph)
    if step.error:
        return f"the pass failed: {step.error}"
    moved = moves(step, comm_names(graph))
    n = len(step.order_after)
    parts = []
    if moved:
        shown = ", ".join(f"{'+'.join(m.group)} {_arrow(m.before, m.after)}"
                          for m in moved[:4]) + (", …" if len(moved) > 4 else "")
        parts.append(f"moved {len(moved)} of {n} fused nodes ({shown})")
    else:
        parts.append(f"kept the order of all {n} fused nodes")
    for o in overlaps(graph, step):
        if o.between_after is not None:
            noun = "kernel" if o.between_after == 1 else "kernels"
            parts.append(f"{o.kind} {o.collective}: {_between(o)} {noun} of other work "
                         "before its wait")
    return "; ".join(parts)
