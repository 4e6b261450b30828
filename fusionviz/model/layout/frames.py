"""Frames around opened modules, and room between layers for their titles.

A module opened in the graph view gets a frame around its visible nodes, its title
along the frame's top. The titles of frames that start on the same layer stack in
bands above it: a frame's title above those of the frames inside it, and two frames
whose spans overlap never in one band. ``frame_layout`` moves layers apart where
their bands need more than the gap between layers, so no title covers a node, another
title or the bottom edge of a frame above.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from fusionviz.model.layout.sugiyama import Layout

PAD = 16.0  # from the nodes to the frame's edge (and below its title band)
TITLE_H = 18.0  # height of one title band
NEST_PAD = 6.0  # more room on each side of a frame per level of frames inside it
# between the bottom of a layer and the title bands below it: a fused group's region
# reaches 9 below its nodes, the "→ N" under a node feeding many others 17
MARGIN = 18.0


@dataclass(frozen=True)
class Frame:
    """One frame: its module and rectangle; the title band is its top ``TITLE_H``."""

    path: str
    x0: float
    y0: float
    x1: float
    y1: float


def nesting(paths: Sequence[str]) -> dict[str, int]:
    """How deep the frames nested in each frame go (0: none inside it)."""
    inner = dict.fromkeys(paths, 0)
    for path in sorted(inner, key=lambda p: -p.count(".")):  # the innermost first
        parent = path.rpartition(".")[0]
        while parent and parent not in inner:
            parent = parent.rpartition(".")[0]
        if parent:
            inner[parent] = max(inner[parent], inner[path] + 1)
    return inner


def frame_layout(lay: Layout, frames: Sequence[tuple[str, Sequence[str]]]
                 ) -> tuple[Layout, list[Frame]]:
    """``lay`` with room for the title bands of ``frames`` (module path, names of its
    visible nodes), and each frame's rectangle in it."""
    found = [(path, [lay._index[n] for n in names if n in lay._index])
             for path, names in frames]
    found = [(path, np.asarray(ids)) for path, ids in found if ids]
    if not found:
        return lay, []
    inner = nesting([path for path, _ in found])
    half_w = lay.node_width / 2
    spans = {path: ((lay.x[ids] - half_w).min() - _side(inner[path]),
                    (lay.x[ids] + half_w).max() + _side(inner[path]),
                    int(lay.layer[ids].min()), int(lay.layer[ids].max()))
             for path, ids in found}
    band = _bands(spans)
    n_layers = int(lay.layer.max()) + 1
    # the room a layer needs above it: its title bands, and below the layer over it,
    # the bottom edges of frames ending there
    top_need, above = np.zeros(n_layers), np.full(n_layers + 1, MARGIN)
    for path, (_x0, _x1, top, bottom) in spans.items():
        top_need[top] = max(top_need[top], PAD + (band[path] + 1) * TITLE_H)
        above[bottom + 1] = max(above[bottom + 1], _side(inner[path]) + 4)
    gap = lay.pitch - lay.node_height
    extra = np.where(top_need > 0, np.maximum(0.0, top_need + above[:n_layers] - gap), 0.0)
    shift = np.cumsum(extra)  # how far each layer moves down
    moved = _shifted(lay, shift) if shift[-1] > 0 else lay
    tops = np.arange(n_layers) * lay.pitch + shift
    out = []
    for path, (x0, x1, top, bottom) in spans.items():
        y0 = tops[top] - PAD - (band[path] + 1) * TITLE_H
        y1 = tops[bottom] + lay.node_height + _side(inner[path])
        out.append(Frame(path, float(x0), float(y0), float(x1), float(y1)))
    return moved, out


def _side(inner: int) -> float:
    return PAD + NEST_PAD * inner


def _bands(spans: dict[str, tuple[float, float, int, int]]) -> dict[str, int]:
    """The title band of each frame, 0 next to its top layer's nodes: above the bands
    of the frames inside it that start on its layer, and in none that a frame
    overlapping it sideways took on that layer."""
    band: dict[str, int] = {}
    for path in sorted(spans, key=lambda p: -p.count(".")):  # the innermost first
        x0, x1, top, _ = spans[path]
        same = [p for p in band if spans[p][2] == top]
        b = 1 + max((band[p] for p in same if p.startswith(path + ".")), default=-1)
        taken = {band[p] for p in same if spans[p][0] < x1 and x0 < spans[p][1]}
        while b in taken:
            b += 1
        band[path] = b
    return band


def _shifted(lay: Layout, shift: np.ndarray) -> Layout:
    """``lay`` with layer k moved down by ``shift[k]``, its edges' points with it."""
    last = len(shift) - 1

    def move(points: np.ndarray) -> np.ndarray:
        if not len(points):
            return points
        k = np.clip(np.floor(points[:, 1] / lay.pitch).astype(np.int64), 0, last)
        out = points.copy()
        out[:, 1] += shift[k]
        return out

    return dataclasses.replace(
        lay, y=lay.y + shift[lay.layer], edge_paths=tuple(move(p) for p in lay.edge_paths),
        height=lay.height + float(shift[-1]), _index=lay._index)
