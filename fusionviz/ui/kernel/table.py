"""The kernel table: every kernel of the graph, sortable by any column, filterable;
selecting a row selects the kernel (graph rings, code pane, chart outline)."""

from __future__ import annotations

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtWidgets import (
    QApplication,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QStyle,
    QTableView,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.report.formatting import clip
from fusionviz.model.report.kernel_table import (
    COLUMNS,
    cell_text,
    kernel_rows,
    matches,
    sort_value,
)
from fusionviz.ui.desktop import WhenOnScreen, add_row_copy, refilter
from fusionviz.ui.kernel.groups import KernelGroups
from fusionviz.ui.kernel.widths import content_widths
from fusionviz.ui.plain import tip
from fusionviz.ui.view_state import ViewState

SORT = Qt.ItemDataRole.UserRole  # the raw value: numbers sort as numbers
MAX_WIDTH = 320  # a fitted column's widest
GRAPHS_KEPT = 8  # graphs whose rows and fitted widths are kept
_ROOT = QModelIndex()


def warning_icon():
    """The style's warning sign: marks a kernel flagged by its facts (fp32 matmul)."""
    return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)


class KernelTableModel(QAbstractTableModel):
    """The rows, kept sorted by the column the user chose. Sorted here, in one Python
    sort by each row's value, not by the proxy: the proxy asks ``data`` twice per
    comparison (a deep model's 4,800 kernels: 110k calls, a quarter of a second)."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.rows: list[dict] = []
        self.in_call_order: list[dict] = []  # the rows in call order (``kernel_rows``'s list)
        self.sorted_by: tuple[int, Qt.SortOrder] | None = None
        self._row_of: dict[str, int] | None = None

    def set_rows(self, rows: list[dict]) -> None:
        self.beginResetModel()
        self.in_call_order, self.rows = rows, list(rows)  # sorted here, the caller's list not
        self._order()
        self.endResetModel()

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        self.sorted_by = (column, order) if 0 <= column < len(COLUMNS) else None
        self.layoutAboutToBeChanged.emit()
        before = list(self.rows)
        self._order()
        at = {id(row): r for r, row in enumerate(self.rows)}
        old = self.persistentIndexList()  # the selection's, the view's current row
        self.changePersistentIndexList(
            old, [self.index(at[id(before[i.row()])], i.column()) for i in old])
        self.layoutChanged.emit()

    def _order(self) -> None:
        """Sorts the rows by ``sorted_by`` (stably: equal values keep their order, as
        the proxy's sort kept them); unsorted, they stay in call order."""
        self._row_of = None
        if self.sorted_by is None:
            self.rows[:] = self.in_call_order
            return
        column, order = self.sorted_by
        key = COLUMNS[column][0]
        self.rows.sort(key=lambda row: sort_value(key, row[key]),
                       reverse=order == Qt.SortOrder.DescendingOrder)

    def row_of(self, name: str) -> int:
        """The row of kernel ``name``; -1 when it has none."""
        if self._row_of is None:
            self._row_of = {row["name"]: r for r, row in enumerate(self.rows)}
        return self._row_of.get(name, -1)

    def rowCount(self, parent=_ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent=_ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(COLUMNS)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid():
            return None
        key = COLUMNS[index.column()][0]
        row = self.rows[index.row()]
        value = row[key]
        if role == Qt.ItemDataRole.DisplayRole:
            return clip(cell_text(key, value))
        if role == Qt.ItemDataRole.ToolTipRole:  # a name may hold tags: shown as text
            flagged = row.get("flag") and key in ("name", "dtype")
            return tip(clip(row["flag"] if flagged else cell_text(key, value)))
        if role == Qt.ItemDataRole.DecorationRole and key == "name" and row.get("flag"):
            return warning_icon()
        if role == SORT:  # missing values sort below every number
            return sort_value(key, value)
        if role == Qt.ItemDataRole.TextAlignmentRole and isinstance(value, (int, float)):
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):  # noqa: N802
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return COLUMNS[section][1]
        return None


class _Filter(QSortFilterProxyModel):
    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.text = ""
        self.setSortRole(SORT)

    def set_text(self, text: str) -> None:
        refilter(self, lambda: setattr(self, "text", text.strip()))

    def filterAcceptsRow(self, row: int, parent) -> bool:  # noqa: N802 (Qt override)
        return not self.text or matches(self.sourceModel().rows[row], self.text)

    def sort(self, column: int, order=Qt.SortOrder.AscendingOrder) -> None:
        """The source sorts (``KernelTableModel.sort``); this keeps its order."""
        self.sourceModel().sort(column, order)


class KernelTable(QWidget):
    """Filter box, count and the sortable table of the current graph's kernels, each
    kernel a row (the default) or grouped by op (``KernelGroups``)."""

    VIEWS = ("each kernel", "grouped by op")

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        self.model = KernelTableModel(self)
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.model)
        self.filter = QLineEdit()
        self.filter.setPlaceholderText("filter by kernel, kind, op, module or node…")
        self.filter.setClearButtonEnabled(True)
        self.filter.textChanged.connect(self._on_filter)
        self.count = QLabel()
        self.view_box = QComboBox()
        self.view_box.addItems(self.VIEWS)
        self.view_box.setToolTip("Each kernel on a row of its own, or kernels doing the same "
                                 "work (op, shapes, dtype) grouped with their totals")
        self.view_box.currentIndexChanged.connect(self._on_view)
        self.groups = KernelGroups(self._select_kernel)
        self.groups.hide()
        self.table = QTableView()
        self.table.setModel(self.proxy)
        # slowest first until the user sorts otherwise (the sort survives graph changes)
        self.table.horizontalHeader().setSortIndicator(4, Qt.SortOrder.DescendingOrder)
        self.table.setSortingEnabled(True)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QTableView.SelectionMode.SingleSelection)
        self.table.verticalHeader().hide()
        # one line of text per row (the style's default is twice the text's height)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        self.table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(self._on_row)
        add_row_copy(self.table)
        box = QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        top = QHBoxLayout()
        top.addWidget(self.filter, 1)
        top.addWidget(self.count)  # on the filter's line: the rows get the height
        top.addWidget(self.view_box)
        box.addLayout(top)
        box.addWidget(self.table, 1)
        box.addWidget(self.groups, 1)
        # per graph: (the graph, the filter, its rows, its fitted widths), the last few
        self._fitted: dict[int, tuple] = {}
        # listing a deep model's thousand kernels costs ~0.2 s: done when in front
        self.shown = WhenOnScreen(self._list_graph)
        state.sig_trace_changed.connect(self._fitted.clear)  # the last trace's graphs go
        state.sig_graph_changed.connect(self._on_graph_changed)  # also for a new trace
        state.sig_kernel_changed.connect(self._on_kernel_changed)
        self._reload()

    def _on_graph_changed(self, *_args) -> None:
        if not self.shown.request():
            self.model.set_rows([])  # nothing of the graph before
            self._on_filter()

    def _list_graph(self) -> None:
        self._reload()
        self._on_kernel_changed(self.state.kernel)

    def _reload(self) -> None:
        graph, trace = self.state.graph, self.state.trace
        env = trace.env if trace is not None else None
        seen = self._fitted.get(id(graph))
        if seen is not None and seen[0] is graph:
            rows = seen[2]  # a graph shown again: its rows as built then
        else:
            rows = kernel_rows(graph, env) if graph is not None else []
        self.model.set_rows(rows)
        if seen is None or seen[0] is not graph or seen[1] != self.proxy.text:
            seen = (graph, self.proxy.text, rows, [min(w, MAX_WIDTH) for w in
                                                  content_widths(self.table, self._texts())])
            self._fitted.pop(id(graph), None)
            self._fitted[id(graph)] = seen
            while len(self._fitted) > GRAPHS_KEPT:
                self._fitted.pop(next(iter(self._fitted)))
        for col, width in enumerate(seen[3]):
            self.table.setColumnWidth(col, width)
        if self.groups.isVisibleTo(self):
            self.groups.set_rows(self.model.rows)
        self._on_filter()

    def _texts(self):
        """The shown rows' texts in a column, each with whether it has an icon."""
        proxy = self.proxy
        rows = [self.model.rows[proxy.mapToSource(proxy.index(r, 0)).row()]
                for r in range(proxy.rowCount())]

        def column(col: int) -> list[tuple[str, bool]]:
            key = COLUMNS[col][0]
            return [(clip(cell_text(key, row[key])), key == "name" and bool(row.get("flag")))
                    for row in rows]
        return column

    def _on_view(self, index: int) -> None:
        grouped = index == 1
        if grouped:
            self.groups.set_rows(self.model.rows)
            if self.state.kernel:
                self.groups.select(self.state.kernel)
        self.groups.setVisible(grouped)
        self.table.setVisible(not grouped)
        self._on_filter()

    def _on_filter(self, *_args) -> None:
        self.proxy.set_text(self.filter.text())
        shown, total = self.proxy.rowCount(), self.model.rowCount()
        text = f"{total} kernels" if shown == total else f"{shown} of {total} kernels"
        if self.groups.isVisibleTo(self):
            typed = self.proxy.text
            groups = self.groups.filter((lambda row: matches(row, typed)) if typed else None)
            text += f" in {groups} groups"
        self.count.setText(text)

    def shown_names(self) -> list[str]:
        """Kernel names in the order shown (sorted and filtered)."""
        return [self.proxy.index(r, 0).data() for r in range(self.proxy.rowCount())]

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)

    def _on_row(self, current, _previous) -> None:
        if current.isValid():
            self._select_kernel(self.proxy.index(current.row(), 0).data())

    def _select_kernel(self, name: str) -> None:
        if name != self.state.kernel:
            self.state.select_kernel(name)

    def _on_kernel_changed(self, name: str) -> None:
        if self.groups.isVisibleTo(self):
            self.groups.select(name)
        row = self.model.row_of(name)
        r = self.proxy.mapFromSource(self.model.index(row, 0)).row() if row >= 0 else -1
        if r >= 0 and self.table.currentIndex().row() != r:
            self.table.selectRow(r)
