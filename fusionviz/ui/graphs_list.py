"""The list of compiled graphs of a trace, with their sizes, runtimes and why each exists.

One row per ``Graph`` (forward, backward, graph-break pieces) from
``queries.graph_headline``; the second column says why Dynamo made the graph (after a
graph break, a recompile and its failed guard, ending at a graph break:
``graph_reasons``), in full in its tooltip, and the first column's tooltip explains
the compile id. The pieces of a frame Dynamo's DDP optimizer split sit under one row
per side that sums them. Selecting a row writes ``ViewState.set_graph`` (a pieces row:
its first piece).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTreeWidget, QTreeWidgetItem

from fusionviz.model.queries import graph_headline, load_warning, time_kind
from fusionviz.model.report.formatting import count, ms_spread
from fusionviz.model.report.graph_reasons import (
    compile_id_tip,
    split_groups,
    step_calls,
    why_short,
    why_text,
)
from fusionviz.ui.desktop import ColumnFit, add_row_copy
from fusionviz.ui.plain import tip
from fusionviz.ui.view_state import ViewState

# "why" second: the narrow dock shows it without scrolling (it is what tells graphs apart)
COLUMNS = ("graph", "why", "nodes", "kernels", "rounds", "fused", "compiled ms", "eager ms",
           "speedup")
WHY = COLUMNS.index("why")
_TIP = Qt.ItemDataRole.UserRole + 1  # a row's first tooltip, before the hidden columns
WHY_MAX_WIDTH = 360  # px: longer reasons are elided, the tooltip has them whole
HEADER_TIPS = (
    "the graph: its number, forward or backward, and Dynamo's compile id",
    "why Dynamo made this graph (a graph break, a recompile, a frame of its own)",
    "scheduler nodes before fusion", "kernels the graph launches",
    "fusion rounds of Inductor's scheduler", "pairs fused over all rounds",
    "the compiled graph's time per call, in ms (device or wall: see each cell)",
    "your program's time for the same call, run eagerly, in ms",
    "eager ms / compiled ms (above 1×: compiled is faster)")


def summary_cells(graph, calls: int | None = None) -> list[str]:
    s = graph_headline(graph)
    title = f"#{graph.index} {graph.kind}"
    if graph.compile_id:
        title += f" [{graph.compile_id}]"
    speedup = s.get("speedup_vs_eager")
    return [
        title,
        why_short(graph, calls),
        count(s.get("nodes", len(graph.nodes))),
        count(s.get("kernels", len(graph.kernels))),
        count(s.get("rounds", len(graph.rounds))),
        count(s.get("fusions"), none=""),
        _ms(s.get("compiled_ms")),
        _ms(s.get("eager_ms")),
        _speedup(speedup),
    ]


def group_cells(label: str, graphs) -> list[str]:
    """A pieces row: the pieces' sizes and times summed (a time only where every piece
    has one)."""
    heads = [graph_headline(g) for g in graphs]

    def total(key):
        values = [h.get(key) for h in heads]
        return None if any(v is None for v in values) else sum(values)

    compiled, eager = total("compiled_ms"), total("eager_ms")
    title = f"#{graphs[0].index}–{graphs[-1].index} {graphs[0].kind}"
    return [title, label.split(": ", 1)[-1], count(total("nodes")), count(total("kernels")),
            "", count(total("fusions"), none=""), _ms(compiled), _ms(eager),
            _speedup(eager / compiled if compiled and eager is not None else None)]


def _speedup(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def _ms(value: float | None) -> str:
    return "—" if value is None else f"{value:,.3f}"


def graph_tip(graph, calls: int | None = None) -> str:
    """The first column's tooltip: device and compile time, what the compile id means,
    and why the graph exists."""
    tip = (f"{graph.device} · {graph.backend or '?'} backend · compile {graph.compile_s:.2f} s"
           f"\n\n{compile_id_tip(graph.compile_id)}")
    why = why_text(graph, calls)
    return f"{tip}\n\n{why}" if why else tip


def why_tip(graph, calls: int | None = None) -> str:
    return why_text(graph, calls) or ("Dynamo recorded no graph break or recompile for "
                                      "this graph (or the trace was recorded before "
                                      "fusionviz recorded them).")


def speedup_tip(timing) -> str:
    """The speedup on both clocks: a launch-bound graph can be faster on the device and
    slower on the wall clock."""
    if timing is None or not timing.compiled_ms or not timing.eager_ms:
        return "not timed on both sides"
    lines = [f"{time_kind(timing)}: eager {timing.eager_ms:.3f} ms / compiled "
             f"{timing.compiled_ms:.3f} ms = {timing.eager_ms / timing.compiled_ms:.2f}×"]
    cw, ew = timing.compiled_wall_ms, timing.eager_wall_ms
    if time_kind(timing) == "device" and cw and ew:
        lines.append(f"wall: eager {ew:.3f} ms / compiled {cw:.3f} ms = {ew / cw:.2f}×"
                     + ("  (slower in wall time: the CPU sets the pace)" if cw > ew else ""))
    return "\n".join(lines)


def timing_tip(timing, side: str = "compiled") -> str:
    """What a time in the list is: device or wall, median of how many, its spread."""
    if timing is None:
        return "not timed"
    value, spread = getattr(timing, f"{side}_ms"), getattr(timing, f"{side}_spread")
    if value is None:
        return timing.note or "not timed"
    kind = time_kind(timing)
    what = ("device time per call (CUDA profiler)" if kind == "device"
            else "wall time per call")
    if side == "eager":  # sampled by the baseline run, not the compiled graph's
        tip = f"eager {ms_spread(value, spread)}: {what} of {timing.eager_source or 'eager'}"
        if timing.dynamo_eager_ms is not None:
            tip += (f"\nthe graph Dynamo captured, run eagerly: {timing.dynamo_eager_ms:.3f} "
                    "ms (what eager meant before; your program may take another path "
                    "under torch.compile)")
    else:
        samples = timing.profiled_calls if kind == "device" else timing.repeats
        tip = f"{side} {ms_spread(value, spread)}: {what}, median of {samples}"
    warning = load_warning(timing)
    return f"{tip}\n{warning}" if warning else tip


class GraphsList(QTreeWidget):
    """Every compiled graph of the trace; the current one is selected."""

    def __init__(self, state: ViewState, parent=None) -> None:
        super().__init__(parent)
        self.state = state
        self.setRootIsDecorated(False)
        self.items: dict[int, QTreeWidgetItem] = {}  # graph index -> its row
        self.calls: dict[int, int] = {}  # graph index -> calls in the profiled step
        self.setAlternatingRowColors(True)
        self.setUniformRowHeights(True)
        self.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        add_row_copy(self)
        self.setHeaderLabels(list(COLUMNS))
        for col, text in enumerate(HEADER_TIPS):
            self.headerItem().setToolTip(col, text)
        # the columns that fit whole; a long reason is elided (its tooltip has it)
        self.columns = ColumnFit(self, always=WHY + 1, elastic=(WHY, WHY_MAX_WIDTH),
                                 on_fit=self._hidden_in_tooltips)
        self.header().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
        self.header().setSectionResizeMode(WHY, QHeaderView.ResizeMode.Fixed)
        self.header().setStretchLastSection(False)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)
        self.currentItemChanged.connect(self._on_current_changed)
        state.sig_trace_changed.connect(self._on_trace_changed)
        state.sig_graph_changed.connect(self._on_graph_changed)
        self._on_trace_changed()

    def _on_trace_changed(self) -> None:
        self.blockSignals(True)
        self.clear()
        self.items.clear()
        trace = self.state.trace
        graphs = trace.graphs if trace is not None else ()
        groups = split_groups(graphs)
        self.calls = step_calls(trace)  # graph index -> calls in the profiled step
        self.setRootIsDecorated(any(label for label, _ in groups))
        for label, indices in groups:
            parent = None
            if label:
                parent = QTreeWidgetItem(group_cells(label, [graphs[i] for i in indices]))
                parent.setData(0, Qt.ItemDataRole.UserRole, indices[0])
                parent.setData(0, _TIP, label + "; each piece is a graph below")
                parent.setToolTip(WHY, tip(why_tip(graphs[indices[0]])))
                self._align(parent)
                self.addTopLevelItem(parent)
            for i in indices:
                item = self._row(i, graphs[i])
                (parent.addChild if parent is not None else self.addTopLevelItem)(item)
            if parent is not None:
                parent.setExpanded(True)
        self.blockSignals(False)
        self.columns.fit()
        self._on_graph_changed(self.state.graph_index)

    def _align(self, item: QTreeWidgetItem) -> None:
        for col in range(WHY + 1, len(COLUMNS)):
            item.setTextAlignment(col, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)

    def _row(self, i: int, graph) -> QTreeWidgetItem:
        calls = self.calls.get(graph.index)
        item = QTreeWidgetItem(summary_cells(graph, calls))
        item.setData(0, Qt.ItemDataRole.UserRole, i)
        # device, backend, Dynamo's reasons and the user's source line: trace text
        item.setData(0, _TIP, graph_tip(graph, calls))
        item.setToolTip(WHY, tip(why_tip(graph, calls)))
        launches = graph_headline(graph)["launches"]
        item.setToolTip(COLUMNS.index("kernels"), f"{len(graph.kernels)} kernels launched {launches} times per "
                           "call (wrapper-only nodes such as MultiOutput are not kernels)")
        for col, text in ((COLUMNS.index("compiled ms"), timing_tip(graph.timing)),
                          (COLUMNS.index("eager ms"), timing_tip(graph.timing, "eager")),
                          (COLUMNS.index("speedup"), speedup_tip(graph.timing))):
            item.setToolTip(col, tip(text))  # timing notes come from the trace
        self._align(item)
        self.items[i] = item
        return item

    def _hidden_in_tooltips(self, hidden: list[int]) -> None:
        """Each row's first tooltip ends with its values in the columns left out."""
        for item in self._all_items():
            more = " · ".join(f"{COLUMNS[c]} {item.text(c)}" for c in hidden
                              if item.text(c))
            item.setToolTip(0, tip(item.data(0, _TIP) + (
                f"\n\n{more}\n(widen the list to see these columns)" if more else "")))

    def _all_items(self) -> list[QTreeWidgetItem]:
        top = [self.topLevelItem(i) for i in range(self.topLevelItemCount())]
        return [x for t in top for x in (t, *(t.child(j) for j in range(t.childCount())))]

    def _on_graph_changed(self, index: int) -> None:
        item = self.items.get(index)
        if item is not None and self.currentItem() is not item:
            self.blockSignals(True)
            self.setCurrentItem(item)
            self.blockSignals(False)

    def _on_current_changed(self, item, _previous) -> None:
        if item is not None:
            self.state.set_graph(int(item.data(0, Qt.ItemDataRole.UserRole)))
