"""One rank's profiled train step (``Trace.step``): the compiled graphs' calls, the
optimizer, and the collectives issued outside the graphs (DDP's bucket all-reduces,
FSDP's all-gathers and reduce-scatters), each on its lane.

Lanes, top to bottom: compute (each graph's call in its graph color, the optimizer in
gray), communication (each collective, labelled with its kind and bytes; collectives in
flight at once get rows of their own), then on the GPU the same as the device ran them.
The title sums the step up (``model.comms.step_overlap``). Clicking a graph's bar shows
that graph; the rank chooser picks the rank.
"""

from __future__ import annotations

import html

from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

# isort: split
import pyqtgraph as pg

from fusionviz.model.comms.step_overlap import (
    StepOverlap,
    overlap_line,
    step_overlap,
    step_span_ok,
)
from fusionviz.model.palette import EXTERN_COLOR, graph_color
from fusionviz.model.report.formatting import byte_size
from fusionviz.model.trace import Graph, StepSpan
from fusionviz.ui.charts.page import ChartPage, Drawn
from fusionviz.ui.charts.timeline import SpanBars
from fusionviz.ui.theme import graph_colors, is_dark
from fusionviz.ui.view_state import ViewState

LANES = ("compute", "communication", "device compute", "device communication")
_NAMES = {"compute": "compute (CPU)", "communication": "communication",
          "device compute": "device compute", "device communication": "device comm."}
_ROW = 1.0  # the distance between rows
_MAX_LABELS = 80  # spans labelled in the plot (every span keeps its tip)
_CHAR_PX = 6  # about, at the plot's font: a label is drawn where its bar has room
_SIDE = {"forward": "fwd", "backward": "bwd", "inference": "inf"}
NOT_RECORDED = ("No train step was profiled for this trace (one step of each rank is "
                "profiled in a job of several ranks; traces made before have none).")


class StepChart(ChartPage):
    """The open trace's profiled train step, one lane per kind of work."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._overlap: StepOverlap | None = None
        self._spans: list[StepSpan] = []  # the span of each bar of ``bars``
        self._rows: list[float] = []
        self._bars: SpanBars | None = None
        self._title = ""
        self._pens: list = []
        self._ticks: list[tuple[float, str]] = []
        state.sig_trace_changed.connect(self._on_trace_changed)
        state.sig_graph_changed.connect(self._on_graph_changed)
        if state.trace is not None:
            self._on_trace_changed()

    overlap: Drawn[StepOverlap | None] = Drawn()
    spans: Drawn[list[StepSpan]] = Drawn("The span of each bar, in ``bars``' order.")
    rows: Drawn[list[float]] = Drawn("The row (y) of each bar.")
    ticks: Drawn[list[tuple[float, str]]] = Drawn(
        "The lanes' names on the left axis, at their first row.")
    bars: Drawn[SpanBars | None] = Drawn()
    title: Drawn[str] = Drawn()

    def _on_trace_changed(self) -> None:
        self.set_graph(self._state.graph)  # drawn from the trace: now or when seen

    def draw(self, _graph: Graph | None) -> None:
        trace = self._state.trace
        step = trace.step if trace is not None else None
        self._overlap = step_overlap(step)
        self._spans, self._rows, self._bars, self._title = [], [], None, ""
        self._ticks = []
        if self._overlap is None:
            self.show_message(step.note if step is not None and step.note else NOT_RECORDED)
            return
        self.plot_widget.clear()
        plot = self.new_plot(grid="x", bottom="ms from the start of the step (the first "
                                              "compiled graph's call)")
        self._title = overlap_line(self._overlap)
        sub = [step.window + (f"; {step.note}" if step.note else ""), step.method]
        plot.setTitle("<br>".join([html.escape(self._title), *(
            f"<small>{html.escape(line)}</small>" for line in sub if line)]),
            color=self.foreground(), size="9pt")
        ticks = self._ticks = self._place(tuple(s for s in step.spans if step_span_ok(s)))
        comm = graph_colors(is_dark()).collective
        self._bars = SpanBars([s.start_ms for s in self._spans],
                              [s.end_ms for s in self._spans], self._rows,
                              [_brush(s, comm) for s in self._spans],
                              [_tip(s, self._overlap) for s in self._spans],
                              height=0.7)
        self._pens = [pg.mkPen(self.palette().base().color(), width=1) if s.graph is None
                      else pg.mkPen(None) for s in self._spans]  # collectives side by side
        self._bars.sig_bar_clicked.connect(self._on_bar_clicked)
        plot.addItem(self._bars)
        lo = min(s.start_ms for s in self._spans)
        span_ms = max(s.end_ms for s in self._spans) - lo or 1.0
        px_per_ms = max(200, self.width() - 160) / span_ms  # the plot's width, about
        labelled = []
        for s, y in zip(self._spans, self._rows):
            room = (s.end_ms - s.start_ms) * px_per_ms
            label = next((t for t in (_label(s), _label(s, wide=False))
                          if len(t) * _CHAR_PX + 6 <= room), None)
            if label:  # the others: their tips
                labelled.append((s, y, label))
        for s, y, label in labelled[:_MAX_LABELS]:
            text = pg.TextItem(label, color=self.foreground(), anchor=(0, 0.5))
            text.setPos(s.start_ms, y)
            plot.addItem(text)
        plot.getAxis("left").setTicks([ticks])
        plot.getAxis("left").setWidth(110)
        plot.invertY(True)
        plot.setMouseEnabled(x=True, y=False)
        plot.setYRange(-0.6, max(self._rows) + 0.6, padding=0)
        self._on_graph_changed(self._state.graph_index)

    def _place(self, spans: tuple[StepSpan, ...]) -> list[tuple[float, str]]:
        """Give every span a row: a lane each, and in a lane, a row for each span that
        would overlap one already there. Returns the left axis' ticks."""
        y, ticks = 0.0, []
        for lane in LANES:
            rows: list[float] = []  # the end of the last span of each row of the lane
            mine = sorted((s for s in spans if s.lane == lane), key=lambda s: s.start_ms)
            if not mine:
                continue
            for s in mine:
                row = next((i for i, end in enumerate(rows) if end <= s.start_ms),
                           len(rows))
                if row == len(rows):
                    rows.append(s.end_ms)
                rows[row] = s.end_ms
                self._spans.append(s)
                self._rows.append(y + row * _ROW)
            ticks.append((y, _NAMES[lane]))
            y += len(rows) * _ROW
        return ticks

    def _on_bar_clicked(self, i: int) -> None:
        if 0 <= i < len(self._spans) and self._spans[i].graph is not None:
            self._state.set_graph(self._spans[i].graph)

    def _on_graph_changed(self, index: int) -> None:
        """Outline the bars of the graph shown."""
        if self._bars is None or self.stale:
            return
        outline = pg.mkPen(self.foreground(), width=2)
        self._bars.setOpts(pens=[outline if s.graph == index else pen
                                 for s, pen in zip(self._spans, self._pens)])


def _brush(s: StepSpan, comm: QColor) -> QColor:
    if s.graph is not None:
        return QColor(graph_color(s.graph))
    if s.kind == "optimizer":
        return QColor(EXTERN_COLOR)
    return comm


def _label(s: StepSpan, wide: bool = True) -> str:
    """The long label of a bar, or (not ``wide``) its short one."""
    if s.graph is not None:
        return f"#{s.graph} {_SIDE.get(s.kind, s.kind)}" if wide else f"#{s.graph}"
    if s.kind == "optimizer":
        return s.name
    size = f" {byte_size(s.bytes)}" if s.bytes is not None and wide else ""
    return f"{s.kind}{size}"


def _tip(s: StepSpan, overlap: StepOverlap) -> str:
    when = f"{s.start_ms:.4g} – {s.end_ms:.4g} ms ({s.end_ms - s.start_ms:.4g} ms)"
    if s.graph is not None:
        return f"graph {s.graph} ({s.kind}), {s.lane}\n{when}\nclick to show the graph"
    if s.kind == "optimizer":
        return f"optimizer: {s.name}\n{when}"
    lines = [f"{s.name} ({s.lane})" + (f", bucket {s.bucket}" if s.bucket is not None
                                        else "")]
    if s.shape or s.bytes is not None:
        lines.append(f"{byte_size(s.bytes)}: {s.dtype or '?'} "
                     f"[{', '.join(map(str, s.shape))}]")
    lines.append(when)
    if s.issue_ms is not None:
        lines.append(f"issued at {s.issue_ms:.4g} ms")
    facts = next((c for c in overlap.collectives if c.span is s), None)
    if facts is not None:
        pieces = ", ".join(f"#{g}" for g in facts.backward) or "none"
        lines.append(f"overlaps backward graphs: {pieces} ({facts.backward_ms:.3g} ms); "
                     f"{facts.ms - facts.hidden_ms:.3g} ms with no compute")
    return "\n".join(lines)
