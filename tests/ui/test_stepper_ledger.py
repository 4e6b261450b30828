"""Round stepper ↔ ViewState, and the ledger: rows, filters, row clicks, export, why-not."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.names import Names
from fusionviz.model.queries import why_not_fused
from fusionviz.model.report.ledger_table import ledger_rows
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.ui.export import export_ledger
from fusionviz.ui.fusion_stepper import FusionStepper
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.ledger.pane import LedgerPane, row_pair
from fusionviz.ui.ledger.why_not import WhyNotDialog
from fusionviz.ui.view_state import ViewState

TRACE = synthetic_trace(250, seed=7, rounds=3)
GRAPH = TRACE.graphs[0]


@pytest.fixture
def state():
    s = ViewState()
    s.set_trace(TRACE, "synthetic")
    return s


def test_stepper_buttons_and_slider_walk_all_steps(state, qtbot):
    stepper = FusionStepper(state)
    qtbot.addWidget(stepper)
    steps = fusion_steps(GRAPH)
    assert stepper.slider.maximum() == len(steps) - 1
    assert not stepper.prev.isEnabled()
    for k in range(1, len(steps)):
        qtbot.mouseClick(stepper.next, Qt.MouseButton.LeftButton)
        assert state.step == k and stepper.slider.value() == k
        assert stepper.label.text().startswith(steps[k].label)
    assert not stepper.next.isEnabled()
    qtbot.mouseClick(stepper.first, Qt.MouseButton.LeftButton)
    assert state.step == 0
    stepper.slider.setValue(2)
    assert state.step == 2
    qtbot.mouseClick(stepper.last, Qt.MouseButton.LeftButton)
    assert state.step == len(steps) - 1
    state.set_step(1)  # someone else (a chart) moves the step: the slider follows
    assert stepper.slider.value() == 1


@pytest.fixture
def ledger(state, qtbot):
    pane = LedgerPane(state)
    qtbot.addWidget(pane)
    return pane


def test_ledger_shows_the_current_steps_round(ledger, state):
    assert ledger.shown_rows == []  # before fusion: no round
    for k, rnd in enumerate(GRAPH.rounds, start=1):
        state.set_step(k)
        assert ledger.shown_rows == ledger_rows(rnd, Names(GRAPH))
        rejected_scans = [v for v in rnd.verdicts if not v.ok]
        assert ledger.model.rowCount() == len(rnd.candidates) + len(rejected_scans)
        first = {ledger.model.headerData(c, Qt.Orientation.Horizontal): c
                 for c in range(ledger.model.columnCount())}
        assert ledger.model.index(0, first["rank"]).data() == "0"
        assert f"{len(rnd.candidates)} candidates" in ledger.title.text()


def test_ledger_filters_by_outcome_and_reason(ledger, state):
    state.set_step(1)
    ledger.set_filter("fused")
    fused = [c for c in GRAPH.rounds[0].candidates if c.outcome == "fused"]
    assert fused and len(ledger.shown_rows) == len(fused)
    assert {r["outcome"] for r in ledger.shown_rows} == {"fused"}
    ledger.set_filter("all", "no shared data")
    rnd = GRAPH.rounds[0]
    wanted = [c for c in (*rnd.candidates, *rnd.verdicts)
              if any("no shared data" in r.text for r in c.reasons)]
    assert wanted and len(ledger.shown_rows) == len(wanted)
    ledger.set_filter("all", "")
    assert len(ledger.shown_rows) == len(ledger_rows(rnd))


def test_row_click_highlights_the_pair_in_the_graph(ledger, state, qtbot):
    view = GraphView(state)
    qtbot.addWidget(view)
    state.set_step(2)
    ledger.set_filter("rejected")
    row = 0
    index = ledger.model.index(row, 0)
    rect = ledger.table.visualRect(index)
    qtbot.mouseClick(ledger.table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    cand = next(c for c in GRAPH.rounds[1].candidates
                if row_pair(ledger.shown_rows[row]) == (c.a, c.b))
    assert cand.outcome != "fused"
    assert state.pair == (cand.a, cand.b)
    ids = view.paint_data.index
    assert view.overlay.pair == ([ids[n] for n in cand.a], [ids[n] for n in cand.b])


def test_ledger_exports_csv_and_markdown(ledger, state, tmp_path):
    state.set_step(1)
    ledger.set_filter("fused")
    path = export_ledger(ledger.shown_rows, str(tmp_path / "ledger.csv"))
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(ledger.shown_rows) and {r["outcome"] for r in rows} == {"fused"}
    md = export_ledger(ledger.shown_rows, str(tmp_path / "ledger.md"))
    text = Path(md).read_text(encoding="utf-8")
    assert text.startswith("|") and "fused" in text


def test_why_not_dialog_reports_a_rejected_pair(qtbot):
    cand = next(c for c in GRAPH.rounds[0].candidates if c.outcome == "rejected")
    a, b = cand.a[0], cand.b[0]
    dialog = WhyNotDialog(GRAPH, a, b)
    qtbot.addWidget(dialog)
    why = why_not_fused(GRAPH, a, b)
    text = dialog.text.toPlainText()
    assert why.entries and why.summary.split()[0] in text
    assert cand.reasons[0].text in text
    assert not dialog.isModal()


def test_stepping_keeps_the_ledger_and_stepper_geometry_still(ledger, state, qtbot):
    """A step re-lays out nothing: the table keeps its columns (and so its header and
    viewport) on steps without a round, the title's text does not resize the pane."""
    stepper = FusionStepper(state)
    qtbot.addWidget(stepper)
    ledger.resize(2200, 300)  # the columns fit: no horizontal scroll bar
    ledger.show()
    stepper.show()
    qtbot.waitExposed(ledger)
    state.set_step(1)
    columns = list(ledger.model.columns)
    viewport = ledger.table.viewport().geometry()
    label_width = stepper.label.width()
    for k in (0, 2, 3, 0, 1):
        state.set_step(k)
        qtbot.wait(1)
        assert ledger.model.columns == columns
        assert ledger.table.viewport().geometry() == viewport
        assert stepper.label.width() == label_width
    state.set_step(0)
    assert ledger.shown_rows == [] and ledger.model.columnCount() == len(columns)


def test_a_selected_row_does_not_carry_over_to_another_round(ledger, state):
    state.set_step(1)
    ledger.select_row(2)
    assert [i.row() for i in ledger.table.selectionModel().selectedRows()] == [2]
    state.set_step(2)
    assert ledger.table.selectionModel().selectedRows() == []
    assert not ledger.table.currentIndex().isValid()
