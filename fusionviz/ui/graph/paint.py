"""Per-node geometry, style and text of a laid-out graph, shared by the scene's tiles.

``GraphPaint`` turns a ``model.layout`` result into node boxes and edge polylines,
keeps the current fusion step's style as numpy arrays (group key, in a multi-node
group, changed in this step, color), and answers hit tests, labels and tooltips.
"""

from __future__ import annotations

from functools import cached_property
from html import escape

import numpy as np
from pyqtgraph.functions import arrayToQPath
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFontMetricsF, QPainterPath, QStaticText

from fusionviz.model.names import SEP, main_ops
from fusionviz.model.palette import NO_KERNEL_COLOR
from fusionviz.ui.theme import GraphColors, graph_colors

STRIPE = 6.0  # width of the kernel-color stripe on a node's left edge
ARROW = 7.0
BRIDGED_LAYERS = 2
MAX_LABEL = 200  # characters of a name or op list a label elides (not 100 MB)
REGION_PAD_X = 24.0 / 2 - 3  # keeps a gap between neighbouring groups of one layer
REGION_PAD_Y = 9.0


class GraphPaint:
    """Geometry and current style of every node, shared by all tiles of one scene."""

    def __init__(self, graph, lay, colors_by_node: list[str], sizes: dict[str, float],
                 boxes: dict | None = None, edge_count: dict | None = None,
                 nodes: dict | None = None) -> None:
        """``nodes``: the graph's name -> Node (built here when not given)."""
        self.names = list(lay.names)
        self.index = {n: i for i, n in enumerate(self.names)}
        self.x, self.y = np.asarray(lay.x, float), np.asarray(lay.y, float)
        self.w, self.h = sizes["node_width"], sizes["node_height"]
        self.h_gap, self.v_gap = sizes["h_gap"], sizes["v_gap"]
        nodes = nodes if nodes is not None else {n.name: n for n in graph.nodes}
        self.nodes = [nodes.get(n) for n in self.names]
        # collapsed modules and folded blocks: index -> (Box, its kernel colors)
        self.boxes = {self.index[k]: b for k, b in (boxes or {}).items() if k in self.index}
        self.box_note: dict[int, str] = {}  # what fused inside a box at the current step
        self.category = ["module" if i in self.boxes else n.category if n else "other"
                         for i, n in enumerate(self.nodes)]
        self.palette = sorted(set(colors_by_node)) or [NO_KERNEL_COLOR]
        slot = {c: k for k, c in enumerate(self.palette)}
        self.kernel_color = colors_by_node
        self.kernel_color_idx = np.fromiter((slot[c] for c in colors_by_node), int,
                                            len(colors_by_node))
        self.edges = list(lay.edges)  # (src index, dst index) pairs
        names = self.names
        self.edge_count = [(edge_count or {}).get((names[a], names[b]), 1)
                           for a, b in self.edges]  # real edges a drawn one stands for
        self.edge_paths = list(lay.edge_paths)  # float arrays of (x, y) points
        self.edge_lo, self.edge_hi = _path_bounds(self.edge_paths)
        # edges over at most BRIDGED_LAYERS layers: a group's region follows only those
        span = np.abs(self.edge_hi[:, 1] - self.edge_lo[:, 1]) if self.edges else np.zeros(0)
        self.short_edge = span <= BRIDGED_LAYERS * (self.h + self.v_gap) + 1.0
        left, top = (self.x - self.w / 2).tolist(), (self.y - self.h / 2).tolist()
        self.rects = [QRectF(x, y, self.w, self.h) for x, y in zip(left, top, strict=True)]
        self.rect_array = np.fromiter(self.rects, object, len(self.rects))  # fancy-indexable
        self.neighbours = _layer_neighbours(self.x, self.y, self.w, self.h_gap)
        n = len(self.names)
        self.group_id = np.arange(n)
        self.multi = np.zeros(n, bool)
        self.changed = np.zeros(n, bool)
        self.color_idx = self.kernel_color_idx.copy()
        self.colors: GraphColors = graph_colors(False)
        self._labels: dict[int, tuple[QStaticText, QStaticText]] = {}

    @cached_property
    def padded(self) -> list[QRectF]:
        """Node boxes grown by the region padding; only regions (zoomed in) use them."""
        px, py = REGION_PAD_X, REGION_PAD_Y
        w, h = self.w + 2 * px, self.h + 2 * py
        return [QRectF(r.x() - px, r.y() - py, w, h) for r in self.rects]

    def step_style(self, groups, changed) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per-node arrays for a step: (group key, in multi-node group, changed, color index).

        A group's key is the smallest layout index of its members, so a group that
        survives a step keeps its key and its tiles are not repainted.
        """
        n = len(self.names)
        gid, multi = np.arange(n), np.zeros(n, bool)
        color = self.kernel_color_idx.copy()
        index = self.index
        # Most groups of a big graph are single nodes (all of them before fusion).
        members = [[index[m] for m in g if m in index] for g in groups if len(g) > 1]
        members = [ids for ids in members if len(ids) > 1]
        if members:
            sizes = np.fromiter((len(ids) for ids in members), int, len(members))
            flat = np.fromiter((i for ids in members for i in ids), int, int(sizes.sum()))
            starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
            gid[flat] = np.repeat(np.minimum.reduceat(flat, starts), sizes)
            multi[flat] = True
            color[flat] = np.repeat(self.kernel_color_idx[flat[starts]], sizes)
        chg = np.zeros(n, bool)
        chg[[index[m] for m in changed if m in index]] = True
        return gid, multi, chg, color

    def apply_style(self, style) -> np.ndarray:
        """Make ``style`` current; return the indices of nodes whose look changed."""
        gid, multi, chg, color = style
        touched = ((gid != self.group_id) | (multi != self.multi) | (chg != self.changed)
                   | (color != self.color_idx))
        self.group_id, self.multi, self.changed, self.color_idx = gid, multi, chg, color
        return np.flatnonzero(touched)

    def set_box_note(self, i: int, note: str) -> None:
        """The second line of box ``i`` (what fused inside it at the current step)."""
        if self.box_note.get(i) != note:
            self.box_note[i] = note
            self._labels.pop(i, None)

    def region_color(self, i: int) -> str:
        return self.palette[self.color_idx[i]]

    def node_at(self, p: QPointF) -> int:
        if not self.names:
            return -1
        hit = (np.abs(self.x - p.x()) <= self.w / 2) & (np.abs(self.y - p.y()) <= self.h / 2)
        found = np.flatnonzero(hit)
        return int(found[0]) if len(found) else -1

    def label(self, i: int, fm: QFontMetricsF) -> tuple[QStaticText, QStaticText]:
        """The node's two text lines, elided to the box, as reusable static texts."""
        if i not in self._labels and i in self.boxes:
            box, _colors = self.boxes[i]
            width = self.w - STRIPE - 12
            title = box.title + (f" ({box.module_class})" if box.module_class else "")
            sub = self.box_note.get(i) or f"{len(box.nodes)} nodes"
            self._labels[i] = tuple(
                _static(fm.elidedText(t, Qt.TextElideMode.ElideRight, width)) for t in (title, sub))
        if i not in self._labels:
            node, name = self.nodes[i], self.names[i][:MAX_LABEL]  # eliding 100 MB hangs
            kind = ", ".join(main_ops(node, 3)) if node else ""
            sub = (f"{self.category[i]} · {kind}" if kind else self.category[i])[:MAX_LABEL]
            width = self.w - STRIPE - 12
            title = name
            if node is not None and node.module:  # op42 · …h.1.ln_1: the name stays whole
                room = width - fm.horizontalAdvance(name + SEP)
                module = fm.elidedText(node.module[-MAX_LABEL:], Qt.TextElideMode.ElideLeft, room)
                if room > 0 and module.strip("…"):
                    title = name + SEP + module
            self._labels[i] = (
                _static(fm.elidedText(title, Qt.TextElideMode.ElideRight, width)),
                _static(fm.elidedText(sub, Qt.TextElideMode.ElideRight, width)))
        return self._labels[i]

    def polylines(self, edge_ids) -> QPainterPath:
        """One path holding the routed polylines of ``edge_ids`` (built in one go)."""
        paths = [self.edge_paths[e] for e in edge_ids if len(self.edge_paths[e]) > 1]
        if not paths:
            return QPainterPath()
        pts = np.concatenate(paths)
        connect = np.ones(len(pts), np.int32)
        connect[np.cumsum([len(p) for p in paths]) - 1] = 0  # polyline ends
        return arrayToQPath(pts[:, 0], pts[:, 1], connect=connect, finiteCheck=False)

    def arrows(self, edge_ids) -> QPainterPath:
        """Filled arrowheads at the consumer end of ``edge_ids``."""
        ends = [self.edge_paths[e][-2:] for e in edge_ids if len(self.edge_paths[e]) > 1]
        if not ends:
            return QPainterPath()
        seg = np.asarray(ends)
        tip, d = seg[:, 1], seg[:, 1] - seg[:, 0]
        u = d / np.maximum(np.hypot(d[:, 0], d[:, 1]), 1e-9)[:, None]
        normal = np.stack([-u[:, 1], u[:, 0]], axis=1)
        base = tip - u * ARROW
        tri = np.stack([tip, base + normal * ARROW * 0.45, base - normal * ARROW * 0.45, tip], 1)
        pts = tri.reshape(-1, 2)
        connect = np.tile(np.array([1, 1, 1, 0], np.int32), len(seg))
        return arrayToQPath(pts[:, 0], pts[:, 1], connect=connect, finiteCheck=False)


def _static(text: str) -> QStaticText:
    st = QStaticText(text)
    st.setTextFormat(Qt.TextFormat.PlainText)
    return st


def _path_bounds(paths: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per-edge (min x, min y) and (max x, max y) of the polylines."""
    if not paths:
        return np.zeros((0, 2)), np.zeros((0, 2))
    lens = np.array([len(p) for p in paths])
    pts = np.concatenate([p if len(p) else np.zeros((1, 2)) for p in paths])
    starts = np.concatenate(([0], np.cumsum(np.maximum(lens, 1))[:-1]))
    return np.minimum.reduceat(pts, starts), np.maximum.reduceat(pts, starts)


def _layer_neighbours(x: np.ndarray, y: np.ndarray, w: float, gap: float) -> list[tuple[int, int]]:
    """Pairs of nodes next to each other in the same layer (for horizontal bridges)."""
    order = np.lexsort((x, y))
    same_row = (y[order][1:] == y[order][:-1]) & (np.diff(x[order]) <= w + 2 * gap)
    return [(int(a), int(b)) for a, b in zip(order[:-1][same_row], order[1:][same_row], strict=True)]


def matches(name: str, node, text: str) -> bool:
    if text in name.lower() or node is None:
        return text in name.lower()
    fields = [*node.ops, node.extern_kernel, node.module, node.module_class,
              *(a.buffer for a in node.reads),
              *(a.buffer for a in node.writes), *(o.name for o in node.origins),
              *(o.target for o in node.origins)]
    return any(text in f.lower() for f in fields if f)


def node_tooltip(paint: GraphPaint, i: int, kernel_of: dict, group_of) -> str:
    """Rich-text tooltip of node ``i``: kind, sizes, ops, kernel, group, buffers, source."""
    name, node = paint.names[i][:MAX_LABEL], paint.nodes[i]
    lines = [f"<b>{escape(name)}</b> — {escape(paint.category[i])}"]
    if node is not None:
        lines.append(escape(node.type))
        size = f"numel {node.numel}" + (f" × rnumel {node.rnumel}" if node.rnumel else "")
        lines.append(escape(size))  # numel and rnumel are the trace's strings
        if node.ops:
            lines.append("ops: " + escape(", ".join(node.ops)))
        if node.extern_kernel:
            lines.append("extern: " + escape(node.extern_kernel))
        if node.module or node.module_class:
            cls = f" ({escape(node.module_class)})" if node.module_class else ""
            lines.append("module: " + escape(node.module or "(root)") + cls)
    kernel = kernel_of.get(name)
    lines.append("kernel: " + (escape(kernel.name) if kernel is not None else "(none)"))
    group = group_of(name)
    if len(group) > 1:
        lines.append(f"group now: {len(group)} nodes")
    if node is not None:
        lines += _buffers("reads", node.reads) + _buffers("writes", node.writes)
        lines += [f"<i>{escape(o.file)}:{o.line}</i> {escape(o.code)}"
                  for o in node.origins[:2] if o.code]
    return "<br>".join(lines)


def _buffers(label: str, accesses) -> list[str]:
    if not accesses:
        return []
    shown = ", ".join(a.buffer for a in accesses[:6])
    more = f" (+{len(accesses) - 6})" if len(accesses) > 6 else ""
    return [f"{label}: {escape(shown)}{more}"]
