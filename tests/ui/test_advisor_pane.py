"""The Advisor pane on a real GPU trace (#20): the shown graph's candidates ranked by
estimate, said to be unmeasured, each row's replay command copied on request, and the
table following the shown graph."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QGuiApplication

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "gpu_gpt2_train.json.gz"


def _front(window, qtbot):
    window.docks["advisor"].show()
    window.docks["advisor"].raise_()
    qtbot.waitUntil(lambda: window.advisor.table.rowCount() > 0, timeout=10000)
    return window.advisor


def test_the_advisor_ranks_the_shown_graphs_candidates(window, qtbot):
    assert window.open_trace(str(TRACE))
    pane = _front(window, qtbot)
    assert "not measured" in pane.header.text()
    assert "reduce-overhead" in pane.table.item(0, 4).text()  # launch-bound: CUDA graphs
    assert pane.table.item(0, 2).text().endswith(" ms") and pane.table.item(0, 1).text() == ""
    command = pane.command(0)
    assert command.startswith("fusionviz replay ") and "--graph 0 --mode reduce-overhead" in command
    pane.table.selectRow(0)
    pane.copy_command()
    assert QGuiApplication.clipboard().text() == command
    row = next(i for i, c in enumerate(pane.candidates) if c.kind == "pair")
    pane.table.setCurrentCell(row, 3)  # a pair: its nodes selected, on the graph too
    assert window.state.selected_nodes == pane.candidates[row].nodes
    first = [c.what for c in pane.candidates]
    window.state.set_graph(1)
    qtbot.waitUntil(lambda: pane.candidates and [c.what for c in pane.candidates] != first,
                    timeout=10000)
    assert pane.header.text().startswith("Graph 1 (backward)")
    assert "--graph 1" in pane.command(0)


def test_the_advisor_waits_until_it_is_shown(window, qtbot):
    window.docks["advisor"].hide()
    assert window.open_trace(str(TRACE))
    assert window.advisor.table.rowCount() == 0  # not ranked while hidden
    assert _front(window, qtbot).table.rowCount() > 0
