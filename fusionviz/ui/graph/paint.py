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
from PySide6.QtGui import QFont, QFontMetricsF, QPainterPath, QStaticText

from fusionviz.model.names import SEP, main_ops
from fusionviz.model.palette import NO_KERNEL_COLOR
from fusionviz.model.report.elide import elide_items, elide_path, elide_title
from fusionviz.model.report.formatting import digits, plural
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
        self._counts: dict[int, tuple[QRectF, str]] | None = None
        self._room: tuple[bool, np.ndarray] | None = None

    @cached_property
    def padded(self) -> list[QRectF]:
        """Node boxes grown by the region padding; only regions (zoomed in) use them."""
        px, py = REGION_PAD_X, REGION_PAD_Y
        w, h = self.w + 2 * px, self.h + 2 * py
        return [QRectF(r.x() - px, r.y() - py, w, h) for r in self.rects]

    def title_room(self, every: bool) -> np.ndarray:
        """How wide the zoomed-out title over each node may be: to the next node right
        of it in its layer that has one too (a box; with ``every``, any node)."""
        if self._room is None or self._room[0] != every:
            titled = np.full(len(self.names), every)
            titled[list(self.boxes)] = True
            ids = np.flatnonzero(titled)
            ids = ids[np.lexsort((self.x[ids], self.y[ids]))]
            room = np.full(len(self.names), np.inf)
            same_row = self.y[ids][1:] == self.y[ids][:-1]
            gaps = np.diff(self.x[ids])[same_row] - self.h_gap / 2
            room[ids[:-1][same_row]] = gaps
            self._room = (every, room)
        return self._room[1]

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

    def label(self, i: int, fm: QFontMetricsF,
              title_fm: QFontMetricsF | None = None) -> tuple[QStaticText, QStaticText]:
        """The node's two text lines, shortened to the box, as reusable static texts:
        module paths by whole segments (``transformer.….3.attn``), op lists by whole
        ops (``var_mean, add, …``). ``title_fm``: the first line's font (bold)."""
        if i not in self._labels:
            tf = title_fm or fm
            width = self.w - STRIPE - 12
            title, sub = self._title(i, tf, width), self._sub(i, fm, width)
            right = Qt.TextElideMode.ElideRight
            self._labels[i] = (_static(tf.elidedText(title, right, width)),
                               _static(fm.elidedText(sub, right, width)))
        return self._labels[i]

    def _title(self, i: int, fm: QFontMetricsF, width: float) -> str:
        if i in self.boxes:
            box, _colors = self.boxes[i]
            return elide_title(box.title[:MAX_LABEL], box.module_class[:MAX_LABEL],
                               fits_width(fm, width), cut_middle(fm, width))
        node, name = self.nodes[i], self.names[i][:MAX_LABEL]  # eliding 100 MB hangs
        if node is None or not node.module:
            return name
        room = width - fm.horizontalAdvance(name + SEP)  # op42 · h.….ln_1: the name whole
        module = elide_path(node.module[:MAX_LABEL], fits_width(fm, room), lambda _s: "")
        return name + SEP + module if module else name

    def _sub(self, i: int, fm: QFontMetricsF, width: float) -> str:
        if i in self.boxes:
            return self.box_note.get(i) or plural(len(self.boxes[i][0].nodes), "node")
        node, category = self.nodes[i], self.category[i]
        ops = [o[:MAX_LABEL] for o in main_ops(node, 3)] if node else []
        head = f"{category} · "
        kind = elide_items(ops, fits_width(fm, width - fm.horizontalAdvance(head)))
        return head + (kind or ", ".join(ops)) if ops else category  # one long op: cut

    @property
    def count_labels(self) -> dict[int, tuple[QRectF, str]]:
        """Edge → where its ``×N`` goes and the text, for edges standing for N > 1."""
        if self._counts is None:
            self.place_counts([])
        return self._counts

    def place_counts(self, avoid: list[QRectF]) -> None:
        """Put each ``×N`` at the first point along its edge, from the middle out, where
        it covers no node, no rect of ``avoid`` (frame titles, stub labels) and no
        ``×N`` placed before; an edge with no such point goes without."""
        fm = QFontMetricsF(QFont())
        taken, self._counts = _Grid(), {}
        for rect in avoid:
            taken.add(rect)
        for e, n in enumerate(self.edge_count):
            path = self.edge_paths[e]
            if n < 2 or len(path) < 2:
                continue
            text = f"×{n}"
            w, h = fm.horizontalAdvance(text), fm.height()
            for x, y in _along(path, (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8)):
                rect = QRectF(x + 4, y + 4 - fm.ascent(), w, h)
                if not (self._covers_node(rect) or taken.hits(rect)):
                    self._counts[e] = (rect, text)
                    taken.add(rect)
                    break

    def _covers_node(self, rect: QRectF) -> bool:
        cx, cy = rect.center().x(), rect.center().y()
        return bool(np.any((np.abs(self.x - cx) < (self.w + rect.width()) / 2)
                           & (np.abs(self.y - cy) < (self.h + rect.height()) / 2)))

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


def fits_width(fm: QFontMetricsF, width: float):
    """A ``fits`` test for ``model.report.elide``: the text is at most ``width`` wide."""
    return lambda text: fm.horizontalAdvance(text) <= width


def cut_middle(fm: QFontMetricsF, width: float):
    """A ``cut`` for ``model.report.elide``: one segment cut in its middle to ``width``."""
    return lambda text: fm.elidedText(text, Qt.TextElideMode.ElideMiddle, width)


def _static(text: str) -> QStaticText:
    st = QStaticText(text)
    st.setTextFormat(Qt.TextFormat.PlainText)
    return st


class _Grid:
    """Rects filed by the 100×100 cells they touch: which ones a new rect meets."""

    CELL = 100.0

    def __init__(self) -> None:
        self.cells: dict[tuple[int, int], list[QRectF]] = {}

    def _keys(self, r: QRectF):
        c = self.CELL
        return ((i, j) for i in range(int(r.left() // c), int(r.right() // c) + 1)
                for j in range(int(r.top() // c), int(r.bottom() // c) + 1))

    def add(self, r: QRectF) -> None:
        for key in self._keys(r):
            self.cells.setdefault(key, []).append(r)

    def hits(self, r: QRectF) -> bool:
        return any(r.intersects(o) for key in self._keys(r) for o in self.cells.get(key, ()))


def _along(path: np.ndarray, fractions) -> list[tuple[float, float]]:
    """The points at ``fractions`` of a polyline's length."""
    steps = np.hypot(*np.diff(path, axis=0).T)
    ends = np.concatenate(([0.0], np.cumsum(steps)))
    xs, ys = (np.interp(np.asarray(fractions) * ends[-1], ends, path[:, k]) for k in (0, 1))
    return list(zip(xs.tolist(), ys.tolist(), strict=True))


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
        size = f"numel {digits(node.numel)}" + (f" × rnumel {digits(node.rnumel)}"
                                                 if node.rnumel else "")
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
