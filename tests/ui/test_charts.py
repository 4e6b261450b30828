"""ChartsPane: kernel-time bars, per-round progress, benchmark speedups, empty-data messages."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QPointF, Qt
from PySide6.QtGui import QColor

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.palette import kernel_colors
from fusionviz.model.report.chart_data import benchmark_points, kernel_times, round_series
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Graph, Kernel, Node, Trace
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.charts.pane import SPILL_COLOR, ChartsPane
from fusionviz.ui.view_state import ViewState


def make_pane(qtbot, trace: Trace) -> ChartsPane:
    state = ViewState()
    state.set_trace(trace)
    pane = ChartsPane(state)
    qtbot.addWidget(pane)
    pane.resize(800, 600)
    return pane


@pytest.fixture
def pane(qtbot):
    return make_pane(qtbot, synthetic_trace(80, seed=3, rounds=3))


def test_one_bar_per_timed_kernel_in_its_kernel_color(pane):
    graph = pane._state.graph
    times = sorted(kernel_times(graph), key=lambda t: -t[1])  # slowest first
    chart = pane.kernel_chart
    assert chart.has_data() and chart.names == [name for name, _, _ in times]
    colors = kernel_colors(graph.kernels)
    brushes = chart.bars.opts["brushes"]
    assert [b.color() if hasattr(b, "color") else QColor(b) for b in brushes] == [
        QColor(colors[name]) for name in chart.names]
    assert list(chart.bars.opts["width"]) == [ms for _, ms, _ in times]


def test_clicking_a_bar_selects_its_kernel_and_outlines_it(pane, qtbot):
    chart = pane.kernel_chart
    row = next(i for i, n in enumerate(chart.names) if chart.names.count(n) == 1)
    with qtbot.waitSignal(pane._state.sig_kernel_changed) as blocker:
        chart.on_bar_clicked(row)
    assert blocker.args == [chart.names[row]]
    widths = [pen.width() for pen in chart.bars.opts["pens"]]
    assert widths[row] == 2 and widths.count(2) == 1


def test_a_real_mouse_click_on_a_bar_selects_its_kernel(pane, qtbot):
    pane.show()
    qtbot.waitExposed(pane)
    chart = pane.kernel_chart
    ms = list(chart.bars.opts["width"])  # drawn now: let the plot take its size first
    qtbot.wait(20)
    view = chart.plot_widget
    top, bottom = chart.bars.getViewBox().viewRange()[1]
    row = min(4, int(bottom))  # a bar on screen (as many are shown as have room)
    assert top <= row <= bottom
    at = view.mapFromScene(chart.bars.mapToScene(QPointF(ms[row] / 2, row)))
    with qtbot.waitSignal(pane._state.sig_kernel_changed) as blocker:
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=at)
    assert blocker.args == [chart.names[row]]


def test_bar_hit_test_maps_positions_to_rows(pane):
    bars = pane.kernel_chart.bars
    ms = list(bars.opts["width"])
    assert bars.row_at(QPointF(ms[3] / 2, 3.1)) == 3
    assert bars.row_at(QPointF(ms[3] * 1.5, 3.0)) is None  # right of the bar
    assert bars.row_at(QPointF(ms[3] / 2, 3.5)) is None  # between two bars
    assert bars.row_at(QPointF(0.0, len(ms) + 1.0)) is None


def test_round_chart_has_one_point_per_step_and_marks_the_current_step(pane):
    graph = pane._state.graph
    chart = pane.round_chart
    series = round_series(graph)
    assert chart.labels == list(series["label"])
    assert len(chart.labels) == len(fusion_steps(graph))  # the stepper's steps
    for curve, (key, _, scale) in zip(chart.curves, chart.PANELS, strict=True):
        xs, ys = curve.getData()
        assert list(xs) == list(range(len(chart.labels)))
        assert list(ys) == pytest.approx([v * scale for v in series[key]])
    assert chart.marked_step() == 0
    pane._state.set_step(2)
    assert chart.marked_step() == 2


def test_clicking_a_round_point_sets_the_step(pane):
    chart = pane.round_chart
    curve = chart.curves[0]
    point = curve.scatter.points()[3]
    curve.sigPointsClicked.emit(curve, [point], None)
    assert pane._state.step == 3


def test_benchmark_chart_plots_every_decision_and_marks_spills(pane):
    points = benchmark_points(pane._state.graph)
    chart = pane.benchmark_chart
    assert chart.has_data() and points
    spots = chart.scatter.points()
    assert len(spots) == len(points)
    for spot, point in zip(spots, points, strict=True):
        assert (spot.symbol() == "t") == bool(point["spill"])
        if point["spill"]:
            assert spot.brush().color() == QColor(SPILL_COLOR)
        else:
            assert spot.pos().y() == pytest.approx(point["speedup"])
    timed = next(i for i, p in enumerate(points) if p["ms_fused"] is not None)
    tip = chart._tip(0, 0, timed)
    assert f"{points[timed]['speedup']:.3g}×" in tip and f"fused {points[timed]['ms_fused']:.4g} ms" in tip


def test_clicking_a_decision_highlights_its_pair(pane):
    chart = pane.benchmark_chart
    spot = chart.scatter.points()[0]
    chart.scatter.sigClicked.emit(chart.scatter, [spot], None)
    point = chart.points[0]
    assert pane._state.pair == (tuple(point["a"]), tuple(point["b"]))


def test_a_trace_without_timings_rounds_or_benchmarks_says_so(qtbot):
    graph = Graph(index=0, nodes=(Node("op0", "SchedulerNode", "pointwise"),),
                  kernels=(Kernel("cpp_fused_relu_0", "cpp", "cpp", nodes=("op0",)),))
    pane = make_pane(qtbot, Trace(graphs=(graph,)))
    for chart, words in ((pane.kernel_chart, "No per-kernel device times"),
                         (pane.round_chart, "No fusion rounds"),
                         (pane.benchmark_chart, "No benchmark-fusion decisions")):
        assert not chart.has_data()
        assert words in chart.message.text()
    pane._state.set_trace(synthetic_trace(30, seed=1))
    assert pane.kernel_chart.has_data() and pane.round_chart.has_data()


def test_no_trace_at_all_shows_messages(qtbot):
    pane = make_pane(qtbot, None)
    assert not pane.kernel_chart.has_data() and not pane.round_chart.has_data()


def test_recorded_traces_chart_what_they_recorded(qtbot, any_trace_path):
    """Each recorded trace in tests/data (see conftest), and a synthetic one."""
    pane = make_pane(qtbot, load_trace(any_trace_path, strict=True))
    for index, graph in enumerate(pane._state.trace.graphs):
        pane._state.set_graph(index)
        assert pane.kernel_chart.has_data() == bool(kernel_times(graph))
        assert pane.round_chart.has_data() == bool(graph.rounds)
        assert pane.benchmark_chart.has_data() == bool(benchmark_points(graph))
        if graph.rounds:
            assert len(pane.round_chart.curves[0].getData()[0]) == len(round_series(graph)["label"])


def test_a_hidden_pane_draws_nothing_until_its_data_is_read(qtbot, monkeypatch):
    import fusionviz.ui.charts.pane as charts

    drawn = []
    for cls in (charts.KernelTimeChart, charts.RoundChart, charts.BenchmarkChart):
        monkeypatch.setattr(cls, "draw", lambda self, g, d=cls.draw: drawn.append(self) or d(self, g))
    pane = make_pane(qtbot, synthetic_trace(120, seed=2, rounds=3))
    assert drawn == [] and pane.kernel_chart.stale
    pane._state.set_step(2)  # no marker to move yet: nothing drawn either
    assert drawn == []
    assert pane.round_chart.marked_step() == 2  # reading draws, at the current step
    assert drawn == [pane.round_chart]
    names = pane.kernel_chart.names  # so does reading what a chart draws (``Drawn``)
    assert names and drawn == [pane.round_chart, pane.kernel_chart]
    assert pane.kernel_chart.names is names and len(drawn) == 2  # once
    with pytest.raises(AttributeError, match="names is drawn, not set"):
        pane.kernel_chart.names = []


def test_in_the_window_only_the_chart_in_front_is_drawn(qtbot, settings, synthetic_path):
    from fusionviz.ui.main_window import MainWindow

    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.resize(1400, 900)
    window.show()
    qtbot.waitExposed(window)
    pane = window.charts_pane
    charts = (pane.kernel_chart, pane.round_chart, pane.benchmark_chart)
    assert window.open_trace(str(synthetic_path))
    # First-run layout: the ledger's tab is in front of the charts' tab.
    assert [c.stale for c in charts] == [True, True, True]
    window.docks["charts"].raise_()
    qtbot.waitUntil(lambda: not pane.kernel_chart.stale)
    assert pane.round_chart.stale and pane.benchmark_chart.stale
    pane.tabs.setCurrentWidget(pane.round_chart)
    assert not pane.round_chart.stale and pane.benchmark_chart.stale
    window.state.set_step(1)
    assert pane.round_chart.marked_step() == 1
    window.docks["ledger"].raise_()
    window.state.set_graph(1 if len(window.state.trace.graphs) > 1 else 0)
    window.state.set_trace(window.state.trace)  # a new graph while the charts are behind
    assert all(c.stale for c in charts)
    window.docks["charts"].raise_()
    qtbot.waitUntil(lambda: not pane.round_chart.stale)
    assert pane.kernel_chart.stale and pane.round_chart.marked_step() == 0


def test_a_graph_of_many_kernels_charts_its_slowest(qtbot):
    from fusionviz.ui.charts.pane import MAX_BARS

    pane = make_pane(qtbot, synthetic_trace(1500, seed=3, rounds=3))
    times = kernel_times(pane._state.graph)
    assert len(times) > MAX_BARS
    chart = pane.kernel_chart
    slowest = sorted(times, key=lambda t: -t[1])[:MAX_BARS]
    assert chart.names == [name for name, _, _ in slowest]
    plot = chart.plot_widget.getItem(0, 0)
    assert f"the {MAX_BARS} slowest of {len(times)} kernels" in plot.titleLabel.text
    pane.show()
    qtbot.waitExposed(pane)
    top, bottom = plot.getViewBox().viewRange()[1]  # rows with room for their labels
    row_px = plot.getViewBox().height() / (bottom - top)
    assert row_px >= 16 and top >= -0.5 and bottom <= MAX_BARS - 0.5


def test_the_timeline_shows_compute_running_while_the_all_reduce_is_in_flight(qtbot):
    """A real 2-rank capture (gloo, CPU): the matmul and tanh kernels ran between the
    all-reduce's issue and its wait, after the sink_waits pass moved the wait."""
    from pathlib import Path

    from fusionviz.model.comms.collective_times import collective_times

    trace = load_trace(Path(__file__).resolve().parents[1] / "data" / "ranks"
                       / "cpu_comm_overlap" / "rank0.json.gz")
    pane = make_pane(qtbot, trace)
    pane.tabs.setCurrentWidget(pane.timeline_chart)
    chart = pane.timeline_chart
    graph = trace.graphs[0]
    assert chart.has_data() and chart.data["clock"] == "wall"
    assert chart.names == [k.name for k in graph.kernels]  # every kernel, in call order
    (span,) = chart.data["spans"]
    (t,) = collective_times(graph)
    assert span["node"] == t.node and abs((span["end"] - span["start"]) - t.span_ms) < 1e-9
    lanes = dict(zip(chart.names, chart.bars._lanes))
    assert {n for n, lane in lanes.items() if lane == 1} == {
        k.name for k in graph.kernels if "c10d_functional" in k.name}
    between = len(t.kernels_between)
    title = chart.plot_widget.getItem(0, 0).titleLabel.text
    assert f"{between} compute kernels ran while one was" in title and between == 2
    # clicking a compute bar that ran while the all-reduce was in flight selects it
    mm = chart.names.index(t.kernels_between[0])
    x = (chart.bars._x0[mm] + chart.bars._x1[mm]) / 2
    assert chart.bars.bar_at(QPointF(x, 0.0)) == mm
    chart.bars.sig_bar_clicked.emit(mm)
    assert pane._state.kernel == t.kernels_between[0]


def test_the_timeline_of_a_trace_without_kernel_start_times_says_so(qtbot):
    from pathlib import Path

    old = Path(__file__).resolve().parents[1] / "data" / "cpu_mlp_block.json.gz"
    pane = make_pane(qtbot, load_trace(old))
    pane.tabs.setCurrentWidget(pane.timeline_chart)
    assert not pane.timeline_chart.has_data()
    assert "No kernel start and end times" in pane.timeline_chart.message.text()


def test_the_timeline_draws_each_launch_of_a_kernel_launched_several_times(qtbot):
    import dataclasses
    from pathlib import Path

    trace = load_trace(Path(__file__).resolve().parents[1] / "data" / "ranks"
                       / "cpu_comm_overlap" / "rank0.json.gz")
    graph = trace.graphs[0]
    first = graph.kernels[0]
    twice = dataclasses.replace(first, calls=2, launches=((first.start_ms, first.end_ms),
                                                          (1.2, 1.25)))
    graph = dataclasses.replace(graph, kernels=(twice, *graph.kernels[1:]))
    pane = make_pane(qtbot, dataclasses.replace(trace, graphs=(graph,)))
    pane.tabs.setCurrentWidget(pane.timeline_chart)
    chart = pane.timeline_chart
    assert chart.names.count(first.name) == 2  # one bar per launch, not one long bar
    i = len(chart.names) - 1 - chart.names[::-1].index(first.name)
    assert (chart.bars._x0[i], chart.bars._x1[i]) == (1.2, 1.25)
    assert chart.bars.bar_at(QPointF(1.22, 0.0)) == i
    assert "launch 2 of 2" in chart.bars._tips[i]
