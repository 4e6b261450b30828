"""The charts pane: per-kernel device time, per-round fusion progress, benchmark-fusion speedups.

Each chart derives its numbers from ``model.timing`` for the current graph and shows
a plain message instead of empty axes when the trace recorded no such data. Clicks
write back to the view state (kernel, step, candidate pair); nothing else is shared.

Charts are drawn lazily (``chart_page``): a new graph only marks a chart stale, and it
is drawn when it comes on screen (its tab and its dock in front) or when its data is
read, so a hidden charts pane costs nothing when a large trace is opened.
"""

from __future__ import annotations

from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTabWidget, QVBoxLayout, QWidget

# isort: split
# pyqtgraph binds to the Qt already imported; PySide6 must come first.
import pyqtgraph as pg

from fusionviz.model.palette import kernel_colors
from fusionviz.model.queries import peak_dram_gb_s, time_kind
from fusionviz.model.report.chart_data import (
    benchmark_points,
    kernel_times,
    kernel_tip,
    round_series,
)
from fusionviz.model.report.extern_facts import extern_facts, extern_text
from fusionviz.model.report.formatting import MIB
from fusionviz.model.trace import Graph
from fusionviz.ui.charts.page import (
    ChartPage,
    ClickableBars,
    Drawn,
    OnScreenWatcher,
    on_screen,
)
from fusionviz.ui.charts.step import StepChart
from fusionviz.ui.charts.timeline import TimelineChart
from fusionviz.ui.plain import tip
from fusionviz.ui.theme import OUTCOME_COLORS
from fusionviz.ui.view_state import ViewState

_NAME_CHARS = 36  # kernel names are truncated to this on the axis (full name in tooltip)
FUSED_COLOR, REJECTED_COLOR = OUTCOME_COLORS["fused"], OUTCOME_COLORS["rejected"]
SPILL_COLOR, UNDECIDED_COLOR = OUTCOME_COLORS["spill"], OUTCOME_COLORS["undecided"]
_SERIES_COLOR = "#4e79a7"
MAX_BARS = 60  # kernels charted; a graph with more shows its slowest
ROW_PX = 16  # the least height of a labelled bar; fewer rows are shown, drag scrolls
_MAX_DECISION_TICKS = 24  # label every decision up to this many, else numeric ticks
_BENCH_KEY = (f"<span style='color:{FUSED_COLOR}'>●</span> fused &nbsp; "
              f"<span style='color:{REJECTED_COLOR}'>✕</span> not fused (slower) &nbsp; "
              f"<span style='color:{SPILL_COLOR}'>▼</span> spill veto, not timed (at 0)")


def _short(name: str) -> str:
    return name if len(name) <= _NAME_CHARS else name[: _NAME_CHARS - 1] + "…"


class KernelBars(ClickableBars):
    """Horizontal bars, one per kernel (row i at y=i), that report clicks by row."""

    def __init__(self, ms: list[float], brushes: list[QColor], tips: list[str]) -> None:
        super().__init__(tips, x0=0, y=list(range(len(ms))), width=ms, height=0.7,
                         brushes=brushes, pens=[pg.mkPen(None)] * len(ms))
        self._ms = ms

    def row_at(self, pos: QPointF) -> int | None:
        row = round(pos.y())
        if 0 <= row < len(self._ms) and abs(pos.y() - row) <= 0.35 and pos.x() <= self._ms[row]:
            return row
        return None

    bar_at = row_at


class KernelTimeChart(ChartPage):
    """Device time per kernel, in kernel colors; clicking a bar selects the kernel."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._names: list[str] = []
        self._bars: KernelBars | None = None
        self._plot, self._title = None, ""
        state.sig_kernel_changed.connect(self._on_kernel_changed)

    names: Drawn[list[str]] = Drawn("The kernels charted, top to bottom.")
    bars: Drawn[KernelBars | None] = Drawn()

    def draw(self, graph: Graph | None) -> None:
        times = kernel_times(graph) if graph is not None else []
        # slowest first: the rows that fit are the ones that matter; thousands of
        # labelled bars are an unreadable blot, so at most MAX_BARS
        shown = sorted(times, key=lambda t: -t[1])[:MAX_BARS]
        self._names, self._bars = [name for name, _, _ in shown], None
        if not times:
            note = graph.timing.note if graph is not None and graph.timing else ""
            self.show_message("No per-kernel device times were recorded for this graph."
                              + (f"\n({note})" if note else ""))
            return
        self.plot_widget.clear()
        plot = self.new_plot(grid="x", bottom=f"{time_kind(graph.timing)} time per graph "
                                              "call (ms)")
        title = _total_title(graph)
        if len(shown) < len(times):
            title += f" · the {len(shown)} slowest of {len(times)} kernels"
        plot.setTitle(title, color=self.foreground())
        self._plot, self._title = plot, title
        colors = kernel_colors(graph.kernels)
        ms = [t for _, t, _ in shown]
        kernels = {k.name: k for k in graph.kernels}
        trace = self._state.trace
        peak = peak_dram_gb_s(trace)
        facts = extern_facts(graph, trace.env if trace is not None else None)
        tips = [kernel_tip(kernels[name], peak, extern_text(facts[name]) if name in facts
                           else "") for name, _, _ in shown]
        self._bars = KernelBars(ms, [QColor(colors.get(n, "#888888")) for n in self._names], tips)
        self._bars.sig_bar_clicked.connect(self.on_bar_clicked)
        plot.addItem(self._bars)
        plot.getAxis("left").setTicks([[(i, _short(n)) for i, n in enumerate(self._names)]])
        plot.invertY(True)
        plot.setMouseEnabled(x=False, y=True)
        box = plot.getViewBox()
        box.setLimits(yMin=-0.5, yMax=len(shown) - 0.5, minYRange=1)
        box.sigResized.connect(self._fit_rows)
        self._fit_rows(box)
        self._on_kernel_changed(self._state.kernel)

    def _fit_rows(self, box) -> None:
        """Show as many bars as have room for a readable label (drag to scroll)."""
        rows = min(len(self._names), max(1, int(box.height() // ROW_PX)))
        top = max(-0.5, box.viewRange()[1][0])
        top = min(top, len(self._names) - 0.5 - rows)
        box.setYRange(top, top + rows, padding=0)
        if self._plot is not None:  # never hide bars silently
            more = len(self._names) - rows
            self._plot.setTitle(self._title + (f" · {rows} rows shown, drag for {more} more"
                                         if more > 0 else ""), color=self.foreground())

    def on_bar_clicked(self, row: int) -> None:
        if 0 <= row < len(self.names):
            self._state.select_kernel(self.names[row])

    def _on_kernel_changed(self, name: str) -> None:
        if self._bars is None or self.stale:  # drawing outlines the state's kernel
            return
        outline, none = pg.mkPen(self.foreground(), width=2), pg.mkPen(None)
        self._bars.setOpts(pens=[outline if n == name else none for n in self._names])


def _total_title(graph: Graph) -> str:
    timing = graph.timing
    if timing is None or timing.compiled_ms is None:
        return ""
    kind = time_kind(timing)
    title = f"compiled {timing.compiled_ms:.4g} ms {kind}"
    if timing.eager_ms:
        title += f" · eager {timing.eager_ms:.4g} ms ({timing.eager_ms / timing.compiled_ms:.2f}×)"
    if kind == "device" and timing.compiled_wall_ms is not None:
        title += f" · wall {timing.compiled_wall_ms:.4g} ms"
    return title


class RoundChart(ChartPage):
    """Node count, estimated bytes and compile time per fusion step; the current step is marked."""

    # (series key, panel title with its unit, scale applied to the values)
    PANELS = (("nodes", "nodes (a fused group counts once)", 1.0),
              ("bytes", "est. memory traffic (MiB)", 1 / MIB),
              ("wall_s", "compile time of the round (ms)", 1e3))

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._labels: list[str] = []
        self._curves: list[pg.PlotDataItem] = []
        self._markers: list[pg.InfiniteLine] = []
        state.sig_step_changed.connect(self._on_step_changed)

    labels: Drawn[list[str]] = Drawn("One label per fusion step (x = 0, 1, …).")
    curves: Drawn[list[pg.PlotDataItem]] = Drawn("One curve per panel of ``PANELS``.")

    def draw(self, graph: Graph | None) -> None:
        series = round_series(graph) if graph is not None else {}
        self._labels = list(series.get("label", []))
        self._curves, self._markers = [], []
        if graph is None or not graph.rounds or not self._labels:
            self.show_message("No fusion rounds were recorded for this graph.")
            return
        self.plot_widget.clear()
        ticks = [[(i, label) for i, label in enumerate(self._labels)]]
        first = None
        for row, (key, title, scale) in enumerate(self.PANELS):
            plot = self.new_panel(row, title)
            plot.getAxis("bottom").setTicks(ticks)
            plot.getAxis("bottom").setStyle(showValues=row == len(self.PANELS) - 1)
            if first is None:
                first = plot
                # half a step of room each side, so the marker and end bars are not clipped
                plot.setXRange(-0.5, len(self._labels) - 0.5, padding=0)
            else:
                plot.setXLink(first)
            xs, values = list(range(len(series[key]))), [v * scale for v in series[key]]
            line = pg.mkPen(_SERIES_COLOR, width=2)
            if key == "wall_s":
                # Time belongs to a round, not to the change between steps: bars, no line
                # (the before/final steps have no round and stay empty).
                plot.addItem(pg.BarGraphItem(x=xs, height=values, width=0.3,
                                             brush=_SERIES_COLOR, pen=pg.mkPen(None)))
                line = None
            curve = plot.plot(xs, values, pen=line, symbol="o", symbolSize=7,
                              symbolBrush=_SERIES_COLOR)
            curve.sigPointsClicked.connect(self._on_points_clicked)
            self._curves.append(curve)
            marker = pg.InfiniteLine(angle=90, pen=pg.mkPen("#d81b60", width=2))
            plot.addItem(marker)
            self._markers.append(marker)
        self._on_step_changed(self._state.step)

    def marked_step(self) -> int | None:
        self.refresh()
        return round(self._markers[0].value()) if self._markers else None

    def _on_step_changed(self, step: int) -> None:
        if self.stale:  # drawing marks the state's step
            return
        for marker in self._markers:
            marker.setValue(min(max(step, 0), len(self._labels) - 1))

    def _on_points_clicked(self, _item, points, _ev) -> None:
        if len(points):
            self._state.set_step(round(points[0].pos().x()))


class BenchmarkChart(ChartPage):
    """Speedup of every benchmark-fusion decision; spill vetoes sit on a row of their own."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(state, parent)
        self._points: list[dict] = []
        self._scatter: pg.ScatterPlotItem | None = None

    points: Drawn[list[dict]] = Drawn(
        "``benchmark_points`` of the graph, in the order they are plotted.")
    scatter: Drawn[pg.ScatterPlotItem | None] = Drawn()

    def draw(self, graph: Graph | None) -> None:
        self._points = benchmark_points(graph) if graph is not None else []
        self._scatter = None
        if not self._points:
            self.show_message("No benchmark-fusion decisions were recorded for this graph.\n"
                              "(Inductor times candidate pairs only with "
                              "config.benchmark_fusion on a GPU.)")
            return
        self.plot_widget.clear()
        plot = self.new_plot(left="speedup (×): (ms a + ms b) / ms fused",
                             bottom="decision (round:rank)")
        # The key goes in the title: a legend inside the plot would cover points.
        plot.setTitle(_BENCH_KEY, color=self.foreground(), size="9pt")
        if len(self._points) <= _MAX_DECISION_TICKS:
            plot.getAxis("bottom").setTicks([[(i, f"r{p['round']}:{p.get('rank', '')}")
                                              for i, p in enumerate(self._points)]])
        plot.addItem(pg.InfiniteLine(pos=1.0, angle=0, pen=pg.mkPen("gray", style=Qt.PenStyle.DashLine)))
        self._scatter = pg.ScatterPlotItem(hoverable=True, tip=self._tip)
        spots = [self._spot(p) for p in self._points]
        # Columns with shared pens and brushes: per-spot dicts cost pyqtgraph ~0.2 ms each.
        styles = {color: (pg.mkPen(color), pg.mkBrush(color)) for _, _, color in spots}
        n = len(spots)
        self._scatter.setData(x=list(range(n)), y=[y for y, _, _ in spots],
                              symbol=[symbol for _, symbol, _ in spots],
                              pen=[styles[c][0] for _, _, c in spots],
                              brush=[styles[c][1] for _, _, c in spots],
                              size=10, data=list(range(n)))
        self._scatter.sigClicked.connect(self._on_clicked)
        plot.addItem(self._scatter)

    @staticmethod
    def _spot(point: dict) -> tuple[float, str, str]:
        """(y, symbol, color) of one decision."""
        if point.get("spill"):
            return 0.0, "t", SPILL_COLOR  # not timed: the x axis is its row
        fuse = point.get("fuse")
        symbol, color = {True: ("o", FUSED_COLOR), False: ("x", REJECTED_COLOR)}.get(
            fuse, ("x", UNDECIDED_COLOR))
        return point.get("speedup") or 0.0, symbol, color

    def _tip(self, x: float, y: float, data: int) -> str:
        p = self.points[data]
        verdict = f"spill veto ({p['spill']})" if p.get("spill") else {
            True: "fused", False: "not fused"}.get(p.get("fuse"), "undecided")
        speedup = f"{p['speedup']:.3g}×" if p.get("speedup") is not None else "not timed"
        times = " · ".join(f"{k[3:]} {p[k]:.4g} ms" for k in ("ms_a", "ms_b", "ms_fused")
                           if p.get(k) is not None)
        # pyqtgraph joins the tips of overlapping points: each is rich text of its own
        text = (f"round {p.get('round')}: {_group(p.get('a'))} + {_group(p.get('b'))}\n"
                f"speedup {speedup} → {verdict}" + (f"\n{times}" if times else ""))
        return tip(text, rich=True)

    def _on_clicked(self, _item, points, _ev) -> None:
        if len(points):
            p = self.points[points[0].data()]
            self._state.highlight_pair((tuple(p["a"]), tuple(p["b"])))


def _group(names) -> str:
    names = list(names or ())
    return "(" + ", ".join(names[:4]) + (", …" if len(names) > 4 else "") + ")"


class ChartsPane(QWidget):
    """The charts as tabs, following the shown graph; only the chart in front is drawn."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.kernel_chart = KernelTimeChart(state, self)
        self.round_chart = RoundChart(state, self)
        self.benchmark_chart = BenchmarkChart(state, self)
        self.timeline_chart = TimelineChart(state, self)
        self.step_chart = StepChart(state, self)  # the rank's train step: drawn per trace
        self.tabs = QTabWidget(self)
        self.tabs.addTab(self.kernel_chart, "Kernel time")
        self.tabs.addTab(self.round_chart, "Rounds")
        self.tabs.addTab(self.benchmark_chart, "Benchmark fusion")
        self.tabs.addTab(self.timeline_chart, "Timeline")
        self.tabs.addTab(self.step_chart, "Train step")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tabs)
        self._watcher = OnScreenWatcher(self, self._refresh_if_on_screen)
        state.sig_graph_changed.connect(self._on_graph_changed)
        self._on_graph_changed()

    def _on_graph_changed(self, _index: int = -1) -> None:
        graph = self._state.graph
        for chart in (self.kernel_chart, self.round_chart, self.benchmark_chart,
                      self.timeline_chart):
            chart.set_graph(graph)

    def _refresh_if_on_screen(self) -> None:
        """Draw the chart in front if the pane has come on screen since the graph changed."""
        chart = self.tabs.currentWidget()
        if isinstance(chart, ChartPage) and chart.stale and on_screen(chart):
            chart.refresh()
