"""Column widths fitted to a table's contents, measuring only each column's widest cells.

``QTableView.resizeColumnsToContents`` asks the model and the delegate about every
cell (about 1 s for the thousand kernels of a deep model's backward graph). Here each
cell's text is measured with the table's font, and the delegate sizes only the few
widest of each column (by text, and those with an icon): the same widths.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QTableView

CANDIDATES = 4  # cells a column the delegate sizes, of those with and without an icon


def content_widths(table: QTableView,
                   texts: Callable[[int], list[tuple[str, bool]]]) -> list[int]:
    """Each column's width as ``resizeColumnToContents`` sets it (Qt 6): the widest of
    its shown cells (``texts(col)``: row by row, the text and whether it has an icon)
    and its header. Measures all rows (Qt: at most 1,000, those near the top)."""
    model, header, metrics = table.model(), table.horizontalHeader(), table.fontMetrics()
    grid = 1 if table.showGrid() else 0
    widths = []
    for col in range(model.columnCount()):
        cells = texts(col)
        first = {}  # each distinct cell once (a column repeats its kinds, dtypes, modules)
        for r, cell in enumerate(cells):
            first.setdefault(cell, r)
        sized = [(metrics.horizontalAdvance(text), icon, r)
                 for (text, icon), r in first.items()]
        widest = sorted(sized, reverse=True)[:CANDIDATES]
        widest += sorted((s for s in sized if s[1]), reverse=True)[:CANDIDATES]
        content = max((table.sizeHintForIndex(model.index(r, col)).width()
                       for *_, r in widest), default=0)
        hint = 0 if header.isHidden() else header.sectionSizeHint(col)
        widths.append(max(content + grid if cells else 0, hint))
    return widths
