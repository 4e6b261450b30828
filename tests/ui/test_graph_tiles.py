"""Node tiles group their boxes by color and find the tiles a step touches, as the plain
per-node loops would, on every step of a real trace and of a large synthetic one."""

from __future__ import annotations

import numpy as np

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.view_state import ViewState


def _plain_buckets(tile):
    p = tile.paint_data
    fills, changed = {}, []
    for i in tile.node_ids:
        fills.setdefault(p.palette[p.color_idx[i]], []).append(p.rects[i])
        if p.changed[i]:
            changed.append(p.rects[i])
    return fills, changed


def _plain_tiles_of(index, nodes) -> set[int]:
    out = {int(index.tile_of[i]) for i in nodes}
    for i in nodes:
        out |= index.extra.get(int(i), set())
    return out


def test_buckets_and_touched_tiles_match_the_per_node_loops(qtbot, any_trace_path):
    _check_every_step(qtbot, load_trace(any_trace_path))


def test_the_same_on_a_graph_of_many_tiles(qtbot):
    _check_every_step(qtbot, synthetic_trace(3000, seed=4, rounds=3))


def _check_every_step(qtbot, trace) -> None:
    state = ViewState()
    view = GraphView(state)
    qtbot.addWidget(view)
    state.set_trace(trace)
    for gi, graph in enumerate(trace.graphs):
        state.set_graph(gi)
        index, tiles = view._tile_index, view._tiles["nodes"]
        n_steps = len(fusion_steps(graph))
        for k in [*range(n_steps), *reversed(range(n_steps))]:  # the way back hits the memo
            before = view.paint_data.color_idx.copy(), view.paint_data.changed.copy()
            state.set_step(k)
            p = view.paint_data
            touched = np.flatnonzero((before[0] != p.color_idx) | (before[1] != p.changed))
            assert index.tiles_of(touched) == _plain_tiles_of(index, touched)
            for tile in tiles:
                fills, changed = tile._buckets()
                plain_fills, plain_changed = _plain_buckets(tile)
                assert list(fills) == list(plain_fills)  # colors painted in the same order
                assert fills == plain_fills and changed == plain_changed
