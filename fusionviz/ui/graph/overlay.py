"""The rings drawn over the graph: the selection, the selected kernel's nodes, the
candidate pair (linked), a hub's consumers and search hits."""

from __future__ import annotations

from PySide6.QtCore import QLineF, QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QPen
from PySide6.QtWidgets import QGraphicsItem

from fusionviz.ui.graph.paint import GraphPaint


class OverlayItem(QGraphicsItem):
    """Rings around selected nodes, the selected kernel's nodes, the highlighted
    candidate pair and search hits."""

    def __init__(self, paint: GraphPaint) -> None:
        super().__init__()
        self.paint_data = paint
        self.setZValue(3)
        self.selected: list[int] = []
        self.pair: tuple[list[int], list[int]] = ([], [])
        self.hits: list[int] = []
        self.kernel: list[int] = []
        self.consumers: list[int] = []
        self._bound = QRectF()

    def set_marks(self, selected, pair, hits, kernel=(), consumers=()) -> None:
        self.prepareGeometryChange()
        self.selected, self.pair, self.hits = list(selected), pair, list(hits)
        self.kernel, self.consumers = list(kernel), list(consumers)
        r = QRectF()
        for i in [*self.selected, *pair[0], *pair[1], *self.hits, *self.kernel,
                  *self.consumers]:
            r = r.united(self.paint_data.rects[i])
        self._bound = r.adjusted(-400, -400, 400, 400)  # room for rings scaled when zoomed out
        self.update()

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound

    def paint(self, painter, option, widget=None) -> None:
        p, colors = self.paint_data, self.paint_data.colors
        # Zoomed out, rings keep a visible on-screen width (and grow around tiny boxes).
        k = max(1.0, 1.0 / max(option.levelOfDetailFromTransform(painter.worldTransform()), 1e-3) / 2)
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        self._rings(painter, self.hits, QPen(colors.search, 6 * k), 5 * k)
        kernel = QColor(colors.selection)
        kernel.setAlphaF(0.55)
        self._rings(painter, self.kernel, QPen(kernel, 2 * k, Qt.PenStyle.DashLine), 9 * k)
        self._rings(painter, self.consumers, QPen(colors.selection, 2 * k, Qt.PenStyle.DotLine),
                    5 * k)
        a, b = self.pair
        self._rings(painter, [*a, *b], QPen(colors.pair, 4 * k), 7 * k)
        if a and b:  # a faint link: the two sides may be far apart in the layout
            link = QColor(colors.pair)
            link.setAlphaF(0.45)
            painter.setPen(QPen(link, 2 * k, Qt.PenStyle.DashLine))
            painter.drawLine(QLineF(_center(p, a), _center(p, b)))
        self._rings(painter, self.selected, QPen(colors.selection, 4 * k), 3 * k)

    def _rings(self, painter, ids, pen: QPen, grow: float) -> None:
        painter.setPen(pen)
        for i in ids:
            painter.drawRoundedRect(self.paint_data.rects[i].adjusted(-grow, -grow, grow, grow),
                                    7, 7)


def _center(p: GraphPaint, ids: list[int]) -> QPointF:
    return QPointF(float(p.x[ids].mean()), float(p.y[ids].mean()))
