"""The comparison window's Compiled vs eager tab on a real GPU trace (HF BERT
inference) against a copy whose compiled forward is faster and whose eager wall samples
disagree: the tab's table is the model's, noisy figures are tinted, the headline says
what moved, the exports carry the callables."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fusionviz.model.experiment import compare
from fusionviz.model.experiment.compare_entries import entry_table
from fusionviz.model.experiment.runs import Experiment, Variant
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.compare import tables
from fusionviz.ui.compare.window import CompareWindow, export_comparison

BERT = Path(__file__).resolve().parents[1] / "data" / "gpu_bert_fp16_infer.json.gz"


@pytest.fixture(scope="module")
def pair():
    a = load_trace(BERT)
    e = a.entries[0]
    fast = dataclasses.replace(e.compiled_forward,
                               device=tuple(0.8 * d for d in e.compiled_forward.device),
                               wall=tuple(0.8 * w for w in e.compiled_forward.wall))
    spread = dataclasses.replace(e.eager_forward, wall=tuple(
        w * (1.3 if i % 2 else 0.7) for i, w in enumerate(e.eager_forward.wall)))
    b = dataclasses.replace(a, entries=(dataclasses.replace(
        e, compiled_forward=fast, eager_forward=spread),))
    return a, b


@pytest.fixture
def window(qtbot, pair):
    a, b = pair
    experiment = Experiment("ab", "bert.py", (Variant("default", "a.json.gz", a),
                                              Variant("tuned", "b.json.gz", b)), "")
    w = CompareWindow(experiment, "")
    qtbot.addWidget(w)
    return w


def texts(table, row):
    return [table.item(row, j).text() for j in range(table.columnCount())]


def test_the_tab_shows_the_models_entries(window, pair):
    c = window.comparison
    assert c == compare.compare(*pair, "default", "tuned")
    table = window.entry_table
    headers, rows = entry_table(c.entries)
    assert [table.horizontalHeaderItem(j).text() for j in range(table.columnCount())] == headers
    assert [[table.item(i, j).value for j in range(len(headers))]
            for i in range(table.rowCount())] == [list(r) for r in rows]
    assert window.tabs.tabText(window.tabs.indexOf(window.entry_tab)) == "Compiled vs eager (1)"
    device = texts(table, 0)
    assert device[:3] == ["BertModel (module)", "forward", "device"]
    assert device[5] == "-20.0%" and device[8] == "within noise"
    assert table.item(0, 5).foreground().color() == tables.FASTER
    assert device[9].endswith("slower") and device[10].endswith("faster")
    assert table.item(0, 10).foreground().color() == tables.FASTER
    assert "Medians per call" in window.entry_note.text()


def test_noisy_figures_are_tinted_with_why(window):
    table = window.entry_table
    wall = next(i for i in range(table.rowCount()) if texts(table, i)[2] == "wall")
    eager_b = table.item(wall, 7)
    assert eager_b.foreground().color() == tables.NOISY
    assert eager_b.toolTip().startswith("noisy: ") and "samples, noisy" in eager_b.toolTip()
    assert "noisy: eager B" in texts(table, wall)[11]
    assert table.item(wall, 6).foreground().color() != tables.NOISY  # A's samples agree


def test_the_headline_the_metrics_and_the_graphs_say_what_eager_is(window):
    summary = window.summary.text()
    assert "▸ BertModel forward, device: compiled 2.943 → 2.355 ms (-20.0%)" in summary
    metrics = {window.metrics_table.item(i, 0).text(): i
               for i in range(window.metrics_table.rowCount())}
    row = metrics[compare.BASELINE]
    assert texts(window.metrics_table, row)[1:] == ["your program", "your program", ""]
    assert "your program" in window.metrics_table.item(row, 1).toolTip()
    eager = window.metrics_table.item(metrics["Eager wall time (ms)"], 1).toolTip()
    assert eager == compare.eager_note(window.comparison)
    graphs = window.graph_table
    headers = [graphs.horizontalHeaderItem(j).text() for j in range(graphs.columnCount())]
    assert dict(zip(headers, texts(graphs, 0)))["eager is"] == "your program"


def test_swapping_compares_the_entries_the_other_way(window):
    window.swap()
    assert texts(window.entry_table, 0)[5] == "+25.0%"


def test_exports_carry_the_entries(window, tmp_path):
    c = window.comparison
    md = Path(export_comparison(c, str(tmp_path / "report"), "title")).read_text()
    assert compare.ENTRIES_TITLE in md and "| BertModel (module) | forward | device |" in md
    csv_text = Path(export_comparison(c, str(tmp_path / "t.csv"))).read_text()
    assert "BertModel (module) forward, device: compiled (ms)" in csv_text


def test_no_entries_says_why(qtbot):
    folder = Path(__file__).resolve().parents[1] / "data" / "experiments" / "cpu_ab_whatif_ops"
    from fusionviz.model.experiment.runs import read_experiment

    w = CompareWindow(read_experiment(folder), str(folder))
    qtbot.addWidget(w)
    assert w.entry_table.rowCount() == 0
    assert w.tabs.tabText(w.tabs.indexOf(w.entry_tab)) == "Compiled vs eager (0)"
    assert w.entry_note.text().startswith("Neither trace timed")
