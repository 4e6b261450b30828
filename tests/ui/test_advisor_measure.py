"""Measuring in the Advisor pane (#20, items 3 and 4): a real CPU trace's graph replayed
and timed from the window (progress, the measured row first, its replay compared with the
baseline's in the comparison view), one pair tried from the Why Not dialog and cancelled,
and a measurement made on an H100 (``fusionviz advise --measure --json``) opened beside
its trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.model.advisor.measure import NOTHING_TO_MEASURE, VERDICTS
from fusionviz.ui.advisor.pane import WIN, WORSE
from fusionviz.ui.compare.window import CompareWindow

DATA = Path(__file__).resolve().parents[1] / "data"
CPU = DATA / "cpu_replay_block.json.gz"  # tests/data/scripts/replay_block.py, captured here
ADVICE = DATA / "advice"


def _advisor(window, qtbot, graph: int):
    window.state.set_graph(graph)
    window.docks["advisor"].show()
    window.docks["advisor"].raise_()
    qtbot.waitUntil(lambda: window.advisor.table.rowCount() > 0, timeout=10000)
    return window.advisor


@pytest.mark.torch  # starts a capture
def test_measure_replays_the_best_candidate_and_compares_it(window, qtbot):
    assert window.open_trace(str(CPU))
    pane = _advisor(window, qtbot, 1)
    # settings are measured first (here the threshold that decided its refusals)
    first = next(c for c, _r in pane.rows if c.measurable and c.kind == "config")
    pane.count.setValue(1)
    window.advise_measure(every_graph=True)  # graph 0: nothing to measure; then graph 1
    qtbot.waitUntil(lambda: pane.run is not None and pane.run.graph.index == 1,
                    timeout=30000)
    assert pane.measured[0].problem == NOTHING_TO_MEASURE
    assert pane.progress.isVisible() and not pane.measure_button.isEnabled()
    assert not pane.all_button.isEnabled()
    assert pane.progress.maximum() == 3  # baseline, the candidate, baseline
    qtbot.waitUntil(lambda: pane.run is None, timeout=300000)
    assert pane.progress.isHidden() and pane.measure_button.isEnabled()
    assert sorted(pane.measured) == [0, 1] and not pane.queue
    # the whole step: the one change measured, on the graph it was measured on
    assert pane.step_table.isVisible() and pane.step_table.rowCount() == 1
    assert pane.step_table.item(0, 0).text() == first.what
    assert pane.step_table.item(0, 2).text().startswith("graph 1: ")
    assert pane.step_table.item(0, 3).text() == first.apply
    candidate, measured = pane.rows[0]
    assert candidate.try_args == first.try_args and measured is not None, pane.status.text()
    assert measured.verdict in VERDICTS and measured.verdict != "not measured", measured
    assert pane.table.item(0, 1).text().startswith(measured.verdict)
    assert "1 candidate(s) replayed" in pane.header.text()
    assert "(wall time (CPU, noisy)" in pane.header.text()
    assert all(r is None for _c, r in pane.rows[1:])  # the rest: estimates only
    if measured.verdict in ("not generated", "failed"):
        return  # nothing timed to compare (said in its row)
    pane.table.setCurrentCell(0, 0)
    pane.compare()
    qtbot.waitUntil(lambda: bool(window.experiments.compare_windows), timeout=20000)
    view = window.experiments.compare_windows[-1]
    assert isinstance(view, CompareWindow)
    labels = [v.label for v in view.experiment.variants]
    assert labels[0] == "baseline replay" and labels[1].endswith(candidate.what)


@pytest.mark.torch  # starts a capture
def test_a_pair_tried_from_why_not_can_be_cancelled(window, qtbot):
    assert window.open_trace(str(CPU))
    pane = _advisor(window, qtbot, 1)
    window.state.select_nodes(("op0", "op2"))
    dialog = window.why_not_fused()
    dialog.try_button.click()
    assert pane.run is not None
    qtbot.waitUntil(lambda: "started" in pane.status.text(), timeout=30000)
    pane.cancel()
    qtbot.waitUntil(lambda: pane.run is None, timeout=60000)
    measured = pane.measured[1]
    assert measured.problem or all(r.verdict == "not measured" for r in measured.results)
    assert "op0" in pane.rows[0][0].nodes and "op2" in pane.rows[0][0].nodes
    dialog.close()


def test_advice_measured_on_an_h100_opens_beside_its_trace(window, qtbot):
    assert window.open_trace(str(ADVICE / "gpu_llama_train.json.gz"))
    assert window.open_advice(str(ADVICE / "advice.json"))
    pane = _advisor(window, qtbot, 0)
    measured = [r for _c, r in pane.rows if r is not None]
    assert [r.verdict for r in measured[:2]] == ["within noise", "within noise"]
    assert "not generated" in [r.verdict for r in measured]
    assert pane.rows[len(measured)][1] is None  # then the unmeasured, by estimate
    assert "4 candidate(s) replayed, 2 timed (device time, 8 replay(s) at a time" \
        in pane.header.text()
    window.state.set_graph(1)
    qtbot.waitUntil(lambda: pane.header.text().startswith("Graph 1"), timeout=10000)
    row, measured = pane.rows[0]
    # recorded before the NaN fix as "changed results"; rebuilt from its replay
    # arguments, though this fusionviz ranks no such candidate any more
    assert measured.verdict == "changed results" and row.mode == "max-autotune-no-cudagraphs"
    assert pane.table.item(0, 1).foreground().color() == WORSE
    assert WIN != WORSE
    # the whole step: the mode, measured on both graphs, is one row; a pair is its graph's
    steps = pane.step_table
    results = sum(len(m.results) for m in pane.measured.values())
    assert steps.isVisible() and steps.rowCount() == results - 1  # the mode counted once
    mode = next(row for row in range(steps.rowCount())
                if "max-autotune" in steps.item(row, 0).text())
    assert steps.item(mode, 2).text().startswith("graph 0: within noise; graph 1: changed")
    assert steps.item(mode, 1).text() == "none"  # no win, nothing slower
    pair = next(row for row in range(steps.rowCount())
                if steps.item(row, 0).text().startswith("graph 0: "))
    steps.setCurrentCell(pair, 0)
    assert window.state.graph.index == 0


def test_advice_of_another_trace_is_refused(window):
    assert window.open_trace(str(CPU))
    assert not window.open_advice(str(ADVICE / "advice.json"))
    assert "another trace" in window.errors[-1]
