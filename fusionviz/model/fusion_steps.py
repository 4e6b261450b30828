"""The fusion of one graph as a sequence of steps: before fusion, after each round, final.

A step is the grouping of pre-fusion nodes at one point of ``Scheduler.fuse_nodes``;
the UI steps through them to recolour the (stable) pre-fusion graph, so each step
also says which nodes changed group and which pairs were fused to reach it.
"""

from __future__ import annotations

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


def fusion_steps(graph: Graph) -> tuple[Step, ...]:
    """Every step of ``graph``'s fusion; step k (1 ≤ k ≤ rounds) is after round k."""
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
    if final and _as_sets(final) != _as_sets(steps[-1].groups):
        steps.append(_step("final", None, final, steps[-1], ()))
    return tuple(steps)


def _initial_groups(graph: Graph) -> tuple[Group, ...]:
    """Every pre-fusion node alone, unless round 1 started from a different grouping."""
    singles = tuple((n.name,) for n in graph.nodes)
    before = graph.rounds[0].groups_before if graph.rounds else ()
    # e.g. foreach grouping happens before fusion: round 1 then sees fewer, larger groups.
    if before and _as_sets(before) != _as_sets(singles):
        return tuple(before)
    return singles


def _step(label, rnd, groups, prev: Step | None, fused) -> Step:
    groups = tuple(tuple(g) for g in groups)
    group_of = {name: i for i, members in enumerate(groups) for name in members}
    if prev is None:
        changed = frozenset()
    else:
        old = set(prev.groups)
        changed = {name for members in groups if members not in old for name in members}
        # Names that left every group (a node removed by a pass) changed too.
        changed.update(name for name in prev.group_of if name not in group_of)
        changed = frozenset(changed)
    return Step(label, rnd, groups, group_of, changed, fused)


def _apply_fusions(groups: Sequence[Group], fusions: Sequence[Fusion]) -> tuple[Group, ...]:
    """Groups after ``fusions`` when a round did not record its result.

    Each fused pair replaces its two groups by their union at the earlier position.
    """
    out: list[Group | None] = list(groups)
    where = {g: i for i, g in enumerate(out)}
    for f in fusions:
        ia, ib = where.get(tuple(f.a)), where.get(tuple(f.b))
        merged = tuple(f.a) + tuple(n for n in f.b if n not in f.a)
        keep = min(i for i in (ia, ib, len(out)) if i is not None)
        for i in (ia, ib):
            if i is not None:
                out[i] = None
        if keep == len(out):
            out.append(merged)
        else:
            out[keep] = merged
        where[merged] = keep
    return tuple(g for g in out if g is not None)


def _as_sets(groups: Sequence[Group]) -> set[frozenset[str]]:
    return {frozenset(g) for g in groups}
