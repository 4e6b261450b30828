"""What a post-fusion reordering pass changed (``trace.Reorder``): which fused nodes
moved, and how much compute now sits between each collective and its wait.

A pass that sinks one wait past three kernels shifts those three kernels by one place
too; "moved" names only the wait. The moved groups are the fewest whose removal leaves
the rest in the same relative order: everything outside a longest increasing
subsequence of the new positions.
"""

from __future__ import annotations

from bisect import bisect_left
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
    """A collective and its wait: the fused nodes of other work between them, before and
    after the pass (more of them: more compute can run while the collective is in
    flight). ``None``: the wait is not in that order."""

    collective: str  # node name
    wait: str  # node name of its wait ("" when none was found)
    kind: str  # all_reduce, all_gather_into_tensor, ...
    between_before: int | None
    between_after: int | None


def moves(step: Reorder) -> list[Move]:
    """The groups ``step`` moved, in their new order."""
    key = frozenset
    after_at = {key(g): i for i, g in enumerate(step.order_after)}
    before = [g for g in step.order_before if key(g) in after_at]
    kept = _longest_increasing([after_at[key(g)] for g in before])
    out = [Move(tuple(g), i, after_at[key(g)])
           for i, g in enumerate(before) if i not in kept]
    return sorted(out, key=lambda m: m.after)


def _longest_increasing(values: list[int]) -> set[int]:
    """Indexes into ``values`` of one longest strictly increasing subsequence."""
    tails: list[int] = []  # smallest tail value of an increasing run of each length
    tail_at: list[int] = []  # index of that tail
    parent = [-1] * len(values)
    for i, v in enumerate(values):
        k = bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
            tail_at.append(i)
        else:
            tails[k], tail_at[k] = v, i
        parent[i] = tail_at[k - 1] if k else -1
    out: set[int] = set()
    i = tail_at[-1] if tail_at else -1
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


def overlaps(graph: Graph, step: Reorder) -> list[Overlap]:
    """Per collective of ``graph``: other fused nodes between it and its wait, before
    and after ``step``."""
    kinds = {n.name: n.collective.kind for n in graph.nodes if n.collective is not None}
    out = []
    for coll, wait in collective_pairs(graph):
        out.append(Overlap(coll, wait, kinds.get(coll, ""),
                           _between(step.order_before, coll, wait, kinds),
                           _between(step.order_after, coll, wait, kinds)))
    return out


def _between(order: tuple[Group, ...], coll: str, wait: str,
             kinds: dict[str, str]) -> int | None:
    where = {name: i for i, g in enumerate(order) for name in g}
    if coll not in where or wait not in where:
        return None
    lo, hi = where[coll], where[wait]
    # other work: groups that are not only collectives or waits
    return sum(1 for g in order[lo + 1:hi] if any(name not in kinds for name in g))
