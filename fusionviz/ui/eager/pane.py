"""The Compiled vs eager pane: each callable the user compiled, timed as the program
runs it, where the difference goes, and every eager kernel beside what replaced it.

Top: the headline, the budget and the findings (plain text). Middle: the module tree,
both sides summed over each module and what is under it, slowest-against-eager first.
Bottom: the eager kernels and the compiled kernels of the selected module, side by
side; clicking a compiled kernel shows its graph and selects it everywhere.
"""

from __future__ import annotations

import os

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.report import eager_cudagraphs
from fusionviz.model.report.eager_explain import Explained, explain_all
from fusionviz.model.report.eager_map import ModuleMap, ModuleTimes
from fusionviz.model.report.formatting import clip
from fusionviz.ui.desktop import WhenOnScreen, add_row_copy
from fusionviz.ui.plain import plain, tip
from fusionviz.ui.theme import EAGER_TINTS
from fusionviz.ui.view_state import ViewState

SORT = Qt.ItemDataRole.UserRole
_COLUMNS = ("module", "class", "eager ms", "compiled ms", "Δ ms (compiled − eager)",
            "speedup")


class _Item(QTreeWidgetItem):
    """Numbers sort as numbers."""

    def __lt__(self, other) -> bool:
        col = self.treeWidget().sortColumn() if self.treeWidget() else 0
        a, b = self.data(col, SORT), other.data(col, SORT)
        if isinstance(a, int | float) and isinstance(b, int | float):
            return a < b
        return self.text(col) < other.text(col)


def _cell(value) -> QTableWidgetItem:
    item = QTableWidgetItem(f"{value:.4g}" if isinstance(value, float) else clip(str(value)))
    item.setData(SORT, value)
    item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEditable)
    if isinstance(value, float):
        item.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
    return item


def _table(headers: tuple[str, ...]) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setHorizontalHeaderLabels(list(headers))
    t.verticalHeader().hide()
    t.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
    t.setWordWrap(False)
    t.horizontalHeader().setStretchLastSection(True)
    add_row_copy(t)
    t.verticalHeader().setDefaultSectionSize(t.fontMetrics().height() + 6)
    return t


class EagerPane(QWidget):
    # the script to capture again with --what-if reduce-overhead (the window runs it)
    sig_measure_cudagraphs = Signal(str)

    def __init__(self, state: ViewState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.explained: list[Explained] = []
        self.entry_box = QComboBox()
        self.entry_box.setToolTip("The function or module passed to torch.compile")
        self.side_box = QComboBox()
        self.side_box.addItems(["forward", "backward"])
        self.headline = plain(QLabel())
        self.headline.setWordWrap(True)
        self.report = QPlainTextEdit()
        self.report.setReadOnly(True)
        self.report.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.tree = QTreeWidget()
        self.tree.setColumnCount(len(_COLUMNS))
        self.tree.setHeaderLabels(list(_COLUMNS))
        self.tree.setSortingEnabled(True)
        self.tree.setUniformRowHeights(True)
        add_row_copy(self.tree)
        for col, width in enumerate((260, 130, 90, 90, 150, 70)):
            self.tree.header().resizeSection(col, width)
        self.tree.header().setStretchLastSection(False)
        self.eager_table = _table(("eager kernel", "aten op", "module", "ms", "launches"))
        self.compiled_table = _table(("compiled kernel", "graph", "ops", "module", "ms share"))
        self.eager_title, self.compiled_title = QLabel(), QLabel()
        for label in (self.eager_title, self.compiled_title):
            plain(label)

        top = QHBoxLayout()
        top.addWidget(QLabel("Compiled:"))
        top.addWidget(self.entry_box, 1)
        top.addWidget(QLabel("Side:"))
        top.addWidget(self.side_box)
        self.cudagraphs_button = QPushButton("Measure CUDA graphs")
        self.cudagraphs_button.setToolTip(
            "Capture the script again with --what-if reduce-overhead: each compiled "
            "callable is also compiled with CUDA graphs (mode=\"reduce-overhead\") and "
            "timed beside eager and as compiled. Needs the script and a GPU here.")
        self.cudagraphs_button.clicked.connect(self._measure_cudagraphs)
        top.addWidget(self.cudagraphs_button)
        kernels = QSplitter(Qt.Orientation.Horizontal)
        for title, table in ((self.eager_title, self.eager_table),
                             (self.compiled_title, self.compiled_table)):
            box = QWidget()
            col = QVBoxLayout(box)
            col.setContentsMargins(0, 0, 0, 0)
            col.addWidget(title)
            col.addWidget(table)
            kernels.addWidget(box)
        body = QSplitter(Qt.Orientation.Vertical)
        body.addWidget(self.report)
        body.addWidget(self.tree)
        body.addWidget(kernels)
        body.setSizes([120, 220, 200])
        body.setMinimumHeight(90)  # not three tables' minimum: the bottom dock may be short
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(self.headline)
        layout.addWidget(body, 1)

        # explaining a deep model's time costs ~0.3 s: done when the pane is in front
        self.shown = WhenOnScreen(self.refresh)
        state.sig_trace_changed.connect(self.shown.request)
        self.entry_box.currentIndexChanged.connect(self._show_entry)
        self.side_box.currentIndexChanged.connect(self._show_entry)
        self.tree.currentItemChanged.connect(self._show_module)
        self.compiled_table.cellClicked.connect(self._select_compiled)
        self.refresh()

    # ---- content ------------------------------------------------------------------
    def refresh(self) -> None:
        trace = self.state.trace
        self.explained = explain_all(trace) if trace is not None else []
        self.entry_box.blockSignals(True)
        self.entry_box.clear()
        for ex in self.explained:
            self.entry_box.addItem(clip(f"{ex.entry.name} ({ex.entry.kind}, frames "
                                        f"{', '.join(ex.entry.compile_ids) or '-'})", 200))
        self.entry_box.blockSignals(False)
        self._show_entry()

    @property
    def current(self) -> Explained | None:
        i = self.entry_box.currentIndex()
        return self.explained[i] if 0 <= i < len(self.explained) else None

    def measurable(self) -> str:
        """The script to capture again for the CUDA graphs what-if of the shown entry:
        timed on the GPU, not measured yet, the script on this machine; else ""."""
        ex, trace = self.current, self.state.trace
        if ex is None or trace is None or eager_cudagraphs.graphed(ex.entry) is not None:
            return ""
        gpu = ex.entry.compiled_forward is not None and bool(ex.entry.compiled_forward.device)
        path = trace.script.path
        return path if gpu and path and os.path.isfile(path) else ""

    def _measure_cudagraphs(self) -> None:
        path = self.measurable()
        if path:
            self.sig_measure_cudagraphs.emit(path)

    def _show_entry(self) -> None:
        ex = self.current
        self.cudagraphs_button.setVisible(bool(self.measurable()))
        self.tree.clear()
        self.eager_table.setRowCount(0)
        self.compiled_table.setRowCount(0)
        if ex is None:
            trace = self.state.trace
            self.headline.setText(
                "This trace has no eager-vs-compiled timing of the program: it was "
                "recorded before fusionviz timed your own code eagerly, or with "
                "--no-timing." if trace is not None else "")
            self.report.setPlainText("")
            return
        self.headline.setText(ex.headline() + _marks_hint(ex))
        self.report.setPlainText("\n".join(_report_lines(ex)))
        mp = ex.maps[self.side_box.currentText()]
        if mp.modules:
            self._fill_tree(mp)

    def _fill_tree(self, mp: ModuleMap) -> None:
        self.tree.setSortingEnabled(False)

        def add(parent, m: ModuleTimes) -> QTreeWidgetItem:
            item = _Item(parent)
            speed = m.speedup
            values = (m.path.rpartition(".")[2] or "(whole model)", m.module_class,
                      m.eager_ms, m.compiled_ms, m.delta_ms, speed)
            for col, v in enumerate(values):
                text = "" if v is None else (f"{v:.2f}x" if col == 5 else
                                             f"{v:+.4f}" if col == 4 else
                                             f"{v:.4f}" if isinstance(v, float) else str(v))
                item.setText(col, text)
                item.setData(col, SORT, v if v is not None else -1.0)
                if col >= 2:
                    item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight)
            item.setData(0, Qt.ItemDataRole.UserRole + 1, m.path)
            item.setToolTip(0, tip(clip(m.path or "(the root module)")))
            tint = EAGER_TINTS.get(m.moved())
            if tint is not None:
                for col in range(len(_COLUMNS)):
                    item.setBackground(col, tint)
            for child in m.children:
                cm = mp.modules[child]
                if cm.eager_ms or cm.compiled_ms:
                    add(item, cm)
            return item

        root = add(self.tree, mp.modules[""])
        self.tree.setSortingEnabled(True)
        self.tree.sortByColumn(4, Qt.SortOrder.DescendingOrder)
        root.setExpanded(True)
        self.tree.setCurrentItem(self._worst(root, mp) or root)

    def _worst(self, root: QTreeWidgetItem, mp: ModuleMap) -> QTreeWidgetItem | None:
        """The item of the module whose own kernels lost most time, its ancestors
        expanded (None when none lost any)."""
        worst = next((m for m in mp.ranked(own=True) if m.own_delta_ms > 0 and m.path), None)
        if worst is None:
            return None
        item, parts = root, worst.path.split(".")
        for i in range(1, len(parts) + 1):
            path = ".".join(parts[:i])
            child = next((item.child(j) for j in range(item.childCount())
                          if item.child(j).data(0, Qt.ItemDataRole.UserRole + 1) == path),
                         None)
            if child is None:
                break
            item.setExpanded(True)
            item = child
        return item

    def _show_module(self, item: QTreeWidgetItem | None) -> None:
        ex = self.current
        if ex is None or item is None:
            return
        path = item.data(0, Qt.ItemDataRole.UserRole + 1)
        mp = ex.maps[self.side_box.currentText()]
        prefix = f"{path}." if path else ""
        under = [m for p, m in mp.modules.items() if p == path or p.startswith(prefix)]
        eager = sorted(((k, m.path) for m in under for k in m.eager), key=lambda x: -x[0].ms)
        compiled = sorted(((s, m.path) for m in under for s in m.compiled),
                          key=lambda x: -x[0].ms)
        where = path or "the whole model"
        self.eager_title.setText(f"Eager ran in {where}: {len(eager)} kernels, "
                                 f"{sum(k.ms for k, _ in eager):.4f} ms")
        self.compiled_title.setText(f"Compiled runs there: {len(compiled)} kernels, "
                                    f"{sum(s.ms for s, _ in compiled):.4f} ms")
        self._fill(self.eager_table, [(k.name, k.op, p, k.ms, k.calls) for k, p in eager], 3)
        self._fill(self.compiled_table, [(s.kernel.name, s.graph, ", ".join(s.ops), p, s.ms)
                                         for s, p in compiled], 4)

    @staticmethod
    def _fill(table: QTableWidget, rows: list[tuple], ms_column: int) -> None:
        """Rows, slowest first (a click on a header sorts by that column)."""
        table.setSortingEnabled(False)
        table.setRowCount(len(rows))
        for r, row in enumerate(rows):
            for c, value in enumerate(row):
                table.setItem(r, c, _cell(value))
        table.setSortingEnabled(True)
        table.sortItems(ms_column, Qt.SortOrder.DescendingOrder)
        table.resizeColumnsToContents()
        table.setColumnWidth(0, min(table.columnWidth(0), 420))

    def _select_compiled(self, row: int, _col: int) -> None:
        name, graph = self.compiled_table.item(row, 0), self.compiled_table.item(row, 1)
        if name is None or graph is None:
            return
        index = graph.data(SORT)
        if isinstance(index, int) and index != self.state.graph_index:
            self.state.set_graph(index)
        self.state.select_kernel(name.text())


def _marks_hint(ex: Explained) -> str:
    """`` (approximate: why below)``: the marks on the figures (approximate, cache-
    sensitive) the headline does not say itself, so a figure is not read as exact
    before the report is scrolled to its end."""
    headline = ex.headline()
    marks = [mark for mark, _ in ex.marks() if mark not in headline]
    return f" ({', '.join(marks)}: why below)" if marks else ""


def _report_lines(ex: Explained) -> list[str]:
    lines = []
    for f in ex.findings:
        lines += [f"▲ {f.title}", f"  {f.detail}"] + ([f"  Fix: {f.fix}"] if f.fix else [])
    if ex.findings:
        lines.append("")
    for side, vs in (("forward", ex.forward), ("backward", ex.backward)):
        for clock, v in vs.items():
            lines.append(f"{side} ({clock}): eager {v.eager.text()}; compiled "
                         f"{v.compiled.text()}: {v.verdict}")
    lines += [line.strip() for line in eager_cudagraphs.lines(ex.entry)]
    lines += [f"{what}: {text}" for what, text in ex.budget]
    for side, mp in ex.maps.items():
        if mp.coverage is not None:
            lines.append(f"kernel map ({side}): {mp.coverage:.0%} of eager kernel time lies "
                         "in modules where compiled kernels ran (a fused kernel's time is "
                         "split over its nodes' modules by node count)")
    lines += [f"{mark}: {why}" for mark, why in ex.marks()]
    if ex.entry.note:
        lines.append(f"note: {ex.entry.note}")
    if ex.entry.method:
        lines.append(f"timed by {ex.entry.method}")
    return lines
