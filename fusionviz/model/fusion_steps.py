"""The fusion of one graph as a sequence of steps: before fusion, after each round, final,
then one step per pass that reordered the fused nodes after fusion (``Graph.reorders``:
compute/communication overlap), whose groups are the same in a new order.

A step is the grouping of pre-fusion nodes at one point of ``Scheduler.fuse_nodes``;
the UI steps through them to recolour the (stable) pre-fusion graph, so each step
also says which nodes changed group and which pairs were fused to reach it.

``fusion_steps`` remembers its answer per graph object (a trace is never mutated), so
the stepper, graph view, ledger, charts and "why not fused?" share one computation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from fusionviz.model.comms.reorders import comm_names, moves
from fusionviz.model.lazy import PerObject
from fusionviz.model.trace import Fusion, Graph, Group, Reorder, Round


@dataclass(frozen=True)
class Step:
    """The groups of pre-fusion nodes at one point of fusion."""

    label: str  # "before fusion", "round 1", "round 3 (reorder)", "final", "pass 1: sink_waits"
    round: Round | None  # the Round this step is the result of (None for before/final)
    groups: tuple[Group, ...]
    # node name -> index into groups; derived from groups, so not compared or hashed
    group_of: Mapping[str, int] = field(compare=False, hash=False)
    # nodes whose group differs from the previous step
    changed: frozenset[str] = frozenset()
    fused: tuple[tuple[Group, Group], ...] = ()  # pairs fused to reach this step
    reorder: Reorder | None = None  # the post-fusion pass this step is the result of


_MEMO: PerObject[Steps] = PerObject()  # graph -> its steps, while the graph lives


def fusion_steps(graph: Graph) -> Steps:
    """Every step of ``graph``'s fusion; step k (1 ≤ k ≤ rounds) is after round k.

    Made once per graph object (later calls return the same ``Steps``); each step is
    computed when first used.
    """
    steps = _MEMO.get(graph)
    return steps if steps is not None else _MEMO.put(graph, _compute_steps(graph))


def _compute_steps(graph: Graph) -> Steps:
    return Steps(graph)


class Steps(Sequence[Step]):
    """The steps of one graph, each computed when first used.

    Step k derives from step k-1, so using step k computes the ones before it; the
    window shows "before fusion" first, and a 20k-node graph opens without computing
    every round's grouping. Holds the graph's parts, not the graph (the memo's weak
    reference to the graph must be the only one).
    """

    def __init__(self, graph: Graph) -> None:
        self._rounds = graph.rounds
        self._final = graph.final_groups
        self._reorders = graph.reorders
        self._comm = comm_names(graph) if graph.reorders else frozenset()
        self._names = tuple(n.name for n in graph.nodes)
        self._done: list[Step] = []
        self._len: int | None = None

    def __len__(self) -> int:
        if self._len is None:
            n = 1 + len(self._rounds)
            if self._final:
                # Post-fusion passes (combo kernels, template finalization) change
                # groups after the last round; only then is "final" a step of its own.
                last = self._rounds[-1].groups_after if self._rounds else ()
                n += not _same_groups(self._final, last or self._upto(n - 1).groups)
            self._len = n + len(self._reorders)
        return self._len

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(self[i] for i in range(*k.indices(len(self))))
        n = len(self)
        if k < 0:
            k += n
        if not 0 <= k < n:
            raise IndexError(k)
        return self._upto(k)

    def __eq__(self, other) -> bool:
        if isinstance(other, Steps | tuple):
            return tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"Steps({len(self)} steps, {len(self._done)} computed)"

    def _upto(self, k: int) -> Step:
        while len(self._done) <= k:
            self._done.append(self._compute(len(self._done)))
        return self._done[k]

    def _compute(self, k: int) -> Step:
        if k == 0:
            # No rounds but final groups: the graph is its end state (a kernel graph).
            label = "final" if self._final and not self._rounds else "before fusion"
            return _step(label, None, _initial_groups(self._names, self._rounds), None, ())
        prev = self._done[k - 1]
        if k > len(self._rounds):  # (len() computes the steps up to the last round)
            first_pass = len(self) - len(self._reorders)
            if k >= first_pass:
                return _reorder_step(self._reorders[k - first_pass], prev, self._comm)
            return _step("final", None, self._final, prev, ())
        rnd = self._rounds[k - 1]
        after = rnd.groups_after or _apply_fusions(prev.groups, rnd.fusions)
        label = f"round {rnd.index}" + (" (reorder)" if rnd.reorder else "")
        return _step(label, rnd, after, prev, tuple((f.a, f.b) for f in rnd.fusions))


def _reorder_step(r: Reorder, prev: Step, comm: frozenset[str]) -> Step:
    """The groups in the order the pass left them; "changed": the nodes it moved."""
    groups = tuple(map(tuple, r.order_after)) or prev.groups
    group_of = {name: i for i, members in enumerate(groups) for name in members}
    moved = frozenset(name for m in moves(r, comm) for name in m.group)
    label = f"pass {r.index}: {r.name}" + (" (failed)" if r.error else "")
    return Step(label, None, groups, group_of, moved, (), r)


def _initial_groups(names: tuple[str, ...], rounds) -> tuple[Group, ...]:
    """Every pre-fusion node alone, unless round 1 started from a different grouping."""
    singles = tuple((name,) for name in names)
    before = rounds[0].groups_before if rounds else ()
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
