"""The kernel pane: a kernel's facts and highlighted source, alone or two side by side.

It shows ``state.kernel`` (or the kernel of the first selected node), lists the
graph's kernels in a combo box with their colors, and writes the user's choice
back with ``state.select_kernel``. Both combo boxes read one list model that answers
from the kernel names on demand, so a graph of thousands of kernels fills it at once.
"""

from __future__ import annotations

import html
import re
from functools import lru_cache

from PySide6.QtCore import QAbstractListModel, QEvent, QModelIndex, QObject, Qt
from PySide6.QtGui import QColor, QIcon, QKeySequence, QPixmap
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QSizePolicy,
    QSplitter,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.highlight import language_for
from fusionviz.model.names import Names
from fusionviz.model.palette import kernel_colors
from fusionviz.model.queries import kernel_of_node, peak_dram_gb_s, time_kind
from fusionviz.model.report.chart_data import bandwidth_text
from fusionviz.model.report.eager_map import eager_replaced
from fusionviz.model.report.extern_facts import (
    FP32_LABEL,
    ExternFacts,
    extern_facts,
    facts_lines,
)
from fusionviz.model.report.formatting import byte_size, clip, count, ms_range, ms_short
from fusionviz.model.trace import Kernel
from fusionviz.ui.kernel.code_view import CodeView, FindBar, local_shortcut
from fusionviz.ui.plain import tip
from fusionviz.ui.view_state import ViewState

SIDE_BY_SIDE_SHORTCUT = "Ctrl+\\"
WARNING_COLOR = "#d35400"  # the fp32 flag of an extern kernel
_MAX_LISTED_NODES = 16
_UNBROKEN = 32  # characters of a fact's value kept on one line
_MAX_NAME = 120  # characters of a node or kernel name in the facts (whole in Details' copy)
_ROOT = QModelIndex()
_NAME_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.EditRole, Qt.ItemDataRole.UserRole)


_NUMBER_UNIT = re.compile(r"(?<=\d) (?=(?:ms|GB/s|TFLOP/s|[KMGT]?FLOP|[KMG]iB|B)\b)")


def _glued(text: str) -> str:
    """A long value may wrap, but never between a number and its unit, nor inside
    "of peak 3,352 GB/s"."""
    return _NUMBER_UNIT.sub("&nbsp;", text).replace("of peak ", "of&nbsp;peak&nbsp;")


def kernel_facts(kernel: Kernel, time_kind: str = "device",
                 peak_gb_s: float | None = None,
                 extern: ExternFacts | None = None) -> list[tuple[str, str]]:
    """(label, value) pairs describing ``kernel``; unknown values are left out.

    ``time_kind``: "device" (the CUDA profiler) or "wall" (CPU, or an older GPU trace);
    ``peak_gb_s``: the GPU's peak DRAM bandwidth, for the share of it achieved;
    ``extern``: an extern kernel's facts (op, dtypes, shapes, FLOPs, TFLOP/s; its
    fp32 flag is left to the caller, which shows it apart)."""
    facts = [("kind", kernel.kind), ("backend", kernel.backend)]
    if kernel.bytes is not None:
        facts.append(("est. bytes", byte_size(kernel.bytes)))
    if kernel.ms is not None:
        facts.append((f"{time_kind} time", f"{ms_short(kernel.ms)} per graph call"))
        if kernel.calls > 1:
            facts.append(("launches", f"{count(kernel.calls)} × "
                                      f"{ms_short(kernel.ms / kernel.calls)}"))
        if len(kernel.ms_spread) == 2:  # the fastest and slowest sample
            one = "one launch" if time_kind == "device" else "one call"
            facts.append((one, ms_range(*kernel.ms_spread)))
        bandwidth = bandwidth_text(kernel, peak_gb_s)
        if bandwidth:
            facts.append(("bandwidth", bandwidth))
    for label, value in (("regs", kernel.n_regs), ("spills", kernel.n_spills),
                         ("shared", kernel.shared)):
        if value is not None:
            facts.append((label, byte_size(value) if label == "shared" else str(value)))
    if kernel.launch:
        facts.append(("launch", " ".join(f"{k}={v}" for k, v in kernel.launch.items())))
    if extern is not None:
        facts += [(label, value) for label, value in facts_lines(extern)
                  if label != FP32_LABEL]
    return facts


@lru_cache(maxsize=256)
def swatch_icon(color: str, size: int = 12) -> QIcon:
    """A square of ``color``; shared per color (a graph has thousands of kernels, ~20 colors)."""
    pixmap = QPixmap(size, size)
    pixmap.fill(QColor(color))
    return QIcon(pixmap)


class KernelListModel(QAbstractListModel):
    """Kernel names with their color swatches; item data (``Qt.UserRole``) is the name."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.names: list[str] = []
        self._colors: dict[str, str] = {}
        self._rows: dict[str, int] = {}

    def set_kernels(self, names: list[str], colors: dict[str, str]) -> None:
        self.beginResetModel()
        self.names, self._colors = list(names), colors
        self._rows = {name: i for i, name in enumerate(self.names)}
        self.endResetModel()

    def row_of(self, name: str) -> int:
        """The row of kernel ``name``; -1 when the graph has no such kernel."""
        return self._rows.get(name, -1)

    def rowCount(self, parent=_ROOT) -> int:  # noqa: N802 (Qt override)
        return 0 if parent.isValid() else len(self.names)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if not index.isValid() or not 0 <= index.row() < len(self.names):
            return None
        name = self.names[index.row()]
        if role == Qt.ItemDataRole.DisplayRole:
            return clip(name, _MAX_NAME)
        if role in _NAME_ROLES:
            return name
        if role == Qt.ItemDataRole.DecorationRole:
            return swatch_icon(self._colors.get(name, "#888888"))
        return None


def eager_text(trace, graph, kernel: Kernel, listed: int = 3) -> str:
    """``in encoder.layer.3.attention.self: 2 kernels, 0.0249 ms (cudnn_generated…
    0.0241 ms, …)``: the eager program's kernels in the modules this kernel's work comes
    from ("" when the trace did not time the program eagerly)."""
    if trace is None or graph is None:
        return ""
    modules, eager = eager_replaced(trace, graph, kernel)
    if not modules:
        return ""
    where = ", ".join(m or "(root)" for m in modules[:3]) + (" …" if len(modules) > 3 else "")
    if not eager:
        return f"in {clip(where, _MAX_NAME)}: no kernel"
    names = ", ".join(f"{_short(k.name)} {k.ms:.4f} ms" for k in eager[:listed])
    more = ", …" if len(eager) > listed else ""
    return (f"in {clip(where, _MAX_NAME)}: {len(eager)} kernels, "
            f"{sum(k.ms for k in eager):.4f} ms ({names}{more})")


def _short(name: str, limit: int = 40) -> str:
    return name if len(name) <= limit else name[:limit - 1] + "…"


class KernelView(QWidget):
    """One kernel: color swatch and name, a line of facts, its member nodes, its source."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.swatch = QLabel(self)
        self.swatch.setFixedSize(14, 14)
        self.title = QLabel(self, textInteractionFlags=Qt.TextInteractionFlag.TextSelectableByMouse,
                            textFormat=Qt.TextFormat.RichText)  # its parts escaped
        # A long kernel name is cut at the pane's edge (its tooltip holds it whole)
        # instead of widening the pane past a small screen.
        self.title.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.facts = QLabel(self, wordWrap=True, textFormat=Qt.TextFormat.RichText)
        self.facts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.code = CodeView(self)
        title_row = QHBoxLayout()
        title_row.addWidget(self.swatch)
        title_row.addWidget(self.title, 1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(title_row)
        layout.addWidget(self.facts)
        layout.addWidget(self.code, 1)
        self.kernel: Kernel | None = None
        self.clear("No kernel selected.")

    def set_kernel(self, kernel: Kernel, color: str, time_kind: str = "device",
                   peak_gb_s: float | None = None, about: str = "", eager: str = "",
                   extern: ExternFacts | None = None) -> None:
        """``about``: what the kernel's nodes compute and where (``Names.about``);
        ``eager``: what the eager program ran there instead (``eager_text``);
        ``extern``: an extern kernel's facts (``extern_facts``)."""
        self.kernel = kernel
        self.swatch.setStyleSheet(f"background: {color}; border: 1px solid #555;")
        self.swatch.show()
        self.title.setText(f"<b>{html.escape(clip(kernel.name, _MAX_NAME))}</b>")
        self.title.setToolTip(tip(clip(kernel.name)))
        facts = _facts_html(kernel, time_kind, peak_gb_s, about, extern)
        if extern is not None and extern.fp32_warning:
            facts = (f"<span style='color:{WARNING_COLOR}'><b>{FP32_LABEL}:</b> "
                     f"{html.escape(clip(extern.fp32_warning))}</span><br>{facts}")
        if eager:
            facts += f"<br><span style='color:gray'>eager ran</span>&nbsp;{html.escape(eager)}"
        self.facts.setText(facts)
        source = kernel.source or kernel.name
        self.code.set_source(source, language_for(kernel.backend, source))

    def clear(self, message: str) -> None:
        self.kernel = None
        self.swatch.hide()
        self.title.setText(html.escape(message))
        self.title.setToolTip("")
        self.facts.setText("")
        self.code.set_source("", "text")


def _facts_html(kernel: Kernel, time_kind: str, peak_gb_s: float | None, about: str,
                extern: ExternFacts | None = None) -> str:
    # nbsp inside short values: lines wrap between facts, not inside "num_warps=4"; a
    # long value (a time with its spread) may wrap, so the pane fits a small screen.
    parts = [f"<span style='color:gray'>{label.replace(' ', '&nbsp;')}</span>&nbsp;"
             + (_glued(html.escape(value)) if len(value) > _UNBROKEN else
                html.escape(value).replace(" ", "&nbsp;"))
             for label, value in kernel_facts(kernel, time_kind, peak_gb_s, extern)]
    nodes = [clip(n, _MAX_NAME) for n in kernel.nodes[:_MAX_LISTED_NODES]]
    if len(kernel.nodes) > _MAX_LISTED_NODES:
        nodes.append(f"… (+{len(kernel.nodes) - _MAX_LISTED_NODES})")
    members = html.escape(", ".join(nodes)) or "–"
    if about:
        members += f" &nbsp;·&nbsp; {html.escape(clip(about, _MAX_NAME))}"
    return (" &nbsp;·&nbsp; ".join(parts)
            + f"<br><span style='color:gray'>nodes ({len(kernel.nodes)})</span>&nbsp;{members}")


class KernelPane(QWidget):
    """Kernel selector, side-by-side toggle and one or two ``KernelView``s."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._kernels: dict[str, Kernel] = {}
        self._names: tuple[object, Names] = (None, Names(None))  # of the graph shown
        self._extern: tuple[object, dict[str, ExternFacts]] = (None, {})  # its externs
        self._colors: dict[str, str] = {}
        self._node_kernel: dict[str, Kernel] | None = None  # built on the first selection
        self.kernel_list = KernelListModel(self)
        self.combos = (QComboBox(self), QComboBox(self))
        for combo in self.combos:
            combo.setModel(self.kernel_list)
        self.views = (KernelView(self), KernelView(self))
        self._active = self.views[0]
        self.side_button = QToolButton(self, text="Side by side", checkable=True)
        self.side_button.setToolTip(f"Compare two kernels ({SIDE_BY_SIDE_SHORTCUT})")
        self.find_bar = FindBar(lambda: self._active.code, self)
        self._build_layout()
        self._connect()
        self._on_graph_changed()

    def _build_layout(self) -> None:
        top = QHBoxLayout()
        top.addWidget(QLabel("Kernel:", self))
        for combo in self.combos:
            combo.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
            combo.setMinimumContentsLength(12)  # full names in the list; fits 1280 px
        top.addWidget(self.combos[0], 1)
        top.addWidget(self.side_button)
        top.addWidget(self.combos[1], 1)
        splitter = QSplitter(Qt.Orientation.Horizontal, self)
        for view in self.views:
            splitter.addWidget(view)
            view.code.installEventFilter(self)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.addLayout(top)
        layout.addWidget(splitter, 1)
        layout.addWidget(self.find_bar)
        self.find_bar.hide()
        self._set_second_visible(False)

    def _connect(self) -> None:
        local_shortcut(QKeySequence(QKeySequence.StandardKey.Find), self, self.find_bar.open)
        local_shortcut(QKeySequence(SIDE_BY_SIDE_SHORTCUT), self, self.side_button.toggle)
        self.side_button.toggled.connect(self.set_side_by_side)
        self.combos[0].activated.connect(lambda i: self._on_combo_activated(0, i))
        self.combos[1].activated.connect(lambda i: self._on_combo_activated(1, i))
        self._state.sig_graph_changed.connect(self._on_graph_changed)
        self._state.sig_kernel_changed.connect(self._on_kernel_changed)
        self._state.sig_selection_changed.connect(self._on_selection_changed)

    # -- public --------------------------------------------------------------------
    def show_kernel(self, name: str, side: int = 0) -> None:
        """Show kernel ``name`` on ``side`` (0 = left/only, 1 = right); unknown names clear it."""
        kernel = self._kernels.get(name)
        view, combo = self.views[side], self.combos[side]
        if kernel is None:
            view.clear(f"No kernel named {name!r} in this graph." if name else "No kernel selected.")
            combo.setCurrentIndex(-1)
            return
        graph = self._state.graph
        if self._names[0] is not graph:
            self._names = (graph, Names(graph))
        if self._extern[0] is not graph:  # each kernel's facts when first shown
            self._extern = (graph, {})
        if name not in self._extern[1]:
            trace = self._state.trace
            self._extern[1][name] = extern_facts(
                graph, trace.env if trace else None, only=(name,)).get(name)
        view.set_kernel(kernel, self._colors[name], time_kind(graph.timing if graph else None),
                        peak_dram_gb_s(self._state.trace), self._names[1].about(kernel.nodes),
                        eager_text(self._state.trace, graph, kernel),
                        self._extern[1].get(name))
        combo.setCurrentIndex(self.kernel_list.row_of(name))

    def set_side_by_side(self, on: bool) -> None:
        if self.side_button.isChecked() != on:
            self.side_button.setChecked(on)  # re-enters through toggled
            return
        self._set_second_visible(on)
        if on and self.views[1].kernel is None:
            self.show_kernel(self._next_kernel_name(), side=1)

    def shown_kernels(self) -> tuple[str, ...]:
        """Names of the kernels on screen, left to right."""
        views = self.views if self.side_button.isChecked() else self.views[:1]
        return tuple(v.kernel.name for v in views if v.kernel is not None)

    # -- state handlers ------------------------------------------------------------
    def _on_graph_changed(self, _index: int = -1) -> None:
        graph = self._state.graph
        kernels = graph.kernels if graph is not None else ()
        self._kernels = {}
        for kernel in kernels:
            self._kernels.setdefault(kernel.name, kernel)
        self._colors = kernel_colors(kernels)
        self._node_kernel = None
        self.kernel_list.set_kernels(list(self._kernels), self._colors)
        for view in self.views:
            view.clear("No kernels in this graph." if graph is not None else "No trace loaded.")
        first = self._state.kernel or next(iter(self._kernels), "")
        if first:
            self.show_kernel(first)
        if self.side_button.isChecked():
            self.show_kernel(self._next_kernel_name(), side=1)

    def _on_kernel_changed(self, name: str) -> None:
        if name:
            self.show_kernel(name)

    def _on_selection_changed(self) -> None:
        # Selecting nodes of two kernels while comparing fills both sides.
        if not self._state.selected_nodes:
            return
        if self._node_kernel is None:  # per-node work only once the user selects a node
            graph = self._state.graph
            self._node_kernel = kernel_of_node(graph) if graph is not None else {}
        names = dict.fromkeys(self._node_kernel[n].name for n in self._state.selected_nodes
                              if n in self._node_kernel)
        sides = 2 if self.side_button.isChecked() else 1
        for side, name in enumerate(list(names)[:sides]):
            self.show_kernel(name, side)

    def _on_combo_activated(self, side: int, index: int) -> None:
        name = self.combos[side].itemData(index)
        self.show_kernel(name, side)
        if side == 0:
            self._state.select_kernel(name)

    # -- helpers -------------------------------------------------------------------
    def _set_second_visible(self, on: bool) -> None:
        self.views[1].setVisible(on)
        self.combos[1].setVisible(on)
        if not on:
            self._active = self.views[0]

    def _next_kernel_name(self) -> str:
        """The kernel after the left one in call order (wrapping), for a first comparison."""
        names = list(self._kernels)
        left = self.views[0].kernel
        if not names:
            return ""
        if left is None or left.name not in names:
            return names[0]
        return names[(names.index(left.name) + 1) % len(names)]

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        # Ctrl+F searches the side the user last clicked into.
        if event.type() == QEvent.Type.FocusIn:
            for view in self.views:
                if watched is view.code:
                    self._active = view
        return super().eventFilter(watched, event)
