"""What a post-fusion reordering pass changed (``trace.Reorder``): which fused nodes
moved, and how much compute now sits between each collective and its wait.

A pass that sinks one wait past three kernels shifts those three kernels by one place
too; "moved" names only the wait. The moved groups are the fewest whose removal leaves
the rest in the same relative order: everything outside a longest increasing
subsequence of the new positions (on a tie, the one that keeps compute in place).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from fusionviz.model.comms.collective_times import is_wait, waits_of
from fusionviz.model.trace import Graph, Group, Reorder


@dataclass(frozen=True)
class Move:
    """A fused node the pass moved: its 0-based position before and after."""

    group: Group
    before: int
    after: int


@dataclass(frozen=True)
class Overlap:
    """A collective and its wait: the kernels of other work between them, before and
    after the pass (more of them: more compute can run while the collective is in
    flight). ``None``: the wait is not in that order."""

    collective: str  # node name
    wait: str  # node name of its wait ("" when none was found)
    kind: str  # all_reduce, all_gather_into_tensor, ...
    between_before: int | None
    between_after: int | None


def moves(step: Reorder, collectives: Collection[str] = ()) -> list[Move]:
    """The groups ``step`` moved, in their new order.

    Where either of two nodes could be the one that moved (neighbours that swapped),
    the one holding a node of ``collectives`` (collectives and waits: what these passes
    move) is named, and compute stays put."""
    key = frozenset
    after_at = {key(g): i for i, g in enumerate(step.order_after)}
    before = [g for g in step.order_before if key(g) in after_at]
    comm = set(collectives)
    n = len(before)
    # keep the most nodes; among those, the most compute nodes
    weights = [n + 1 + (not any(m in comm for m in g)) for g in before]
    kept = _heaviest_increasing([after_at[key(g)] for g in before], weights)
    out = [Move(tuple(g), i, after_at[key(g)])
           for i, g in enumerate(before) if i not in kept]
    return sorted(out, key=lambda m: m.after)


def _heaviest_increasing(values: list[int], weights: list[int]) -> set[int]:
    """Indexes into ``values`` (distinct ints >= 0) of a strictly increasing
    subsequence of the greatest total weight (a Fenwick tree of the best chain ending
    at each value: O(n log n))."""
    size = max(values, default=-1) + 2
    tree: list[tuple[int, int]] = [(0, -1)] * (size + 1)  # (weight, index) per prefix
    parent = [-1] * len(values)
    best_at = [0] * len(values)
    for i, v in enumerate(values):
        j, best = v, (0, -1)  # the best chain over values < v
        while j > 0:
            best = max(best, tree[j])
            j -= j & -j
        parent[i], best_at[i] = best[1], best[0] + weights[i]
        j = v + 1
        while j <= size:
            tree[j] = max(tree[j], (best_at[i], i))
            j += j & -j
    out: set[int] = set()
    i = max(range(len(values)), key=best_at.__getitem__, default=-1)
    while i >= 0:
        out.add(i)
        i = parent[i]
    return out


def collective_pairs(graph: Graph) -> list[tuple[str, str]]:
    """(collective, its first wait) node names, in node order ("" when no wait for it
    was found; pairing: ``collective_times.waits_of``)."""
    waits = waits_of(graph)
    return [(n.name, (waits.get(n.name) or ("",))[0]) for n in graph.nodes
            if n.collective is not None and not is_wait(n)]


def comm_names(graph: Graph) -> frozenset[str]:
    """The graph's collective and wait nodes (what overlap passes move)."""
    return frozenset(n.name for n in graph.nodes if n.collective is not None)


def overlaps(graph: Graph, step: Reorder) -> list[Overlap]:
    """Per collective of ``graph``: kernels of other work (neither collectives nor
    no-op nodes) between it and its wait, before and after ``step``."""
    kinds = {n.name: n.collective.kind for n in graph.nodes if n.collective is not None}
    work = {n.name for n in graph.nodes if n.collective is None and n.category != "nop"}
    orders = [(_positions(o), o) for o in (step.order_before, step.order_after)]
    out = []
    for coll, wait in collective_pairs(graph):
        before, after = (_between(where, order, coll, wait, work) for where, order in orders)
        out.append(Overlap(coll, wait, kinds.get(coll, ""), before, after))
    return out


def _positions(order: tuple[Group, ...]) -> dict[str, int]:
    return {name: i for i, g in enumerate(order) for name in g}


def _between(where: dict[str, int], order: tuple[Group, ...], coll: str, wait: str,
             work: set[str]) -> int | None:
    if coll not in where or wait not in where:
        return None
    lo, hi = where[coll], where[wait]
    return sum(1 for g in order[lo + 1:hi] if any(name in work for name in g))
