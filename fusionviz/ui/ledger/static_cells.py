"""A table delegate that paints each cell's text from a cached, laid-out QStaticText.

The default delegate lays every cell's text out again on every repaint (~50 µs a
cell here): the ledger repaints a screenful of cells at each fusion step, which made
it the slowest part of a step. This one keeps the elided, laid-out text per (row,
column, width) and draws it with ``drawStaticText``: a repaint of revisited rows costs
a third as much. The model supplies what a cell looks like through ``cell_look``.
"""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSize, Qt
from PySide6.QtGui import QPalette, QStaticText
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

_PAD = 4  # horizontal text padding inside a cell
_MAX_CACHED = 20_000  # laid-out texts kept (a few screens of a few rounds)


class StaticTextDelegate(QStyledItemDelegate):
    """Draws cells from their model's ``cell_look(row, column)``: (the row's object,
    text, right-aligned, text color or None); the same row object must always show the
    same texts."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        # (id of the row object, column, width) -> (the row object, its laid-out text);
        # holding the row keeps its id from being reused by another.
        self._texts: dict[tuple[int, int, int], tuple[object, QStaticText]] = {}

    def clear(self) -> None:
        self._texts.clear()

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex) -> QSize:  # noqa: N802
        """Room for the text and the padding ``paint`` leaves (fitting columns use it)."""
        _, text, _, _ = index.model().cell_look(index.row(), index.column())
        hint = super().sizeHint(option, index)
        width = option.fontMetrics.horizontalAdvance(text.replace("\n", " ")) + 2 * _PAD + 2
        return QSize(max(width, 1), hint.height())

    def paint(self, painter, option: QStyleOptionViewItem, index: QModelIndex) -> None:
        owner, text, right, color = index.model().cell_look(index.row(), index.column())
        rect = option.rect
        state, palette = option.state, option.palette
        selected = bool(state & QStyle.StateFlag.State_Selected)
        if selected:
            group = (QPalette.ColorGroup.Active if state & QStyle.StateFlag.State_Active
                     else QPalette.ColorGroup.Inactive)
            painter.fillRect(rect, palette.color(group, QPalette.ColorRole.Highlight))
        elif option.features & QStyleOptionViewItem.ViewItemFeature.Alternate:
            painter.fillRect(rect, palette.alternateBase())
        if not text:
            return
        width = rect.width() - 2 * _PAD
        cache_key = (id(owner), index.column(), width)
        hit = self._texts.get(cache_key)
        if hit is None or hit[0] is not owner:
            if len(self._texts) >= _MAX_CACHED:
                self._texts.clear()
            shown = option.fontMetrics.elidedText(text.replace("\n", " "),
                                                  Qt.TextElideMode.ElideRight, width)
            static = QStaticText(shown)
            static.setTextFormat(Qt.TextFormat.PlainText)
            static.prepare(painter.transform(), option.font)
            hit = self._texts[cache_key] = (owner, static)
        static = hit[1]
        if selected:
            pen = palette.color(QPalette.ColorRole.HighlightedText)
        else:
            pen = color if color is not None else palette.color(QPalette.ColorRole.Text)
        painter.setPen(pen)
        painter.setFont(option.font)
        size = static.size()
        x = rect.right() - _PAD - size.width() if right else rect.x() + _PAD
        painter.drawStaticText(int(x), int(rect.y() + (rect.height() - size.height()) / 2),
                               static)
