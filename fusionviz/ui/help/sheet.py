"""The keyboard shortcut sheet: every command and key of the window, filtered as you
type (by command, key or where); Esc closes it."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QHeaderView,
    QLabel,
    QLineEdit,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fusionviz.ui.desktop import add_row_copy
from fusionviz.ui.help.shortcuts import Shortcut

COLUMNS = ("Keys", "Command", "Where")


class ShortcutSheet(QDialog):
    """Non-modal; ``set_rows`` fills it again (each time it is opened)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Keyboard Shortcuts — fusionviz")
        self.rows: list[Shortcut] = []
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("Filter: a command or a key (fold, ctrl+k, alt+3)…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self.apply_filter)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        self.table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setWordWrap(False)
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        header.setStretchLastSection(True)
        add_row_copy(self.table)
        self.count = QLabel()
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter)
        layout.addWidget(self.table, 1)
        layout.addWidget(self.count)
        self.resize(780, 620)

    def set_rows(self, rows: list[Shortcut]) -> None:
        self.rows = list(rows)
        self.table.setRowCount(len(self.rows))
        bold = QFont(self.font())
        bold.setBold(True)
        for r, row in enumerate(self.rows):
            for c, text in enumerate((row.keys, row.command, row.where)):
                item = QTableWidgetItem(text)
                if c == 0:
                    item.setFont(bold)
                self.table.setItem(r, c, item)
        self.apply_filter()

    def apply_filter(self, *_args) -> None:
        """Show the rows holding every word typed (in any column, any case)."""
        words = self.filter.text().casefold().split()
        for r, row in enumerate(self.rows):
            text = f"{row.keys}\n{row.command}\n{row.where}".casefold()
            self.table.setRowHidden(r, not all(w in text for w in words))
        shown = len(self.shown_rows())
        self.count.setText(f"{shown} of {len(self.rows)} commands and keys"
                           + ("; F1 on a pane: what it shows" if not words else ""))

    def shown_rows(self) -> list[Shortcut]:
        return [row for r, row in enumerate(self.rows) if not self.table.isRowHidden(r)]

    def open_sheet(self) -> None:
        """Show it with the filter empty and focused."""
        self.filter.clear()
        self.show()
        self.raise_()
        self.activateWindow()
        self.filter.setFocus(Qt.FocusReason.OtherFocusReason)
