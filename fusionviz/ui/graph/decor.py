"""What the graph view draws around its nodes when modules are folded: titled frames
around modules opened from a box, stubs of high fan-out nodes, and box tooltips."""

from __future__ import annotations

from collections import Counter
from html import escape

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem

from fusionviz.model.layout.frames import TITLE_H, Frame
from fusionviz.model.report.elide import elide_title
from fusionviz.ui.graph.items import LOD_TEXT
from fusionviz.ui.graph.paint import GraphPaint, cut_middle, fits_width

STUB = 14.0


class FramesItem(QGraphicsItem):
    """A titled frame (``blocks.3 (Block)``) around each module opened from a box; the
    layout (``model.layout.frames``) placed frames and title bands so no title covers
    another or a node. Titles are shortened to their frame by whole path segments."""

    def __init__(self, paint: GraphPaint, frames: list[Frame],
                 classes: dict[str, str]) -> None:
        super().__init__()
        self.setZValue(-3)  # behind group regions
        self.paint_data = paint
        self._font = QFont()
        self._font.setPointSizeF(8.0)
        fm = QFontMetricsF(self._font)
        self._ascent = fm.ascent()
        self.frames: list[tuple[QRectF, str]] = []  # each frame and its whole title
        self.paths: list[str] = []  # the module of each frame
        self.titles: list[tuple[QRectF, str]] = []  # where each title is drawn, as shown
        self._bound = QRectF()
        for f in frames:
            r = QRectF(f.x0, f.y0, f.x1 - f.x0, f.y1 - f.y0)
            cls = classes.get(f.path, "")
            room = r.width() - 16
            text = elide_title(f.path, cls, fits_width(fm, room), cut_middle(fm, room))
            self.frames.append((r, f.path + (f" ({cls})" if cls else "")))
            self.paths.append(f.path)
            self.titles.append((QRectF(r.left() + 8, r.top() + (TITLE_H - fm.height()) / 2,
                                       fm.horizontalAdvance(text), fm.height()), text))
            self._bound = self._bound.united(r)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound.adjusted(-2, -2, 2, 2)

    def paint(self, painter, option, widget=None) -> None:
        colors = self.paint_data.colors
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.setPen(QPen(colors.subtext, 1.2, Qt.PenStyle.DashLine))
        for r, _title in self.frames:
            painter.drawRoundedRect(r, 8, 8)
        if option.levelOfDetailFromTransform(painter.worldTransform()) < LOD_TEXT:
            return  # titles of a few pixels: unreadable, and room for the boxes' titles
        painter.setFont(self._font)
        painter.setPen(colors.subtext)
        for r, text in self.titles:
            painter.drawText(QPointF(r.left(), r.top() + self._ascent), text)


class HubsItem(QGraphicsItem):
    """A node feeding many others (an RNG seed, a mask) keeps short stubs instead of
    long edges: ``→ N`` under it, ``← name`` over each consumer. Selecting or
    hovering it rings its consumers (the overlay)."""

    def __init__(self, paint: GraphPaint, hubs: dict[str, tuple[str, ...]]) -> None:
        super().__init__()
        self.setZValue(2)
        self.paint_data = paint
        self.out: list[tuple[int, str]] = []  # hub index, its label
        self.into: list[tuple[int, str]] = []  # consumer index, its label
        fan_in: dict[int, list[str]] = {}
        for hub, consumers in hubs.items():
            h = paint.index.get(hub)
            if h is None:
                continue
            self.out.append((h, f"→ {len(consumers)}"))
            for c in consumers:
                if c in paint.index:
                    fan_in.setdefault(paint.index[c], []).append(hub)
        for i, hs in fan_in.items():
            self.into.append((i, "← " + ", ".join(hs[:2]) + (f" +{len(hs) - 2}" if len(hs) > 2 else "")))
        self._font = QFont()
        self._font.setPointSizeF(7.5)
        fm = QFontMetricsF(self._font)
        self._ascent = fm.ascent()
        # (stub start, stub end, where its text goes, the text): "→ N" under the hub,
        # "← name" over a consumer, shortened to the box's width from there
        self.stubs: list[tuple[QPointF, QPointF, QRectF, str]] = []
        for i, text in self.out:
            r = paint.rects[i]
            x, y = r.center().x(), r.bottom()
            self.stubs.append(self._stub(fm, QPointF(x, y), QPointF(x, y + STUB),
                                         y + STUB - fm.ascent(), text, r.right()))
        for i, text in self.into:
            r = paint.rects[i]
            x, y = r.center().x() - r.width() / 4, r.top()
            self.stubs.append(self._stub(fm, QPointF(x, y - STUB), QPointF(x, y),
                                         y - STUB + 9 - fm.ascent(), text, r.right()))
        self._bound = QRectF()
        for i in [i for i, _ in self.out] + [i for i, _ in self.into]:
            self._bound = self._bound.united(paint.rects[i].adjusted(-4, -STUB - 14, 4, STUB + 14))

    @staticmethod
    def _stub(fm: QFontMetricsF, a: QPointF, b: QPointF, top: float, text: str,
              right: float) -> tuple[QPointF, QPointF, QRectF, str]:
        left = a.x() + 4
        text = fm.elidedText(text, Qt.TextElideMode.ElideRight, right - left)
        return a, b, QRectF(left, top, fm.horizontalAdvance(text), fm.height()), text

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound

    def paint(self, painter, option, widget=None) -> None:
        lod = option.levelOfDetailFromTransform(painter.worldTransform())
        if lod < 0.25:
            return
        colors = self.paint_data.colors
        painter.setFont(self._font)
        painter.setPen(QPen(colors.edge, 1.2))
        for a, b, _rect, _text in self.stubs:
            painter.drawLine(a, b)
        if lod < LOD_TEXT:
            return  # zoomed out, the boxes' titles are over the stubs
        painter.setPen(colors.subtext)
        for _a, _b, rect, text in self.stubs:
            painter.drawText(QPointF(rect.left(), rect.top() + self._ascent), text)


def box_tooltip(box, note: str, kernel_of: dict, decisions=None, vs_eager: str = "") -> str:
    """What a box holds: module, class, nodes (and those between its blocks), kernels,
    for folded blocks whether their fusion decisions agree block to block, and
    ``vs_eager`` (a line of rich text: its time compiled against eager)."""
    lines = [f"<b>{escape(box.title)}</b>"
             + (f" — {escape(box.module_class)}" if box.module_class else "")]
    if box.run is not None:
        lines.append(f"{len(box.run.paths)} blocks of one structure, folded: "
                     + escape(", ".join(box.run.paths)))
        lines += [f"<i>{escape(path)}: {escape(why)}</i>" for path, why in box.run.odd[:4]]
        if len(box.run.odd) > 4:
            lines.append(f"<i>… and {len(box.run.odd) - 4} more blocks differ</i>")
    lines.append(f"{len(box.nodes)} nodes" + (f" ({box.between} between its blocks)"
                                              if box.between else ""))
    if note:
        lines.append(escape(note))
    if decisions is not None:
        lines.append(f"fusion decisions inside one block: {decisions.same} the same in all "
                     f"{decisions.blocks} blocks" + (f", {len(decisions.differ)} differ"
                                                     if decisions.differ else ""))
        for pair, split in decisions.differ[:4]:
            how = "; ".join(f"{escape(o)} in {len(ps)} ({escape(_blocks(ps))})"
                            for o, ps in sorted(split.items(), key=lambda x: -len(x[1])))
            lines.append(f"&nbsp;&nbsp;<b>differs</b> {escape(pair)}: {how}")
    kernels = Counter(kernel_of[m].name for m in box.nodes if m in kernel_of)
    if kernels:
        shown = ", ".join(f"{escape(k)} ×{n}" if n > 1 else escape(k)
                          for k, n in kernels.most_common(6))
        more = f" (+{len(kernels) - 6})" if len(kernels) > 6 else ""
        lines.append(f"{len(kernels)} kernels: {shown}{more}")
    if vs_eager:
        lines.append(vs_eager)
    lines.append("<i>click (or E) to expand</i>")
    return "<br>".join(lines)


def _blocks(paths: tuple[str, ...]) -> str:
    return ", ".join(paths[:3]) + (f" … +{len(paths) - 3}" if len(paths) > 3 else "")
