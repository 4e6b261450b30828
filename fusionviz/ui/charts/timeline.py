"""The timeline of one graph call: when each kernel ran, and each collective from its
issue to the end of its wait (``report.chart_data.timeline``).

Two lanes: compute kernels in their kernel colors, and communication (each
collective's span, light, with its call and its wait on it). A compute kernel inside
a collective's span is work that overlapped the communication. Clicking a bar selects
its kernel.
"""

from __future__ import annotations

import html

from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QWidget

# isort: split
import pyqtgraph as pg

from fusionviz.model.palette import kernel_colors
from fusionviz.model.report.chart_data import timeline
from fusionviz.model.trace import Graph
from fusionviz.ui.charts.page import ChartPage, ClickableBars, Drawn
from fusionviz.ui.theme import graph_colors, is_dark
from fusionviz.ui.view_state import ViewState

LANES = ("compute", "communication")
_HEIGHT = 0.6
_CLOCKS = {"wall": "ms from the start of the graph call (wall time of each kernel)",
           "launch": "ms from the start of the graph call (CPU side of each launch; "
                     "the GPU runs it later)"}


class SpanBars(ClickableBars):
    """Bars from x0 to x1 on lanes (y = the lane)."""

    def __init__(self, x0: list[float], x1: list[float], lanes: list[int],
                 brushes: list[QColor], tips: list[str], height: float = _HEIGHT) -> None:
        super().__init__(tips, x0=x0, x1=x1, y=lanes, height=height, brushes=brushes,
                         pens=[pg.mkPen(None)] * len(x0))
        self._x0, self._x1, self._lanes = x0, x1, lanes
        self._half = height / 2

    def bar_at(self, pos: QPointF) -> int | None:
        for i, (a, b, lane) in enumerate(zip(self._x0, self._x1, self._lanes)):
            if a <= pos.x() <= b and abs(pos.y() - lane) <= self._half:
                return i
        return None


class TimelineChart(ChartPage):
    """When each kernel ran within one call of the graph, and each collective's span."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._data: dict = {}
        self._names: list[str] = []  # the kernel of each bar of ``bars``
        self._bars: SpanBars | None = None

    data: Drawn[dict] = Drawn("``chart_data.timeline`` of the graph shown.")
    bars: Drawn[SpanBars | None] = Drawn()
    names: Drawn[list[str]] = Drawn(
        "The kernel of each bar of ``bars`` (one bar per recorded launch).")

    def draw(self, graph: Graph | None) -> None:
        self._data = timeline(graph) if graph is not None else {}
        self._bars, self._names = None, []
        kernels = self._data.get("kernels", [])
        if not kernels:
            self.show_message("No kernel start and end times were recorded for this graph "
                              "(traces made before fusionviz recorded them, or untimed).")
            return
        self.plot_widget.clear()
        plot = self.new_plot(grid="x", bottom=_CLOCKS[self._data["clock"]])
        comm = graph_colors(is_dark()).collective
        light = QColor(comm)
        light.setAlpha(70)
        spans = self._data["spans"]
        note = html.escape(self._data.get("note", "")).replace("\n", "<br>")
        plot.setTitle(_title(spans) + (f"<br>{note}" if note else ""),
                      color=self.foreground(), size="9pt")
        # the spans first, under the calls and waits drawn on them
        if spans:
            plot.addItem(SpanBars([s["start"] for s in spans], [s["end"] for s in spans],
                                  [1] * len(spans), [light] * len(spans),
                                  [_span_tip(s) for s in spans], height=0.8))
        colors = kernel_colors(graph.kernels)
        # one bar per launch: a kernel launched in every block is as many short bars
        bars = [(k, i, start, end) for k in kernels
                for i, (start, end) in enumerate(k["launches"])]
        self._names = [k["name"] for k, *_ in bars]
        self._bars = SpanBars(
            [start for *_, start, _ in bars], [end for *_, end in bars],
            [1 if k["collective"] else 0 for k, *_ in bars],
            [comm if k["collective"] else QColor(colors.get(k["name"], "#888888"))
             for k, *_ in bars],
            [_kernel_tip(k, i, start, end) for k, i, start, end in bars])
        self._bars.sig_bar_clicked.connect(self._on_bar_clicked)
        plot.addItem(self._bars)
        plot.getAxis("left").setTicks([list(enumerate(LANES))])
        plot.getAxis("left").setWidth(120)
        plot.invertY(True)
        plot.setMouseEnabled(x=True, y=False)
        plot.setYRange(-0.6, len(LANES) - 0.4, padding=0)

    def _on_bar_clicked(self, i: int) -> None:
        if 0 <= i < len(self._names):
            self._state.select_kernel(self._names[i])


def _title(spans: list[dict]) -> str:
    if not spans:
        return "one call of the graph: when each kernel ran (medians of the timed calls)"
    inside = len({name for s in spans for name in s["between"]})
    return (f"one call of the graph (medians of the timed calls): {len(spans)} "
            f"collective{'s' if len(spans) != 1 else ''} in flight, {inside} compute "
            f"kernel{'s' if inside != 1 else ''} ran while one was")


def _kernel_tip(k: dict, i: int, start: float, end: float) -> str:
    n = len(k["launches"])
    if n > 1:
        which = f" (launch {i + 1} of {n})"
    elif k.get("calls", 1) > 1:
        which = f" ({k['calls']} launches: the first's start to the last's end)"
    else:
        which = ""
    return f"{k['name']}\n{start:.4g} – {end:.4g} ms{which}"


def _span_tip(s: dict) -> str:
    return (f"{s['kind']} {s['node']}: issued at {s['start']:.4g} ms, waited for from "
            f"{s['wait_start']:.4g} ms, done at {s['end']:.4g} ms "
            f"({s['end'] - s['start']:.4g} ms in flight)")
