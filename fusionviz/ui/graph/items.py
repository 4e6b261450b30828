"""Batched scene items that paint a laid-out scheduler graph: edges, group regions, nodes.

One QGraphicsItem per *tile* of about 32×32 node slots instead of one per node keeps
a 20k-node scene at a few hundred items (docs/graph-layout.md: per-node Python items cost
~170 ms per full-view frame at 20k, tiles ~45 ms). Tiles read shared per-node style
arrays in ``GraphPaint``; a fusion step rewrites those arrays and marks only the tiles
of changed nodes dirty. Text is painted only above ``LOD_TEXT`` (level of detail).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPainterPath, QPen
from PySide6.QtWidgets import QGraphicsItem, QStyleOptionGraphicsItem

from fusionviz.model.names import main_ops
from fusionviz.model.report.elide import elide_path
from fusionviz.ui.graph.paint import MAX_LABEL, STRIPE, GraphPaint, cut_middle, fits_width
from fusionviz.ui.theme import GraphColors, qcolor, tint

LOD_TEXT = 0.45  # below this zoom, nodes are plain colored boxes
LOD_ARROWS = 0.25
LOD_REGIONS = 0.08  # below this, regions are sub-pixel slivers: boxes carry the color
LOD_OUTLINES = 0.15  # below this, box outlines would cover the fill
LOD_EDGES = 0.015  # below this (a whole 20k graph in view), edges are a grey haze
TILE_SLOTS = 32
FEW_NODES = 80  # a view this small labels every node when zoomed out


def tile_keys(paint: GraphPaint) -> np.ndarray:
    """The tile each node belongs to, as one int key per node."""
    sx = TILE_SLOTS * (paint.w + paint.h_gap)
    sy = TILE_SLOTS * (paint.h + paint.v_gap)
    tx = np.floor((paint.x - paint.x.min(initial=0)) / sx).astype(np.int64)
    ty = np.floor((paint.y - paint.y.min(initial=0)) / sy).astype(np.int64)
    return ty * 1_000_003 + tx


class _TileItem(QGraphicsItem):
    """Base tile: a fixed set of node (and edge) indices with a precomputed bound."""

    def __init__(self, paint: GraphPaint, nodes: list[int], edges: list[int],
                 bridges: list[int] = ()) -> None:
        super().__init__()
        self.paint_data = paint
        self.node_ids = nodes
        self.edge_ids = edges
        self.bridge_ids = list(bridges)
        self.setFlag(QGraphicsItem.GraphicsItemFlag.ItemUsesExtendedStyleOption, True)
        self._bound = self._compute_bound()
        self._cache = None

    def _compute_bound(self) -> QRectF:
        p = self.paint_data
        ids, eids = np.asarray(self.node_ids, int), np.asarray(self.edge_ids, int)
        lo = [p.x[ids] - p.w / 2, p.y[ids] - p.h / 2, p.edge_lo[eids]]
        hi = [p.x[ids] + p.w / 2, p.y[ids] + p.h / 2, p.edge_hi[eids]]
        x0 = min([lo[0].min(initial=np.inf), lo[2][:, 0].min(initial=np.inf)])
        y0 = min([lo[1].min(initial=np.inf), lo[2][:, 1].min(initial=np.inf)])
        x1 = max([hi[0].max(initial=-np.inf), hi[2][:, 0].max(initial=-np.inf)])
        y1 = max([hi[1].max(initial=-np.inf), hi[2][:, 1].max(initial=-np.inf)])
        if not np.isfinite([x0, y0, x1, y1]).all():
            return QRectF()
        pad_x, pad_y = p.h_gap, p.v_gap
        return QRectF(x0 - pad_x, y0 - pad_y, x1 - x0 + 2 * pad_x, y1 - y0 + 2 * pad_y)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound

    def invalidate(self) -> None:
        """Drop cached drawing; the caller schedules the repaint (one for all tiles)."""
        self._cache = None

    def visible_nodes(self, option: QStyleOptionGraphicsItem) -> list[int]:
        exposed = option.exposedRect.adjusted(-2, -2, 2, 2)
        rects = self.paint_data.rects
        return [i for i in self.node_ids if exposed.intersects(rects[i])]


class EdgeTileItem(_TileItem):
    """Producer→consumer edges, routed as the layout's polylines; static across steps."""

    def __init__(self, paint: GraphPaint, edges: list[int]) -> None:
        super().__init__(paint, [], edges)
        self.setZValue(0)
        # Edges never change with a fusion step: a step repaints the tiles above them
        # from a cached pixmap (a 5k-node step frame 14 -> 9 ms); zooming re-renders.
        self.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)
        self._paths: tuple[QPainterPath, QPainterPath] | None = None

    def paint(self, painter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < LOD_EDGES:
            return
        if self._paths is None:  # built on first paint: most tiles of a big graph never are
            ids = self.edge_ids
            self._paths = (self.paint_data.polylines(ids), self.paint_data.arrows(ids))
        colors = self.paint_data.colors
        painter.setPen(QPen(colors.edge, 1.2 if lod >= LOD_ARROWS else 0))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawPath(self._paths[0])
        if lod >= LOD_ARROWS:
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(colors.edge)
            painter.drawPath(self._paths[1])
        if lod >= LOD_TEXT:
            self._paint_counts(painter)

    def _paint_counts(self, painter) -> None:
        """``×N`` on an edge that stands for N (between collapsed modules)."""
        painter.setPen(self.paint_data.colors.subtext)
        painter.setFont(QFont())
        ascent = QFontMetricsF(QFont()).ascent()
        for rect, text in self.text_rects():
            painter.drawText(QPointF(rect.left(), rect.top() + ascent), text)

    def text_rects(self) -> list[tuple[QRectF, str]]:
        """Where the ``×N`` of this tile's edges go (``GraphPaint.place_counts``)."""
        counts = self.paint_data.count_labels
        return [counts[e] for e in self.edge_ids if e in counts]


class RegionTileItem(_TileItem):
    """Colored regions behind the members of multi-node groups.

    A region is each member's padded box plus bridges along intra-group edges that
    span at most ``BRIDGED_LAYERS`` layers and between same-layer neighbours. Two layers of tiles paint it: the border layer
    strokes every shape wider in the kernel color, the fill layer (above it) paints the
    same shapes in a tint, so overlapping shapes of one group read as one outlined blob.
    """

    BRIDGE = 18.0

    def __init__(self, paint: GraphPaint, nodes, edges, bridges, *, border: bool) -> None:
        super().__init__(paint, nodes, edges, bridges)
        self.border = border
        self.twin: RegionTileItem | None = None  # the other layer: shapes are computed once
        self.setZValue(-2 if border else -1)

    def shapes(self) -> dict[int, tuple[list[QRectF], QPainterPath]]:
        """Color index → (padded member boxes and bridges, intra-group edge path)."""
        if self._cache is None:
            self._cache = self._compute_shapes()
            if self.twin is not None:
                self.twin._cache = self._cache
        return self._cache

    def _compute_shapes(self) -> dict[int, tuple[list[QRectF], QPainterPath]]:
        p = self.paint_data
        rects: dict[int, list[QRectF]] = defaultdict(list)
        lines: dict[int, list[int]] = defaultdict(list)
        multi, gid, color = p.multi, p.group_id, p.color_idx
        for i in self.node_ids:
            if multi[i]:
                rects[color[i]].append(p.padded[i])
        for a, b in (p.neighbours[k] for k in self.bridge_ids):
            if multi[a] and gid[a] == gid[b]:
                ra, rb = p.padded[a], p.padded[b]
                left, right = (ra, rb) if ra.x() < rb.x() else (rb, ra)
                rects[color[a]].append(QRectF(left.right() - 1, left.top(),
                                              right.left() - left.right() + 2, left.height()))
        short = p.short_edge
        for e in self.edge_ids:
            a, b = p.edges[e]
            # a long intra-group edge is not bridged: a group spread over many layers
            # (a fusion across the model's blocks) would paint over everything between
            if multi[a] and gid[a] == gid[b] and short[e]:
                lines[color[a]].append(e)
        return {c: (rects.get(c, []), p.polylines(lines.get(c, ())))
                for c in set(rects) | set(lines)}

    def paint(self, painter, option, widget=None) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) < LOD_REGIONS:
            return
        p = self.paint_data
        dark = p.colors.dark
        grow = 2.0 if self.border else 0.0
        for c, (rects, lines) in self.shapes().items():
            fill = qcolor(p.palette[c]) if self.border else tint(p.palette[c], dark)
            painter.setPen(QPen(fill, 2 * grow) if self.border else Qt.PenStyle.NoPen)
            painter.setBrush(fill)
            if rects:
                painter.drawRects(rects)
            if not lines.isEmpty():
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(QPen(fill, self.BRIDGE + 2 * grow, Qt.PenStyle.SolidLine,
                                    Qt.PenCapStyle.FlatCap, Qt.PenJoinStyle.RoundJoin))
                painter.drawPath(lines)


class NodeTileItem(_TileItem):
    """The nodes of one tile: boxes in their kernel color; name and ops when zoomed in."""

    def __init__(self, paint: GraphPaint, nodes: list[int]) -> None:
        super().__init__(paint, nodes, [])
        self.setZValue(1)
        self._font = QFont()
        self._font.setPointSizeF(8.5)
        self._bold = QFont(self._font)
        self._bold.setBold(True)
        self._fm = QFontMetricsF(self._font)
        self._bold_fm = QFontMetricsF(self._bold)
        self._ids = np.asarray(nodes, np.intp)
        self._memo: dict[tuple[bytes, bytes], tuple[dict[str, list[QRectF]], list[QRectF]]] = {}

    def _buckets(self) -> tuple[dict[str, list[QRectF]], list[QRectF]]:
        """Box rects by color (in order of first appearance) and the just-changed ones.

        Memoized on the tile's colors and changed flags: stepping back and forth over
        the rounds revisits the same few looks, and a tile a step touched only in its
        regions keeps its boxes.
        """
        p = self.paint_data
        ids = self._ids
        color, changed = p.color_idx[ids], p.changed[ids]
        key = (color.tobytes(), changed.tobytes())
        hit = self._memo.get(key)
        if hit is None:
            if len(self._memo) >= 8:  # a handful of steps' looks, not every one ever shown
                self._memo.clear()
            hit = self._memo[key] = _buckets(p, ids, color, changed)
        return hit

    def paint(self, painter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < LOD_TEXT:
            self._paint_boxes(painter, lod)
        else:
            self._paint_detailed(painter, self.visible_nodes(option))

    def _paint_boxes(self, painter, lod: float) -> None:
        if self._cache is None:
            self._cache = self._buckets()
        fills, changed = self._cache
        colors = self.paint_data.colors
        painter.setPen(QPen(colors.node_border, 0) if lod >= LOD_OUTLINES else Qt.PenStyle.NoPen)
        for color, rects in fills.items():
            painter.setBrush(tint(color, colors.dark, 0.85))
            painter.drawRects(rects)
        if changed:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(colors.changed, 4))
            painter.drawRects(changed)
        self._paint_box_titles(painter, lod)

    def _paint_box_titles(self, painter, lod: float) -> None:
        """Zoomed out, a module box still says what it is, at a readable size; in a
        small view (a first view of a big model) every node does, by its module."""
        font, titles = self._box_titles(lod)
        if not titles:
            return
        p = self.paint_data
        painter.setFont(font)
        ascent = QFontMetricsF(font).ascent()
        for i, rect, text in titles:
            if i in p.boxes:
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.setPen(QPen(p.colors.node_border, 2.5 / lod))
                painter.drawRect(p.rects[i])
            painter.setPen(p.colors.text)
            painter.drawText(QPointF(rect.left(), rect.top() + ascent), text)

    def _box_titles(self, lod: float) -> tuple[QFont, list[tuple[int, QRectF, str]]]:
        """The zoomed-out titles: (node, where the text goes, the text), shortened to
        the box's width: a module path by whole segments, an op or a name at its end."""
        p = self.paint_data
        few = len(p.names) <= FEW_NODES
        ids = [i for i in self.node_ids if i in p.boxes or few]
        font = QFont(self._bold)
        if not ids or lod <= 0:
            return font, []
        font.setPointSizeF(min(8.0 / lod, 60.0))
        fm = QFontMetricsF(font)
        rooms = p.title_room(few)
        out = []
        for i in ids:
            rect, room = p.rects[i], float(rooms[i])  # to the next title in its layer
            room = max(rect.width(), room if room < np.inf else rect.width() * 3)
            node = p.nodes[i]
            if i in p.boxes or (node is not None and node.module):
                path = p.boxes[i][0].title if i in p.boxes else node.module
                text = elide_path(path[:MAX_LABEL], fits_width(fm, room),
                                  cut_middle(fm, room))
            else:
                ops = main_ops(node, 1) if node else ()
                text = fm.elidedText((ops[0] if ops else p.names[i])[:MAX_LABEL],
                                     Qt.TextElideMode.ElideRight, room)
            if text.strip("…"):
                out.append((i, QRectF(rect.left(), rect.top() - 4 / lod - fm.ascent(),
                                      fm.horizontalAdvance(text), fm.height()), text))
        return font, out

    def text_rects(self, lod: float) -> list[tuple[QRectF, str]]:
        """Where this tile paints text at zoom ``lod``, and the text: node labels zoomed
        in, box titles zoomed out (what the paint methods draw, for checks)."""
        if lod < LOD_TEXT:
            return [(rect, text) for _i, rect, text in self._box_titles(lod)[1]]
        p, out = self.paint_data, []
        for i in self.node_ids:
            for (_font, _pen, line, dy), fm in zip(self._lines(), (self._bold_fm, self._fm),
                                                   strict=True):
                text = p.label(i, self._fm, self._bold_fm)[line].text()
                out.append((QRectF(p.rects[i].left() + STRIPE + 8, p.rects[i].top() + dy,
                                   fm.horizontalAdvance(text), fm.height()), text))
        return out

    def _paint_detailed(self, painter, ids: list[int]) -> None:
        p, colors = self.paint_data, self.paint_data.colors
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        for i in ids:
            rect, cat = p.rects[i], p.category[i]
            painter.setPen(_node_pen(cat, bool(p.changed[i]), colors))
            painter.setBrush(colors.node_fill)
            radius = rect.height() / 2 if cat in ("extern", "collective") else 5.0
            painter.drawRoundedRect(rect, radius, radius)
            stripe = QRectF(rect.left() + 1.5, rect.top() + 4, STRIPE, rect.height() - 8)
            if i in p.boxes:
                _paint_box(painter, rect, stripe, p.boxes[i][1], colors)
            else:
                painter.fillRect(stripe, qcolor(p.kernel_color[i]))
        self._paint_labels(painter, ids)

    def _lines(self):
        """(font, pen, which label line, its top below the box's) of the two lines."""
        colors = self.paint_data.colors
        return ((self._bold, colors.text, 0, 5), (self._font, colors.subtext, 1, 24))

    def _paint_labels(self, painter, ids: list[int]) -> None:
        p = self.paint_data
        left = STRIPE + 8
        for font, pen, line, dy in self._lines():
            painter.setFont(font)
            painter.setPen(pen)
            for i in ids:
                rect = p.rects[i]
                painter.drawStaticText(QPointF(rect.left() + left, rect.top() + dy),
                                       p.label(i, self._fm, self._bold_fm)[line])


def _paint_box(painter, rect: QRectF, stripe: QRectF, kernel_colors: list[str],
               colors: GraphColors) -> None:
    """A collapsed module: a second border inside the first (it holds more), and its
    kernels' colors stacked in the stripe, most members first."""
    painter.setBrush(Qt.BrushStyle.NoBrush)
    painter.setPen(QPen(colors.node_border, 1.0))
    painter.drawRoundedRect(rect.adjusted(3, 3, -3, -3), 3.0, 3.0)
    shown = kernel_colors[:8]
    step = stripe.height() / len(shown)
    for k, c in enumerate(shown):
        painter.fillRect(QRectF(stripe.left(), stripe.top() + k * step, stripe.width(), step),
                         qcolor(c))


def _buckets(p: GraphPaint, ids: np.ndarray, color: np.ndarray, changed: np.ndarray):
    """The rects of nodes ``ids`` grouped by palette color, and those of changed nodes."""
    if not len(ids):
        return {}, []
    order = np.argsort(color, kind="stable")  # within a color, nodes keep tile order
    uniq, first, counts = np.unique(color, return_index=True, return_counts=True)
    rects = p.rect_array[ids[order]].tolist()
    bounds = np.concatenate(([0], np.cumsum(counts))).tolist()
    by_color = {int(c): rects[bounds[k]:bounds[k + 1]] for k, c in enumerate(uniq.tolist())}
    fills = {p.palette[c]: by_color[c] for c in color[np.sort(first)].tolist()}
    return fills, p.rect_array[ids[changed]].tolist()


def _node_pen(category: str, changed: bool, colors: GraphColors) -> QPen:
    """Extern calls get a dashed pill, collectives a thick pill in their own color,
    templates a double-weight border, just-fused a bold one."""
    if changed:
        return QPen(colors.changed, 2.2)
    if category == "collective":
        return QPen(colors.collective, 2.6)
    pen = QPen(colors.node_border, 2.2 if category == "template" else 1.0)
    if category == "extern":
        pen.setStyle(Qt.PenStyle.DashLine)
    elif category == "nop":
        pen.setStyle(Qt.PenStyle.DotLine)
    return pen


class TileIndex:
    """Which tile owns each node, and which other tiles paint something of it."""

    def __init__(self, tile_of: np.ndarray, extra: dict[int, set[int]]) -> None:
        self.tile_of = tile_of
        self.extra = extra  # node -> tiles whose edges or bridges reach it
        # The same as flat (node, tile) pairs, for the vectorized lookup of a step.
        pairs = [(i, t) for i, tiles in extra.items() for t in tiles]
        self._extra_nodes = np.array([i for i, _ in pairs], np.intp)
        self._extra_tiles = np.array([t for _, t in pairs], np.intp)

    def tiles_of(self, nodes: np.ndarray) -> set[int]:
        out = set(np.unique(self.tile_of[nodes]).tolist())
        if len(self._extra_nodes):
            touched = np.zeros(len(self.tile_of), bool)
            touched[nodes] = True
            out.update(np.unique(self._extra_tiles[touched[self._extra_nodes]]).tolist())
        return out


def _grouped(owner: np.ndarray, n_groups: int) -> list[list[int]]:
    """Indices 0..len(owner)-1 split by their owner (a group number per index)."""
    order = np.argsort(owner, kind="stable")
    bounds = np.searchsorted(owner[order], np.arange(n_groups + 1))
    ids = order.tolist()
    return [ids[bounds[t]:bounds[t + 1]] for t in range(n_groups)]


def build_tiles(paint: GraphPaint):
    """All tiles of a scene and the index of which tiles depend on which nodes.

    Returns ``(tiles, index)``: tiles by layer ("edges", "border", "fill", "nodes"),
    each layer a list indexed by tile number (edge tiles may be None). Tiles are grid
    cells of node positions; an edge or bridge belongs to the tile of its first node.
    """
    n = len(paint.names)
    keys = tile_keys(paint) if n else np.zeros(0, np.int64)
    _, tile_of = np.unique(keys, return_inverse=True)
    tile_of = tile_of.reshape(-1)
    n_tiles = int(tile_of.max()) + 1 if n else 0
    edges = np.asarray(paint.edges, int).reshape(-1, 2)
    bridges = np.asarray(paint.neighbours, int).reshape(-1, 2)
    extra: dict[int, set[int]] = defaultdict(set)
    for pairs in (edges, bridges):
        crossing = tile_of[pairs[:, 0]] != tile_of[pairs[:, 1]]
        for a, b in pairs[crossing].tolist():
            extra[b].add(int(tile_of[a]))
    by_tile = _grouped(tile_of, n_tiles)
    edges_by = _grouped(tile_of[edges[:, 0]], n_tiles)
    bridges_by = _grouped(tile_of[bridges[:, 0]], n_tiles)
    tiles = {"edges": [], "border": [], "fill": [], "nodes": []}
    for t, nodes in enumerate(by_tile):
        tiles["nodes"].append(NodeTileItem(paint, nodes))
        border, fill = (RegionTileItem(paint, nodes, edges_by[t], bridges_by[t],
                                       border=is_border) for is_border in (True, False))
        border.twin, fill.twin = fill, border
        tiles["border"].append(border)
        tiles["fill"].append(fill)
        tiles["edges"].append(EdgeTileItem(paint, edges_by[t]) if edges_by[t] else None)
    return tiles, TileIndex(tile_of, dict(extra))
