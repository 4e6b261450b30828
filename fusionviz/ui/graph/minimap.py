"""The overview in the graph view's corner: every node as a dot, the visible area framed.

The nodes are painted once into an image per graph or theme; scrolling only repaints
the frame, so the overview costs nothing while panning a 20k-node graph. Click or
drag in it to move the view there.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QImage, QPainter, QPen
from PySide6.QtWidgets import QWidget

from fusionviz.ui.graph.paint import GraphPaint


class MiniMap(QWidget):
    """Overview in the view's corner: every node as a dot, the visible area as a frame.

    The nodes are painted once into a pixmap per graph or theme; scrolling only
    repaints the frame, so the overview costs nothing while panning a 20k-node graph.
    Click or drag in it to move the view there.
    """

    SIZE = 180

    def __init__(self, view) -> None:
        super().__init__(view)
        self.view = view
        self._image: QImage | None = None
        self._scale = 1.0
        self.hide()

    def set_paint(self, paint: GraphPaint | None) -> None:
        self._image = None
        if paint is None or len(paint.names) < 30:
            self.hide()
            return
        rect = self.view.scene().sceneRect()
        self._scale = self.SIZE / max(rect.width(), rect.height())
        w, h = max(8, int(rect.width() * self._scale)), max(8, int(rect.height() * self._scale))
        self.resize(w + 2, h + 2)
        image = QImage(w, h, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(paint.colors.background))
        painter = QPainter(image)
        painter.translate(-rect.left() * self._scale, -rect.top() * self._scale)
        painter.scale(self._scale, self._scale)
        painter.setPen(Qt.PenStyle.NoPen)
        for k, color in enumerate(paint.palette):
            painter.setBrush(QColor(color))
            painter.drawRects([paint.rects[i] for i in np.flatnonzero(paint.color_idx == k)])
        painter.end()
        self._image = image
        self.reposition()
        self.show()

    def reposition(self) -> None:
        vp = self.view.viewport().geometry()
        self.move(vp.right() - self.width() - 8, vp.bottom() - self.height() - 8)

    def _to_scene(self, pos) -> QPointF:
        rect = self.view.scene().sceneRect()
        return QPointF(rect.left() + pos.x() / self._scale, rect.top() + pos.y() / self._scale)

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if self._image is None:
            return
        painter = QPainter(self)
        painter.drawImage(1, 1, self._image)
        painter.setPen(QPen(self.palette().mid().color(), 1))
        painter.drawRect(0, 0, self.width() - 1, self.height() - 1)
        rect = self.view.scene().sceneRect()
        seen = self.view.mapToScene(self.view.viewport().rect()).boundingRect()
        frame = QRectF((seen.left() - rect.left()) * self._scale + 1,
                       (seen.top() - rect.top()) * self._scale + 1,
                       seen.width() * self._scale, seen.height() * self._scale)
        painter.setPen(QPen(QColor("#d81b60"), 1.5))
        painter.drawRect(frame.intersected(QRectF(self.rect())))
        painter.end()

    def mousePressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.view.centerOn(self._to_scene(event.position()))

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if event.buttons() & Qt.MouseButton.LeftButton:
            self.view.centerOn(self._to_scene(event.position()))

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 (Qt override)
        event.accept()  # the end of a click or drag on the map: nothing left to do
