"""The Advisor pane (#20): what in the shown graph may be worth changing, ranked by
estimate (``fusionviz.model.advisor.candidates``), each with the ``fusionviz replay``
command that tries it and how to apply it. Nothing here is measured yet: the header
says so. Selecting a pair selects its nodes (graph, Details); right-click a row (or
Ctrl+C) copies its replay command.
"""

from __future__ import annotations

import shlex

from PySide6.QtCore import Qt
from PySide6.QtGui import QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QLabel,
    QMenu,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.advisor.candidates import Candidate, rank
from fusionviz.model.errors import TraceError
from fusionviz.model.report.formatting import clip
from fusionviz.ui.plain import menu_text, plain, tip
from fusionviz.ui.view_state import ViewState

COLUMNS = ("#", "estimate", "bytes saved", "candidate", "why", "how to apply")
SHOWN = 200  # rows; a big graph's scan verdicts run into the thousands


class AdvisorPane(QWidget):
    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.candidates: list[Candidate] = []
        self._shown_for = None  # the graph the table was filled for
        self.on_screen = False  # its dock is shown and in front (set_on_screen)
        self.header = plain(QLabel())
        self.header.setWordWrap(True)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        self.table.currentCellChanged.connect(self._show_on_graph)
        QShortcut(QKeySequence.StandardKey.Copy, self.table, self.copy_command)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.header)
        box.addWidget(self.table, 1)
        state.sig_graph_changed.connect(lambda _i: self.refresh())

    def set_on_screen(self, on: bool) -> None:
        """Its dock's tab was brought to the front (or hidden): QDockWidget's
        visibilityChanged, which a widget behind another tab does not get wrong."""
        self.on_screen = on
        self.refresh()

    def refresh(self) -> None:
        """Rank the shown graph's candidates (once per graph, and only when on screen:
        it reads every round's ledger and every node's details)."""
        graph = self._state.graph
        if not self.on_screen or graph is self._shown_for:
            return
        self._shown_for = graph
        self.candidates = []
        if graph is None:
            self.header.setText("No graph.")
        else:
            try:
                self.candidates = rank(self._state.trace, graph)
            except TraceError as e:  # a malformed part: said once, where it is met
                self._state.report_unreadable(str(e))
                self.header.setText("Part of this graph's record cannot be read; "
                                    "see Notices.")
            else:
                self.header.setText(
                    f"Graph {graph.index} ({graph.kind}): {len(self.candidates)} candidate(s) "
                    "ranked by estimate, not measured. A pair's estimate is the bytes fusing "
                    "would save at the GPU's peak bandwidth (an upper bound). Select a pair to "
                    "see it on the graph; right-click a row to copy the fusionviz replay "
                    "command that tries it.")
        self._fill()

    def _fill(self) -> None:
        shown = self.candidates[:SHOWN]
        self.table.setRowCount(len(shown))
        for row, c in enumerate(shown):
            cells = (str(row + 1), f"{c.ms:.3f} ms" if c.ms is not None else "?",
                     f"{c.bytes_saved:,}" if c.bytes_saved is not None else "", c.what,
                     c.why, c.apply)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(clip(text, 300))
                item.setToolTip(tip(text))
                if col in (0, 1, 2):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()

    def _show_on_graph(self, row: int, *_cells) -> None:
        """A pair's nodes selected: the graph and Details show them."""
        if 0 <= row < len(self.candidates) and self.candidates[row].nodes:
            self._state.select_nodes(self.candidates[row].nodes)

    def command(self, row: int) -> str:
        """The ``fusionviz replay`` command that tries the candidate of ``row``."""
        c, graph = self.candidates[row], self._state.graph
        out = f"replay_graph{graph.index}.json.gz"
        return shlex.join(["fusionviz", "replay", self._state.path, "--graph",
                           str(graph.index), *c.try_args, "-o", out])

    def copy_command(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.candidates):
            QGuiApplication.clipboard().setText(self.command(row))

    def _menu(self, pos) -> None:
        row = self.table.rowAt(pos.y())
        if not 0 <= row < len(self.candidates):
            return
        self.table.selectRow(row)
        menu = QMenu(self)
        menu.addAction(menu_text("Copy the replay command that tries it"), self.copy_command)
        menu.popup(self.table.viewport().mapToGlobal(pos))
