"""The fusion of one graph as a sequence of steps: before fusion, after each round, final.

A step is the grouping of pre-fusion nodes at one point of ``Scheduler.fuse_nodes``;
the UI steps through them to recolour the (stable) pre-fusion graph, so each step
also says which nodes changed group and which pairs were fused to reach it.

``fusion_steps`` remembers its answer per graph object (a trace is never mutated), so
the stepper, graph view, ledger, charts and "why not fused?" share one computation.
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fusionviz.model.trace import Fusion, Graph, Group, Round


@dataclass(frozen=True)
class Step:
    """The groups of pre-fusion nodes at one point of fusion."""

    label: str  # "before fusion", "round 1", "round 3 (reorder)", "final"
    round: Round | None  # the Round this step is the result of (None for before/final)
    groups: tuple[Group, ...]
    # node name -> index into groups; derived from groups, so not compared or hashed
    group_of: Mapping[str, int] = field(compare=False, hash=False)
    # nodes whose group differs from the previous step
    changed: frozenset[str] = frozenset()
    fused: tuple[tuple[Group, Group], ...] = ()  # pairs fused to reach this step


# id(graph) -> (weak reference to the graph, its steps). The weak reference tells a
# reused id from the same graph and drops the entry when the graph is collected
# (hashing a frozen Graph would walk every node, so graphs cannot be dict keys).
_MEMO: dict[int, tuple[weakref.ref, tuple[Step, ...]]] = {}


def fusion_steps(graph: Graph) -> tuple[Step, ...]:
    """Every step of ``graph``'s fusion; step k (1 ≤ k ≤ rounds) is after round k.

    Computed once per graph object; later calls return the same tuple.
    """
    key = id(graph)
    hit = _MEMO.get(key)
    if hit is not None and hit[0]() is graph:
        return hit[1]
    steps = _compute_steps(graph)
    _MEMO[key] = (weakref.ref(graph, lambda _ref, key=key: _forget(key, _ref)), steps)
    return steps


def _forget(key: int, ref: weakref.ref) -> None:
    hit = _MEMO.get(key)
    if hit is not None and hit[0] is ref:  # not an entry of a newer graph with this id
        del _MEMO[key]


def _compute_steps(graph: Graph) -> tuple[Step, ...]:
    first = _initial_groups(graph)
    steps = [_step("before fusion", None, first, None, ())]
    for rnd in graph.rounds:
        prev = steps[-1]
        after = rnd.groups_after or _apply_fusions(prev.groups, rnd.fusions)
        label = f"round {rnd.index}" + (" (reorder)" if rnd.reorder else "")
        pairs = tuple((f.a, f.b) for f in rnd.fusions)
        steps.append(_step(label, rnd, after, prev, pairs))
    final = graph.final_groups
    # Post-fusion passes (combo kernels, template finalization) change groups after
    # the last round; only then is "final" a step of its own.
    if final and not _same_groups(final, steps[-1].groups):
        steps.append(_step("final", None, final, steps[-1], ()))
    return tuple(steps)


def _initial_groups(graph: Graph) -> tuple[Group, ...]:
    """Every pre-fusion node alone, unless round 1 started from a different grouping."""
    singles = tuple((n.name,) for n in graph.nodes)
    before = graph.rounds[0].groups_before if graph.rounds else ()
    # e.g. foreach grouping happens before fusion: round 1 then sees fewer, larger groups.
    if before and not _same_groups(before, singles):
        return tuple(before)
    return singles


def _step(label, rnd, groups, prev: Step | None, fused) -> Step:
    groups = tuple(map(tuple, groups))
    group_of = {name: i for i, members in enumerate(groups) for name in members}
    if prev is None:
        return Step(label, rnd, groups, group_of, frozenset(), fused)
    # Most groups carry over unchanged: compare tuples first, then only the groups
    # that differ as sets (a pass may list a group's members in another order).
    old = set(prev.groups)
    fresh = [m for m in groups if m not in old]
    changed: set[str] = set()
    if fresh:
        fresh_sets = [frozenset(m) for m in fresh]
        # A vanished group shorter than every fresh set cannot equal one of them: this
        # skips the thousands of single nodes that a round merges into pairs.
        smallest = min(map(len, fresh_sets))
        new = set(groups)
        gone = {frozenset(m) for m in prev.groups if len(m) >= smallest and m not in new}
        for members, as_set in zip(fresh, fresh_sets, strict=True):
            if as_set not in gone:
                changed.update(members)
    # Names that left every group (a node removed by a pass) changed too.
    changed.update(name for name in prev.group_of if name not in group_of)
    return Step(label, rnd, groups, group_of, frozenset(changed), fused)


def _apply_fusions(groups: Sequence[Group], fusions: Sequence[Fusion]) -> tuple[Group, ...]:
    """Groups after ``fusions`` when a round did not record its result.

    Each fused pair replaces its two groups by their union at the earlier position.
    """
    out: list[Group | None] = list(groups)
    where = {g: i for i, g in enumerate(out)}
    for f in fusions:
        a, b = tuple(f.a), tuple(f.b)
        merged = a + tuple(n for n in b if n not in a)
        hits = [i for i in (where.pop(a, None), where.pop(b, None)) if i is not None]
        for i in hits:
            out[i] = None
        keep = min(hits, default=len(out))
        if keep == len(out):
            out.append(merged)
        else:
            out[keep] = merged
        where[merged] = keep
    return tuple(g for g in out if g is not None)


def _same_groups(a: Sequence[Group], b: Sequence[Group]) -> bool:
    """The same partition, whatever the order of groups and of members."""
    if tuple(map(tuple, a)) == tuple(map(tuple, b)):
        return True
    return {frozenset(g) for g in a} == {frozenset(g) for g in b}
