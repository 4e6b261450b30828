"""The module outline: the graph's ``nn.Module`` tree beside the graph, in step with it.

Each module shows its class, its node count, how the graph shows it now (folded
with its siblings, collapsed into a box, or open) and, where the trace timed the
program eagerly, its time under compile against eager (tinted where it lost time). Clicking one brings it into view
and rings its nodes; double-click (or Space) collapses or opens it. Selecting a node
in the graph selects its module here.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem

from fusionviz.model.report.eager_map import ModuleMap
from fusionviz.ui.desktop import ColumnFit, add_row_copy
from fusionviz.ui.graph.eager_tint import tint_of
from fusionviz.ui.plain import tip
from fusionviz.ui.theme import EAGER_TINTS
from fusionviz.ui.view_state import ViewState

PATH = Qt.ItemDataRole.UserRole


class ModuleOutline(QTreeWidget):
    def __init__(self, state: ViewState, view, parent=None) -> None:
        super().__init__(parent)
        self.state, self.view = state, view
        self.setHeaderLabels(["module", "nodes", "shown as", "vs eager"])
        add_row_copy(self)
        self.headerItem().setToolTip(3, "Compiled minus eager time of everything in the "
                                        "module (ms per call; > 0: slower under compile), "
                                        "where the trace timed your program eagerly")
        self.setUniformRowHeights(True)
        # every column as wide as its texts, the module names whole (a stretched first
        # column was squeezed to "…"); in a narrow dock the columns that fit whole
        self.header().setStretchLastSection(False)
        self.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.columns = ColumnFit(self)
        self.items: dict[str, QTreeWidgetItem] = {}
        self._tree = None
        view.sig_folding_changed.connect(self.refresh)
        # the "vs eager" column: the eager-vs-compiled map of the shown graph's side, as
        # the module tint has it, each time it changes (a new graph: after its folding
        # and this tree; a big graph's map: after its first frame, eager_tint.LATE_NODES)
        view.sig_eager_tint_changed.connect(lambda: self._show_vs_eager(view.tint.map))
        state.sig_selection_changed.connect(self._follow_selection)
        self.itemClicked.connect(lambda item, _col: self.view.show_module(item.data(0, PATH)))
        self.itemDoubleClicked.connect(lambda item, _col: self.toggle(item.data(0, PATH)))
        self.refresh()

    def refresh(self) -> None:
        """Rebuild for a new graph; otherwise update what each module is shown as."""
        tree = self.view.folding.tree
        if tree is not self._tree:
            self._tree = tree
            self._build(tree)
        folding = self.view.folding
        run_of = {p: r for r in folding.folded for p in r.paths}
        for path, item in self.items.items():
            item.setText(2, _shown_as(path, folding, run_of))

    def _build(self, tree) -> None:
        self.clear()
        self.items = {}
        if not tree:
            item = QTreeWidgetItem(["(no module paths recorded)", "", "", ""])
            item.setFlags(Qt.ItemFlag.NoItemFlags)
            self.addTopLevelItem(item)
            return

        def add(parent, path: str) -> None:
            name = path.rsplit(".", 1)[-1]
            cls = tree.module_class.get(path, "")
            item = QTreeWidgetItem([name + (f" ({cls})" if cls else ""),
                                    str(len(tree.members[path])), "", ""])
            item.setData(0, PATH, path)
            item.setToolTip(0, tip(path))
            item.setTextAlignment(1, Qt.AlignmentFlag.AlignRight)
            parent.addChild(item) if parent is not None else self.addTopLevelItem(item)
            self.items[path] = item
            for child in sorted(tree.children.get(path, ()), key=_order):
                add(item, child)

        for top in sorted(tree.children.get("", ()), key=_order):
            add(None, top)
        for item in self.items.values():
            item.setExpanded(tree.depth(item.data(0, PATH)) < 2)

    def _show_vs_eager(self, mp: ModuleMap | None) -> None:
        for path, item in self.items.items():
            m = mp.modules.get(path) if mp is not None else None
            if m is None or not (m.eager_ms or m.compiled_ms):
                continue
            item.setText(3, f"{m.delta_ms:+.3f} ms")
            item.setTextAlignment(3, Qt.AlignmentFlag.AlignRight)
            item.setToolTip(3, f"eager {m.eager_ms:.4f} ms, compiled {m.compiled_ms:.4f} ms "
                               "per call")
            tint = EAGER_TINTS.get(tint_of(m))
            if tint is not None:
                item.setBackground(3, tint)

    def toggle(self, path: str) -> None:
        """Collapse module ``path``; if it is collapsed or folded, open it."""
        if path:
            self.view.toggle_module(path)

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        item = self.currentItem()
        if item is not None and event.key() == Qt.Key.Key_Space:
            self.toggle(item.data(0, PATH))
        elif item is not None and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self.view.show_module(item.data(0, PATH))
        else:
            super().keyPressEvent(event)

    def _follow_selection(self) -> None:
        sel = self.state.selected_nodes
        tree = self.view.folding.tree
        node = tree.nodes.get(sel[-1]) if sel and tree else None
        item = self.items.get(node.module) if node is not None else None
        if item is not None:
            self.blockSignals(True)
            self.setCurrentItem(item)
            self.scrollToItem(item)
            self.blockSignals(False)


def _order(path: str):
    last = path.rsplit(".", 1)[-1]
    return (0, int(last), "") if last.isdigit() else (1, 0, last)


def _shown_as(path: str, folding, run_of: dict) -> str:
    # inside a box: an enclosing module is collapsed or folded (its ancestors are looked
    # up, not every collapsed path scanned: 1,600 modules of a 20k-node graph took 75 ms)
    parts = path.split(".")
    hidden = any((a := ".".join(parts[:k])) in folding.collapsed or a in run_of
                 for k in range(1, len(parts)))
    if path in run_of:
        return f"folded {run_of[path].title.split(' ')[-1]}"
    if path in folding.collapsed:
        return "inside a box" if hidden else "collapsed"
    return "inside a box" if hidden else ""
