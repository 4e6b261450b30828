"""Layers and in-layer order of a DAG: the first half of the layered (Sugiyama) layout.

``proper_dag`` breaks cycles, assigns longest-path layers and splits long edges with
dummy vertices so every segment spans one layer; ``order_vertices`` then reduces
edge crossings with layer-by-layer barycenter sweeps. ``layout`` places the result.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

import numpy as np

DUMMY_BUDGET = 4  # bend points per node at most, see ``_split_long_edges``


@dataclass
class ProperDag:
    """The acyclic, proper graph the ordering and placement work on.

    Every segment spans one layer, except the straight long edges left over when
    the dummy budget runs out.
    """

    n: int  # real vertices are 0..n-1, dummies n..
    layer: np.ndarray  # (N,) layer of every vertex
    up: np.ndarray  # (S,) upper end of every unit segment
    down: np.ndarray  # (S,) lower end
    src: np.ndarray  # (E,) unique DAG edges, oriented downward
    dst: np.ndarray
    # (E,) index of each edge's first segment; an edge's segments are contiguous
    first_seg: np.ndarray


def proper_dag(n: int, pairs: np.ndarray) -> ProperDag:
    """Unique edges, cycles broken, layers assigned and long edges split."""
    src, dst = _unique_edges(n, pairs[:, 0], pairs[:, 1])
    layer, rank = _longest_path_layers(n, src, dst)
    back = rank[src] > rank[dst]  # edges closing a cycle: reverse them
    if back.any():
        src, dst = _unique_edges(n, np.where(back, dst, src), np.where(back, src, dst))
        layer, _ = _longest_path_layers(n, src, dst)
    _pull_sources_down(n, layer, src, dst)
    return _split_long_edges(n, layer, src, dst)


def _unique_edges(n: int, src: np.ndarray, dst: np.ndarray):
    key = np.unique(src * max(n, 1) + dst)  # sorted by src, then dst
    return key // max(n, 1), key % max(n, 1)


def _longest_path_layers(n: int, src: np.ndarray, dst: np.ndarray):
    """Longest-path layers and the order vertices were placed in (Kahn's algorithm).

    On a cycle, the unplaced vertex with the fewest unplaced predecessors is placed
    anyway; its edges from later vertices are then the ones to reverse. Plain Python
    over lists: one step per vertex and edge, whatever the depth (a numpy step per
    layer costs more once graphs are thousands of layers deep).
    """
    starts = np.searchsorted(src, np.arange(n + 1)).tolist()  # src is sorted: CSR rows
    succ = dst.tolist()
    indeg = np.bincount(dst, minlength=n).tolist()
    layer = [0] * n
    rank = [-1] * n
    ready = [v for v in range(n) if indeg[v] == 0]
    ready.reverse()  # pop() then places sources in input order
    stuck: list[tuple[int, int]] | None = None  # (indeg, vertex) heap, once a cycle shows
    for placed in range(n):
        if not ready:
            if stuck is None:
                stuck = [(indeg[v], v) for v in range(n) if rank[v] < 0]
                heapq.heapify(stuck)
            ready.append(_least_constrained(stuck, indeg, rank))
        v = ready.pop()
        rank[v] = placed
        below = layer[v] + 1
        for w in succ[starts[v] : starts[v + 1]]:
            if rank[w] >= 0:
                continue  # back edge into an already placed vertex
            if layer[w] < below:
                layer[w] = below
            indeg[w] -= 1
            if indeg[w] == 0:
                ready.append(w)
            elif stuck is not None:
                heapq.heappush(stuck, (indeg[w], w))
    return np.array(layer, dtype=np.int64), np.array(rank, dtype=np.int64)


def _least_constrained(
    heap: list[tuple[int, int]], indeg: list[int], rank: list[int]
) -> int:
    """Pop the unplaced vertex with the fewest unplaced predecessors.

    Entries are never updated in place: a vertex gets a new entry each time its
    count drops, and entries of placed vertices or with an old count are skipped.
    """
    while True:
        d, v = heapq.heappop(heap)
        if rank[v] < 0 and d == indeg[v]:
            return v


def _pull_sources_down(n: int, layer: np.ndarray, src: np.ndarray, dst: np.ndarray):
    """Move each source to just above its first consumer.

    Longest-path layering puts every source on layer 0, so a constant or an input
    read deep in the graph would drag a long edge across the whole drawing.
    """
    if src.size == 0:
        return
    is_source = np.bincount(dst, minlength=n) == 0
    rows, first = np.unique(src, return_index=True)
    lowest = np.minimum.reduceat(layer[dst], first) - 1
    pull = is_source[rows]
    layer[rows[pull]] = lowest[pull]


def _split_long_edges(
    n: int, layer: np.ndarray, src: np.ndarray, dst: np.ndarray
) -> ProperDag:
    """Add one dummy vertex per layer crossed, so every segment spans one layer.

    Bend points are capped at ``DUMMY_BUDGET`` per node: past it the longest edges
    stay one straight segment (a buffer read all along a deep graph would otherwise
    add thousands of dummies per edge and stall the sweeps).
    """
    span = layer[dst] - layer[src]
    by_span = np.argsort(span, kind="stable")
    over = np.cumsum(span[by_span] - 1) > DUMMY_BUDGET * max(n, 1)
    span[by_span[over]] = 1  # straight: ``order_vertices`` ignores such segments
    first_seg = np.cumsum(span) - span
    edge_of = np.repeat(np.arange(src.size), span)
    step = np.arange(edge_of.size) - first_seg[edge_of]  # 0..span-1 along each edge
    # The dummy below segment j of an edge is vertex n + (first dummy of edge) + j.
    first_dummy = n + first_seg - np.arange(src.size)
    below = first_dummy[edge_of] + step
    last = step == span[edge_of] - 1
    down = np.where(last, dst[edge_of], below)
    up = np.where(step == 0, src[edge_of], below - 1)
    dummy_layer = layer[src[edge_of[~last]]] + step[~last] + 1
    full_layer = np.concatenate([layer, dummy_layer])
    return ProperDag(n, full_layer, up, down, src, dst, first_seg)


def order_vertices(dag: ProperDag, sweeps: int) -> np.ndarray:
    """Vertices sorted by (layer, position), after ``sweeps`` down+up barycenter sweeps.

    The start order is the input order (Inductor lists nodes in program order, which
    keeps parallel branches side by side); dummies start between their edge's ends.
    """
    n, layer = dag.n, dag.layer
    key = np.arange(layer.size, dtype=float)
    if layer.size > n:  # dummies: interpolate between their edge's endpoints
        seg_dummy = dag.down >= n
        e = np.repeat(
            np.arange(dag.src.size), np.diff(np.append(dag.first_seg, dag.up.size))
        )
        frac = (layer[dag.down] - layer[dag.src[e]]) / (
            layer[dag.dst[e]] - layer[dag.src[e]]
        )
        k = dag.src[e] + frac * (dag.dst[e] - dag.src[e])
        key[dag.down[seg_dummy]] = k[seg_dummy]
    order = np.lexsort((key, layer))
    if sweeps > 0 and dag.up.size:
        order = _Sweeper(dag, order).run(sweeps)
    return order


class _Sweeper:
    """Layer-by-layer barycenter sweeps: each layer is sorted by the mean position of
    its neighbours in the layer just swept, so changes travel the whole depth at once.

    Scheduler graphs are often thousands of layers deep and a few vertices wide, where
    numpy's per-call overhead dominates: narrow layers are sorted in plain Python on
    small lists, wide ones with numpy.
    """

    WIDE = 24  # layers with more vertices than this are sorted with numpy

    def __init__(self, dag: ProperDag, order: np.ndarray):
        layer = dag.layer
        n_layers = int(layer.max()) + 1
        bounds = np.searchsorted(layer[order], np.arange(n_layers + 1))
        self.pos = np.empty(layer.size, dtype=np.int64)
        self.pos[order] = np.arange(layer.size) - np.repeat(bounds[:-1], np.diff(bounds))
        self.order, self.bounds = order, bounds.tolist()
        # 0, 1, 2, ... sliced for every layer instead of rebuilt
        self.ramp = np.arange(int(np.diff(bounds).max()), dtype=np.int64)
        # Per direction: segments grouped by the layer of the end being reordered, and
        # per vertex 1/(its segments on that side), 0 where it has none ("lonely").
        # Straight long edges (past the dummy budget) join no layer pair: left out.
        unit = layer[dag.down] - layer[dag.up] == 1
        up, down = dag.up[unit], dag.down[unit]
        self.sides = []
        for ends, near in ((down, up), (up, down)):
            by = np.argsort(layer[ends], kind="stable")
            seg_bounds = np.searchsorted(layer[ends][by], np.arange(n_layers + 1))
            count = np.bincount(ends, minlength=layer.size)
            inverse = 1.0 / np.maximum(count, 1) * (count > 0)
            side = (ends[by], near[by], seg_bounds.tolist(), inverse, count == 0)
            self.sides.append(side)

    def run(self, sweeps: int) -> np.ndarray:
        """Sweep down then up ``sweeps`` times; return the vertices in (layer, position) order."""
        n_layers = len(self.bounds) - 1
        # A layer's new order depends only on its own order and its neighbour
        # layer's; ``version`` counts a layer's changes so unchanged inputs are skipped.
        self.version = [0] * n_layers
        down, up = range(1, n_layers), range(n_layers - 2, -1, -1)
        seen_down, seen_up = [None] * n_layers, [None] * n_layers
        for _ in range(sweeps):
            self._sweep(self.sides[0], down, -1, seen_down)
            self._sweep(self.sides[1], up, 1, seen_up)
        return self.order

    def _sweep(self, side, layers, step: int, seen: list) -> None:
        pos, bounds, order, version = self.pos, self.bounds, self.order, self.version
        seg_bounds = side[2]
        for k in layers:
            lo, hi = bounds[k], bounds[k + 1]
            s0, s1 = seg_bounds[k], seg_bounds[k + 1]
            inputs = (version[k], version[k + step])
            if hi - lo < 2 or s0 == s1 or seen[k] == inputs:
                continue
            sort = self._narrow if hi - lo <= self.WIDE else self._wide
            moved = sort(side, order[lo:hi], s0, s1)
            if moved is not None:
                order[lo:hi] = moved
                pos[moved] = self.ramp[: hi - lo]
                version[k] += 1
            seen[k] = (version[k], version[k + step])

    def _narrow(self, side, verts: np.ndarray, s0: int, s1: int):
        ends, near, _, inverse, lonely = side
        at, weight = self.pos[ends[s0:s1]].tolist(), self.pos[near[s0:s1]].tolist()
        total = [0.0] * verts.size
        for i, w in zip(at, weight, strict=True):
            total[i] += w
        # Vertices without neighbours on this side keep their place; ties keep order.
        scale, keep = inverse[verts].tolist(), lonely[verts].tolist()
        bary = [
            i if k else t * f
            for i, (t, f, k) in enumerate(zip(total, scale, keep, strict=True))
        ]
        perm = sorted(range(verts.size), key=bary.__getitem__)
        if all(i == p for i, p in enumerate(perm)):
            return None
        return verts[perm]

    def _wide(self, side, verts: np.ndarray, s0: int, s1: int):
        ends, near, _, inverse, lonely = side
        pos, ramp = self.pos, self.ramp[: verts.size]
        total = np.bincount(
            pos[ends[s0:s1]], weights=pos[near[s0:s1]], minlength=verts.size
        )
        bary = total * inverse[verts] + ramp * lonely[verts]
        perm = bary.argsort(kind="stable")  # ties keep the current order
        if (perm == ramp).all():
            return None
        return verts[perm]
