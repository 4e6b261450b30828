"""The fusion ledger: the current round's candidate pairs in score order, filterable.

Presents ``report.ledger_table.ledger_rows`` for the round of the current step, and
``report.reorder_table.reorder_rows`` (the fused nodes in their new order) for a step
that is a post-fusion reordering pass; clicking a row writes ``ViewState.highlight_pair``.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPoint, Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QSizePolicy,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.errors import TraceError
from fusionviz.model.names import Names
from fusionviz.model.report.ledger_table import (
    MS_COLUMNS,
    filter_rows,
    ledger_cell,
    ledger_rows,
    ledger_tip,
)
from fusionviz.model.report.reorder_table import reorder_rows, reorder_summary
from fusionviz.ui.desktop import add_row_copy
from fusionviz.ui.ledger.static_cells import StaticTextDelegate
from fusionviz.ui.plain import tip
from fusionviz.ui.theme import outcome_color
from fusionviz.ui.view_state import ViewState

# Columns first in this order when present; score fields and anything else follow.
_PREFERRED = ("rank", "phase", "a", "a_is", "b", "b_is", "outcome", "reasons")
_TRAILING = ("speedup", "ms_a", "ms_b", "ms_fused", "spill", "n_spills", "bytes_saved")
_HIDDEN = {"group_a", "group_b", "pair"}
_ROOT = QModelIndex()
_MAX_COLUMN = 320
_DISPLAY, _TOOLTIP = Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole
_ALIGNMENT, _FOREGROUND = Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.ForegroundRole
SORT = Qt.ItemDataRole.UserRole  # the raw value: bytes and times sort as numbers
_ROLES = frozenset({_DISPLAY, _TOOLTIP, _ALIGNMENT, _FOREGROUND, SORT})
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
OUTCOME_FILTERS = ("all", "fused", "rejected", "benchmark_slower", "spill", "cycle", "stale")


def row_pair(row: dict) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """The two groups of a ledger row, whatever spelling the row uses."""
    for ka, kb in (("group_a", "group_b"), ("a", "b")):
        a, b = row.get(ka), row.get(kb)
        if a and b:
            return _group(a), _group(b)
    return None


def _group(value) -> tuple[str, ...]:
    if isinstance(value, str):
        return tuple(v.strip() for v in value.replace("+", ",").split(",") if v.strip())
    return tuple(value)


class LedgerModel(QAbstractTableModel):
    """Table over a list of ledger row dicts."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[dict] = []
        self.columns: list[str] = []

    def set_rows(self, rows: list[dict]) -> None:
        keys = list(dict.fromkeys(k for r in rows[:50] for k in r if k not in _HIDDEN))
        rest = [k for k in keys if k not in _PREFERRED and k not in _TRAILING]
        columns = ([k for k in _PREFERRED if k in keys] + rest
                   + [k for k in _TRAILING if k in keys])
        if columns == self.columns or (not rows and self.columns):
            # Same columns (or a step without a round, which keeps the header): swap
            # the rows only. A model reset would also rebuild the header and scroll
            # bars, and repaint the whole pane, on every step.
            self._replace_rows(rows)
            return
        self.beginResetModel()
        self.rows, self.columns = rows, columns
        self.endResetModel()

    def _replace_rows(self, rows: list[dict]) -> None:
        """New rows in place of the old: the common rows change, the rest are
        inserted or removed (the table never passes through empty)."""
        old, new = len(self.rows), len(rows)
        if new < old:
            self.beginRemoveRows(_ROOT, new, old - 1)
            self.rows = self.rows[:new]
            self.endRemoveRows()
        elif new > old:
            self.beginInsertRows(_ROOT, old, new - 1)
            self.rows = self.rows + rows[old:]
            self.endInsertRows()
        self.rows = rows
        if min(old, new):
            last = self.index(min(old, new) - 1, len(self.columns) - 1)
            self.dataChanged.emit(self.index(0, 0), last)

    def rowCount(self, parent=_ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.columns)

    def data(self, index, role=_DISPLAY):
        # Called for every visible cell and role on each repaint of a step: cheap roles
        # first, no enum arithmetic per call.
        if role not in _ROLES or not index.isValid():
            return None
        column = self.columns[index.column()]
        value = self.rows[index.row()].get(column)
        if role == _DISPLAY:
            return ledger_cell(column, value)
        if role == _TOOLTIP:  # names and reasons may hold tags: shown as text
            return tip(ledger_tip(column, value))
        if role == SORT:
            return value
        if role == _ALIGNMENT:
            return _RIGHT if isinstance(value, (int, float)) else None
        return outcome_color(value) if column == "outcome" else None

    def cell_look(self, row: int, column: int) -> tuple[dict, str, bool, QColor | None]:
        """What ``StaticTextDelegate`` paints: the same as ``data`` gives the view."""
        record = self.rows[row]
        key = self.columns[column]
        value = record.get(key)
        color = outcome_color(value) if key == "outcome" else None
        return record, ledger_cell(key, value), isinstance(value, (int, float)), color

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return header_text(self.columns[section])
        if role == _TOOLTIP:  # a score field's name comes from the trace: shown as text
            return tip(header_tip(self.columns[section]))
        return None


_HEADERS = {"a_is": "a: ops · module", "b_is": "b: ops · module"}


def header_text(key: str) -> str:
    """``score_memory_score`` → ``memory score``; ``ms_a`` → ``ms a``."""
    return _HEADERS.get(key) or key.removeprefix("score_").replace("_", " ")


def header_tip(key: str) -> str:
    """What a column holds, with its unit where it has one."""
    if key == "score_memory_score":
        return ("memory score: the bytes the pair's common buffers move, Inductor's first "
                "ranking key (for a mix-order reduction, a count of elements)")
    if key == "bytes_saved":
        return "bytes saved: the memory traffic fusing the pair removes"
    if key in MS_COLUMNS:
        return f"{header_text(key)}: benchmark-fusion time in ms"
    if key == "speedup":
        return "speedup: (ms a + ms b) / ms fused"
    return header_text(key)


class LedgerPane(QWidget):
    """Filter bar over the ledger table of the current step's round."""

    sig_row_menu = Signal(object, QPoint)
    """A row was right-clicked (and selected); arguments: the row, global position."""

    def __init__(self, state: ViewState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.all_rows: list[dict] = []
        self.outcome = QComboBox()
        self.outcome.addItems(OUTCOME_FILTERS)
        self.outcome.setToolTip("Show candidates with this outcome")
        self.reason = QLineEdit()
        self.reason.setPlaceholderText("filter by reason text…")
        self.reason.setClearButtonEnabled(True)
        self.title = QLabel(textFormat=Qt.TextFormat.RichText)  # its trace parts escaped
        # The title's text changes every step: its size hint must not re-lay out the
        # pane (that repainted the dock and the window around it, 3-5 ms a step).
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)
        self.model = LedgerModel(self)
        self.table = QTableView()
        self.table.setModel(self.model)
        self.cells = StaticTextDelegate(self.table)
        self.table.setItemDelegate(self.cells)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.verticalHeader().hide()
        # Rounds with and without a scroll bar's worth of rows alternate while stepping:
        # a bar that comes and goes would resize the viewport and repaint it twice. (The
        # horizontal bar stays as needed: an always-shown one repaints at every step,
        # 3 ms with the Fusion style.)
        self.table.setVerticalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOn)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        # Size columns from the first rows only: measuring all 18k rows of a big
        # round took 1.3 s per step.
        self.table.horizontalHeader().setResizeContentsPrecision(60)
        # round id -> (round, its ledger rows, (fused rows, scan rows))
        self._rows_cache: dict[int, tuple[object, list[dict], tuple[int, int]]] = {}
        self._names_of: tuple[object, Names] | None = None
        self._unreadable: dict[int, str] = {}  # round id -> why its ledger cannot be read
        self._widths: dict[tuple[str, ...], list[int]] = {}  # fitted widths per column set
        bar = QHBoxLayout()
        bar.addWidget(self.title, 1)
        self.outcome_label = QLabel("outcome:")
        bar.addWidget(self.outcome_label)
        bar.addWidget(self.outcome)
        bar.addWidget(self.reason, 1)
        box = QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.addLayout(bar)
        box.addWidget(self.table)
        self.outcome.currentTextChanged.connect(self._apply_filter)
        self.reason.textChanged.connect(self._apply_filter)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        self.table.clicked.connect(lambda index: self._on_row(index, None))
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._on_context_menu)
        self.row_copy = add_row_copy(self.table, menu=False)  # in the row menu too
        state.sig_trace_changed.connect(self._rows_cache.clear)
        state.sig_trace_changed.connect(self._unreadable.clear)
        state.sig_trace_changed.connect(self.cells.clear)  # texts of the old trace's rows
        state.sig_trace_changed.connect(self._widths.clear)
        state.sig_graph_changed.connect(self._reload)
        state.sig_step_changed.connect(self._reload)
        self._reload()

    def set_filter(self, outcome: str = "all", reason: str = "") -> None:
        self.outcome.setCurrentText(outcome)
        self.reason.setText(reason)

    def _reload(self, *_args) -> None:
        step = self.state.current_step
        rnd = step.round if step is not None else None
        self.all_rows = self._rows_of(rnd) if rnd is not None else []
        reorder = step.reorder if step is not None else None
        if reorder is not None:
            self.all_rows = self._reorder_rows(reorder)
        if step is None:
            self.title.setText("No graph loaded.")
        elif reorder is not None:
            summary = reorder_summary(self.state.graph, reorder, self._names())
            self.title.setText(f"<b>{escape(step.label)}</b> (after fusion): "
                               f"{escape(summary)}")
        elif rnd is None:
            hint = " (→ steps to the next round)" if self.state.graph.rounds else ""
            self.title.setText(f"<b>{escape(step.label)}</b>: no fusion round here{hint}")
        else:
            fused, scans = self._rows_cache[id(rnd)][2]
            bad = self._unreadable.get(id(rnd))
            text = (f"<b>round {rnd.index}</b>: its ledger cannot be read: {escape(bad)}"
                    if bad else f"<b>round {rnd.index}</b>: {len(rnd.candidates):,} "
                    f"candidates in score order, {fused:,} fused")
            if scans:
                text += f"; {scans:,} rejected while collecting candidates"
            self.title.setText(text)
        self.title.setToolTip(self.title.text())  # the whole line where the pane cuts it
        self._apply_filter()

    def prepare_step(self, k: int) -> None:
        """Build the rows of step ``k``'s round ahead of its first visit."""
        steps = self.state.steps
        if 0 <= k < len(steps) and steps[k].round is not None:
            self._rows_of(steps[k].round)

    def _names(self) -> Names:
        """Readable names of the current graph's nodes (one per graph shown)."""
        graph = self.state.graph
        if self._names_of is None or self._names_of[0] is not graph:
            self._names_of = (graph, Names(graph))
        return self._names_of[1]

    def _rows_of(self, rnd) -> list[dict]:
        """``ledger_rows(rnd)``, computed once per round while the trace is open."""
        hit = self._rows_cache.get(id(rnd))
        if hit is None or hit[0] is not rnd:
            try:
                rows = ledger_rows(rnd, self._names())
            except TraceError as e:  # a malformed part: the title says so, once
                self.state.report_unreadable(str(e))
                self._unreadable[id(rnd)] = str(e)
                rows = []
            counts = (sum(1 for r in rows if r.get("outcome") == "fused"),
                      sum(1 for r in rows if r.get("phase") == "scan"))
            hit = (rnd, rows, counts)
            self._rows_cache[id(rnd)] = hit
        return hit[1]

    def _reorder_rows(self, reorder) -> list[dict]:
        """The rows of a reordering pass, computed once per pass while the trace is open."""
        hit = self._rows_cache.get(id(reorder))
        if hit is None or hit[0] is not reorder:
            rows = reorder_rows(self.state.graph, reorder, self._names())
            hit = self._rows_cache[id(reorder)] = (reorder, rows, (0, 0))
        return hit[1]

    def _apply_filter(self, *_args) -> None:
        outcome = self.outcome.currentText()
        step = self.state.current_step
        filtering = step is None or step.reorder is None
        # a pass's rows have no outcome or reason: the filters step aside for its title
        for w in (self.outcome_label, self.outcome, self.reason):
            w.setVisible(filtering)
        rows = filter_rows(self.all_rows, outcome=None if outcome == "all" else outcome,
                           reason=self.reason.text().strip() or None) if filtering \
            else self.all_rows
        columns = self.model.columns
        # New rows (another round or filter): no row stays selected (the model swaps
        # rows in place, which would keep the old selection on unrelated rows).
        self.table.selectionModel().clear()
        self.model.set_rows(list(rows))
        if self.model.columns != columns:  # fit widths once per column set, not per step
            self._fit_columns()

    def _fit_columns(self) -> None:
        key = tuple(self.model.columns)
        widths = self._widths.get(key)
        if widths is None:  # measuring every cell costs 45-110 ms on a big round
            self.table.resizeColumnsToContents()
            widths = [min(self.table.columnWidth(c), _MAX_COLUMN) for c in range(len(key))]
            self._widths[key] = widths
        for col, width in enumerate(widths):
            self.table.setColumnWidth(col, width)

    @property
    def shown_rows(self) -> list[dict]:
        return self.model.rows

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)
        self._on_row(self.model.index(row, 0), None)

    def _on_context_menu(self, pos: QPoint) -> None:
        index = self.table.indexAt(pos)
        if index.isValid() and index.row() < len(self.model.rows):
            self.select_row(index.row())
            self.sig_row_menu.emit(self.model.rows[index.row()],
                                   self.table.viewport().mapToGlobal(pos))

    def _on_row(self, index, _previous) -> None:
        if index.isValid() and index.row() < len(self.model.rows):
            self.state.highlight_pair(row_pair(self.model.rows[index.row()]))
