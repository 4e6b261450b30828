"""The Advisor's whole-step table: every change measured on any graph, what it did to
each graph and what it saves per step (``fusionviz.model.advisor.step``), the best
first. Selecting a row shows the graph where it won most (a pair: its graph)."""

from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush
from PySide6.QtWidgets import QTableWidget, QTableWidgetItem

from fusionviz.model.advisor.measure import Measurement
from fusionviz.model.advisor.step import StepChange, step_changes, step_ms
from fusionviz.model.report.formatting import clip
from fusionviz.ui.desktop import add_row_copy
from fusionviz.ui.plain import tip

COLUMNS = ("whole step: change", "per step", "on each graph measured", "how to apply")


class StepTable(QTableWidget):
    sig_graph = Signal(int)
    """A graph's index (``Graph.index``) to show."""

    def __init__(self, win, worse, parent=None) -> None:
        super().__init__(0, len(COLUMNS), parent)
        self._win, self._worse = QBrush(win), QBrush(worse)
        self.changes: list[StepChange] = []
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.verticalHeader().hide()
        self.horizontalHeader().setStretchLastSection(True)
        self.setToolTip(tip(
            "The whole step: each change measured, added up over the graphs it was "
            "measured on. A setting applies to every graph of a torch.compile, so a graph "
            "it made slower counts against it; 'within noise' counts as nothing. Two "
            "changes were never measured together: their gains do not add up."))
        self.currentCellChanged.connect(self._show_graph)
        add_row_copy(self)
        self.hide()

    def fill(self, measured: Mapping[int, Measurement]) -> None:
        self.changes = step_changes(measured)
        total = step_ms(measured)
        self.setRowCount(len(self.changes))
        for row, s in enumerate(self.changes):
            share = (f" ({100 * s.net_ms / total:+.1f}% of the step)"
                     if total and s.net_ms else "")
            net = f"{s.net_ms:+.3f} ms{share}" if s.net_ms else "none"
            for col, text in enumerate((s.what, net, s.verdicts(), s.apply)):
                item = QTableWidgetItem(clip(text, 300))
                item.setToolTip(tip(text))
                if col == 1:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                    if s.net_ms:
                        item.setForeground(self._win if s.net_ms > 0 else self._worse)
                self.setItem(row, col, item)
        self.resizeColumnsToContents()
        self.setVisible(bool(self.changes))

    def fitting_height(self, rows: int = 4) -> int:
        """Pixels that show the header and up to ``rows`` rows."""
        shown = min(rows, self.rowCount())
        return (self.horizontalHeader().height() + 2 * self.frameWidth()
                + sum(self.rowHeight(r) for r in range(shown)))

    def _show_graph(self, row: int, *_cells) -> None:
        if 0 <= row < len(self.changes):
            on = self.changes[row].on
            best = max(on, key=lambda ir: ir[1].gain_ms or 0.0)
            self.sig_graph.emit(best[0])
