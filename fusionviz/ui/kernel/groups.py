"""The kernel table grouped by op: one row per kind of work (``12 × addmm
2048×768×3072 bf16``) with its totals, its kernels beneath; sortable by any column,
filtered like the table; selecting a kernel selects it everywhere."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QStandardItem, QStandardItemModel
from PySide6.QtWidgets import QApplication, QStyle, QTreeView

from fusionviz.model.report.formatting import clip
from fusionviz.model.report.kernel_table import cell_text, op_groups, sort_value
from fusionviz.ui.desktop import add_row_copy, refilter
from fusionviz.ui.plain import tip

SORT = Qt.ItemDataRole.UserRole  # the raw value: numbers sort as numbers
NAME = Qt.ItemDataRole.UserRole + 1  # a kernel row's kernel name
# (key of a group or a kernel row, header); the first column: the work, or the kernel
HEADERS = (("op", "op · shapes · dtype / kernel"), ("kernels", "kernels"),
           ("launches", "launches"), ("ms", "ms / call"), ("share", "% of graph"),
           ("dtype", "dtype"), ("tflops", "TFLOP/s"), ("peak", "% of peak"),
           ("module", "ops · module"))
MS = 3


class _Filter(QSortFilterProxyModel):
    """Kernels ``accepts`` takes, and the groups that keep one."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.accepts = None  # row dict -> bool; None: every kernel
        self.rows: dict[str, dict] = {}  # kernel name -> its row
        self.setSortRole(SORT)

    def refilter(self, accepts) -> None:
        refilter(self, lambda: setattr(self, "accepts", accepts))

    def filterAcceptsRow(self, row: int, parent: QModelIndex) -> bool:  # noqa: N802
        model = self.sourceModel()
        if self.accepts is None:
            return True
        if parent.isValid():  # a kernel
            return self.accepts(self.rows[model.index(row, 0, parent).data(NAME)])
        group = model.index(row, 0)
        return any(self.filterAcceptsRow(i, group) for i in range(model.rowCount(group)))


class KernelGroups(QTreeView):
    """Groups of kernels doing the same work, slowest first until sorted otherwise;
    ``on_kernel(name)`` is called when the user picks a kernel."""

    def __init__(self, on_kernel, parent=None) -> None:
        super().__init__(parent)
        self._on_kernel = on_kernel
        self.groups: list[dict] = []
        self.source = QStandardItemModel(0, len(HEADERS), self)
        self.source.setHorizontalHeaderLabels([h for _, h in HEADERS])
        self.proxy = _Filter(self)
        self.proxy.setSourceModel(self.source)
        self.setModel(self.proxy)
        self.setUniformRowHeights(True)
        self.setSortingEnabled(True)
        self.sortByColumn(MS, Qt.SortOrder.DescendingOrder)
        self.setEditTriggers(QTreeView.EditTrigger.NoEditTriggers)
        self.header().resizeSection(0, 300)
        add_row_copy(self)
        self.selectionModel().currentChanged.connect(self._on_current)

    def set_rows(self, rows: list[dict]) -> None:
        """Fill from the kernel table's rows (``kernel_rows``)."""
        self.groups = op_groups(rows)
        self.proxy.rows = {r["name"]: r for r in rows}
        self.source.removeRows(0, self.source.rowCount())
        warn = QApplication.style().standardIcon(QStyle.StandardPixmap.SP_MessageBoxWarning)
        for g in self.groups:
            items = _items({**g, "op": f"{g['kernels']} × {g['op']}", "module": ""})
            for row in g["rows"]:
                kernel = _items({**row, "op": row["name"], "kernels": None})
                kernel[0].setData(row["name"], NAME)
                items[0].appendRow(kernel)
            if g["flag"]:
                items[0].setIcon(warn)
                items[0].setToolTip(tip(clip(g["flag"])))
            self.source.appendRow(items)

    def filter(self, accepts) -> int:
        """Show the kernels ``accepts(row)`` takes (None: all), and their groups; the
        number of groups shown."""
        self.proxy.refilter(accepts)
        return self.proxy.rowCount()

    def group_rows(self) -> list[tuple[str, list[str]]]:
        """(group text, its kernels' names) of each group, in the order shown."""
        out = []
        for i in range(self.proxy.rowCount()):
            group = self.proxy.index(i, 0)
            out.append((group.data(), [self.proxy.index(j, 0, group).data(NAME)
                                       for j in range(self.proxy.rowCount(group))]))
        return out

    def current_kernel(self) -> str | None:
        return self.currentIndex().data(NAME)

    def select(self, name: str) -> None:
        """Show and select kernel ``name``'s row (its group expanded)."""
        if self.current_kernel() == name:
            return
        for i in range(self.proxy.rowCount()):
            group = self.proxy.index(i, 0)
            for j in range(self.proxy.rowCount(group)):
                kernel = self.proxy.index(j, 0, group)
                if kernel.data(NAME) == name:
                    self.expand(group)
                    self.setCurrentIndex(kernel)
                    return

    def _on_current(self, current: QModelIndex, _previous) -> None:
        name = current.data(NAME)
        if name:
            self._on_kernel(name)


def _items(values: dict) -> list[QStandardItem]:
    """One row of cells: the text shown, the raw value to sort by."""
    items = []
    for key, _ in HEADERS:
        value = values.get(key)
        item = QStandardItem(clip(cell_text(key, value)))
        item.setData(sort_value(key, value), SORT)
        if isinstance(value, int | float):
            item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        items.append(item)
    items[0].setToolTip(tip(clip(str(values.get("op", "")))))
    return items
