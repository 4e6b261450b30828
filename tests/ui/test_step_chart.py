"""The charts' Train step tab: one rank's profiled step (compute and communication
lanes), on the committed 2-rank gloo capture of ``ddp_buckets.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QColor

from fusionviz.model.comms.step_overlap import overlap_line, step_overlap
from fusionviz.model.palette import graph_color
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.charts.pane import ChartsPane
from fusionviz.ui.charts.step import NOT_RECORDED
from fusionviz.ui.view_state import ViewState

RANKS = Path(__file__).resolve().parents[1] / "data" / "ranks"


@pytest.fixture(scope="module")
def rank1():
    return load_trace(RANKS / "cpu_ddp_buckets" / "rank1.json.gz")


def _pane(qtbot, trace) -> ChartsPane:
    state = ViewState()
    state.set_trace(trace)
    pane = ChartsPane(state)
    qtbot.addWidget(pane)
    pane.resize(1200, 420)
    pane.tabs.setCurrentWidget(pane.step_chart)
    return pane


def test_the_step_chart_draws_every_span_on_its_lane_in_graph_colors(qtbot, rank1):
    pane = _pane(qtbot, rank1)
    chart = pane.step_chart
    assert chart.has_data() and chart.title == overlap_line(step_overlap(rank1.step))
    assert sorted(chart.spans, key=id) == sorted(rank1.step.spans, key=id)
    brushes = chart.bars.opts["brushes"]
    for span, brush, row in zip(chart.spans, brushes, chart.rows):
        color = brush.color() if hasattr(brush, "color") else QColor(brush)
        if span.graph is not None:
            assert color == QColor(graph_color(span.graph)) and row == 0
        else:
            assert row >= (1 if span.lane == "communication" else 0)
    # collectives in flight together are on rows of their own: no two bars overlap
    for row in set(chart.rows):
        on_row = sorted((s.start_ms, s.end_ms) for s, r in zip(chart.spans, chart.rows)
                        if r == row)
        assert all(a[1] <= b[0] for a, b in zip(on_row, on_row[1:]))


def test_clicking_a_piece_shows_its_graph_and_outlines_it(qtbot, rank1):
    pane = _pane(qtbot, rank1)
    chart = pane.step_chart
    i = next(i for i, s in enumerate(chart.spans) if s.graph == 5)
    s = chart.spans[i]
    assert chart.bars.bar_at(QPointF((s.start_ms + s.end_ms) / 2, chart.rows[i])) == i
    chart.bars.sig_bar_clicked.emit(i)
    assert pane._state.graph_index == 5
    pens = chart.bars.opts["pens"]
    assert pens[i].width() == 2 and all(
        p.width() != 2 for j, p in enumerate(pens) if chart.spans[j].graph != 5)


def test_a_trace_without_a_step_says_so(qtbot):
    pane = _pane(qtbot, load_trace(RANKS / "cpu_comm_overlap" / "rank0.json.gz"))
    assert not pane.step_chart.has_data()
    assert pane.step_chart.message.text() == NOT_RECORDED


def test_a_gpu_rank_gets_the_devices_lanes_below_the_cpus(qtbot):
    trace = load_trace(RANKS / "nccl_ddp_gpt2" / "rank1.json.gz")
    pane = _pane(qtbot, trace)  # (held: the chart dies with it)
    chart = pane.step_chart
    assert chart.has_data() and chart.overlap.clock == "device"
    rows = {lane: {r for s, r in zip(chart.spans, chart.rows) if s.lane == lane}
            for lane in ("compute", "communication", "device compute",
                         "device communication")}
    assert max(rows["compute"]) < min(rows["communication"]) <= max(
        rows["communication"]) < min(rows["device compute"]) < min(
        rows["device communication"])
    assert [label for _, label in chart.ticks] == [
        "compute (CPU)", "communication", "device compute", "device comm."]
