"""The comparison window on real experiment folders (recorded CPU compiles) and on a
synthetic two-graph experiment: tables match ``compare.compare``, the two graph views
stay in step, the sweep chart has a point per variant, exports are valid."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

import pytest
from PySide6.QtWidgets import QFileDialog

from fusionviz.model.experiment import compare
from fusionviz.model.experiment.runs import read_experiment, sweep_rows
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Trace
from fusionviz.model.tracefile.io import load_trace, save_trace
from fusionviz.ui.compare import tables
from fusionviz.ui.compare.window import CompareWindow, export_comparison

EXPERIMENTS = sorted(p.parent for p in (Path(__file__).resolve().parents[1] / "data"
                                        / "experiments").glob("*/experiment.json"))


def two_graphs(rounds: int) -> Trace:
    """Two graphs with stable node names; fewer rounds → other verdicts and kernels."""
    g0 = synthetic_trace(60, seed=3, rounds=rounds).graphs[0]
    g1 = dataclasses.replace(synthetic_trace(40, seed=5, rounds=rounds).graphs[0], index=1)
    return dataclasses.replace(synthetic_trace(10, seed=1), graphs=(g0, g1))


def write_experiment(folder: Path, traces: dict[str, Trace], kind: str = "ab") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    variants = []
    for label, trace in traces.items():
        file = f"{label.replace(' ', '_')}.json.gz"
        save_trace(trace, folder / file)
        variants.append({"label": label, "trace": file, "status": "ok"})
    meta = {"kind": kind, "script": "model.py", "variants": variants, "report": "report.md"}
    (folder / "experiment.json").write_text(json.dumps(meta))
    (folder / "report.md").write_text("## a report\n")
    return folder


@pytest.fixture
def synthetic_folder(tmp_path) -> Path:
    return write_experiment(tmp_path / "exp", {"three rounds": two_graphs(3),
                                               "two rounds": two_graphs(2)})


def open_window(qtbot, folder) -> CompareWindow:
    window = CompareWindow(read_experiment(folder), str(folder))
    qtbot.addWidget(window)
    return window


def cells(table, row: int) -> list:
    return [table.item(row, j).value for j in range(table.columnCount())]


def table_rows(table) -> list[list]:
    return [cells(table, i) for i in range(table.rowCount())]


def test_the_recorded_experiments_are_there():
    names = {p.name for p in EXPERIMENTS}
    assert {"cpu_sweep_whatif_ops", "cpu_forbid_whatif_ops", "cpu_ab_whatif_ops"} <= names


@pytest.mark.parametrize("folder", EXPERIMENTS, ids=lambda p: p.name)
def test_each_experiment_opens_with_the_models_comparison(qtbot, folder):
    window = open_window(qtbot, folder)
    meta = json.loads((folder / "experiment.json").read_text())
    a, b = (load_trace(folder / v["trace"]) for v in meta["variants"][:2])
    expected = compare.compare(a, b, meta["variants"][0]["label"], meta["variants"][1]["label"])
    assert window.comparison == expected
    assert table_rows(window.metrics_table) == [list(r) for r in expected.rows]
    verdicts = [cells(window.verdict_table, i)[:5] for i in range(len(expected.verdicts))]
    assert [[r[0], r[1], r[3], r[4]] for r in verdicts] == [
        [v.graph, v.pair, v.outcome_a, v.outcome_b] for v in expected.verdicts]
    # what each side of the pair computes: one "ops · module" per group
    assert all(r[2].count("  ×  ") == 1 for r in verdicts)
    kernels = table_rows(window.kernel_table)
    assert [(k[0], k[2], k[4], k[6]) for k in kernels] == [
        (k.graph, ", ".join(k.nodes), k.ms_a, k.ms_b) for k in expected.kernels]
    assert window.pane_a.state.trace is window.variants[0].trace
    assert window.pane_b.state.trace is window.variants[1].trace
    assert "Metric" in window.report.toMarkdown() or not meta.get("report")


def test_forbid_experiment_says_what_the_rule_did(qtbot):
    window = open_window(qtbot, EXPERIMENTS[[p.name for p in EXPERIMENTS]
                                           .index("cpu_forbid_whatif_ops")])
    assert ("forbid op0 × op5: rejected while collecting candidates (3 times; last in graph 0 "
            "round 3): forbidden by a fusionviz rule (op0,op5); never fused") in window.summary.text()
    changed = {(r[1], r[3], r[4]) for r in table_rows(window.verdict_table)}
    assert ("op4 + op5", "not a candidate", "fused") in changed


def test_sweep_chart_has_one_point_per_variant_and_picks_b(qtbot):
    folder = next(p for p in EXPERIMENTS if p.name == "cpu_sweep_whatif_ops")
    window = open_window(qtbot, folder)
    rows = sweep_rows(window.variants[1:])
    chart = window.sweep_chart
    assert len(rows) == len(window.variants) - 1 == window.sweep_table.rowCount()
    for key, _label, _scale in chart.PANELS:
        assert chart.point_count(key) == sum(r[key] is not None for r in rows)
    assert chart.marked() == 0  # B starts as "after round 0"
    curve = chart.curves["kernels"]
    curve.sigPointsClicked.emit(curve, [curve.scatter.points()[3]], None)
    assert window.combo_b.currentText() == "after round 3" and chart.marked() == 3
    assert window.comparison.label_b == "after round 3"
    assert window.pane_b.state.trace is window.variants[4].trace


def test_selection_step_and_graph_stay_in_sync(qtbot, synthetic_folder, monkeypatch):
    from fusionviz.ui.compare import sync as compare_sync
    mappings = []
    node_mapping = compare_sync.node_mapping
    monkeypatch.setattr(compare_sync, "node_mapping",
                        lambda x, y: mappings.append((x, y)) or node_mapping(x, y))
    window = open_window(qtbot, synthetic_folder)
    a, b = window.pane_a, window.pane_b
    a.view.click_node("op7")
    assert b.state.selected_nodes == ("op7",)
    a.view.click_node("op12", add=True)
    assert b.state.selected_nodes == ("op7", "op12")
    b.view.click_node("op3")  # either side drives the other
    assert a.state.selected_nodes == ("op3",)
    assert len(mappings) == 2  # one mapping per direction, not one per click
    assert set(a.view._kernel_nodes()) >= {"op3"} and set(b.view._kernel_nodes()) >= {"op3"}
    a.stepper.go_first()
    assert b.state.step == 0
    a.stepper.go_next()
    assert b.state.step == 1
    a.stepper.go_last()  # A has one round more: B stops at its own last step
    assert b.state.step == len(b.state.steps) - 1
    a.state.set_graph(1)
    assert b.state.graph_index == 1


def test_clicking_a_kernel_delta_selects_it_on_both_sides(qtbot, synthetic_folder):
    window = open_window(qtbot, synthetic_folder)
    c = window.comparison
    assert c.added and c.removed  # the variant stopped a round earlier
    row = next(i for i in range(window.kernel_table.rowCount())
               if cells(window.kernel_table, i)[1] == "removed")
    k = c.kernels[tables.row_of(window.kernel_table, row)]
    window.kernel_table.cellClicked.emit(row, 0)
    assert window.pane_a.state.graph_index == k.graph == window.pane_b.state.graph_index
    assert window.pane_a.state.kernel == k.name_a and window.pane_b.state.kernel == ""


def test_clicking_a_verdict_change_highlights_its_pair(qtbot, synthetic_folder):
    window = open_window(qtbot, synthetic_folder)
    v = window.comparison.verdicts[-1]
    row = next(i for i in range(window.verdict_table.rowCount())
               if tables.row_of(window.verdict_table, i) == len(window.comparison.verdicts) - 1)
    window.verdict_table.cellClicked.emit(row, 1)
    assert window.pane_a.state.graph_index == v.graph
    assert window.pane_a.state.pair == tables.pair_groups(v.pair) == window.pane_b.state.pair


def test_swap_compares_the_other_way(qtbot, synthetic_folder):
    window = open_window(qtbot, synthetic_folder)
    before = window.comparison
    window.swap()
    assert (window.comparison.label_a, window.comparison.label_b) == (before.label_b,
                                                                       before.label_a)
    assert len(window.comparison.added) == len(before.removed)


def test_export_writes_markdown_and_csv(qtbot, synthetic_folder, tmp_path):
    window = open_window(qtbot, synthetic_folder)
    c = window.comparison
    md = Path(export_comparison(c, str(tmp_path / "report"), "title"))
    assert md.suffix == ".md"
    text = md.read_text()
    assert compare.table_markdown(c) in text and "### Verdicts that changed" in text
    lines = compare.table_markdown(c).splitlines()
    assert all(line.count("|") == 5 for line in lines)  # 4 columns in every row
    rows = list(csv.reader(io.StringIO(Path(export_comparison(c, str(tmp_path / "t.csv")))
                                       .read_text())))
    assert rows[0] == ["metric", c.label_a, c.label_b, "change"]
    assert [r[0] for r in rows[1:]] == [m for m, *_ in c.rows]
    assert rows[1 + 6][1:3] == [str(c.rows[6][1]), str(c.rows[6][2])]  # Kernels


def test_a_folder_without_an_experiment_is_refused(tmp_path):
    with pytest.raises(ValueError, match="not a readable experiment folder"):
        read_experiment(tmp_path)
    write_experiment(tmp_path / "one", {"only": synthetic_trace(10)})
    with pytest.raises(ValueError, match="needs two captures"):
        read_experiment(tmp_path / "one")


def test_pair_labels_parse_back_to_groups():
    assert tables.pair_groups("op0_op5 + op1") == (("op0", "op5"), ("op1",))
    assert tables.pair_groups("nonsense") is None


def test_zoom_and_scroll_follow_the_other_view(qtbot, synthetic_folder):
    window = open_window(qtbot, synthetic_folder)
    window.resize(1200, 800)
    window.show()
    qtbot.waitExposed(window)
    a, b = window.pane_a.view, window.pane_b.view
    a.zoom_in()
    a.zoom_in()
    assert b.transform().m11() == pytest.approx(a.transform().m11())
    a.centerOn(a.node_scene_pos("op40"))
    center = b.mapToScene(b.viewport().rect().center())
    assert (center - a.mapToScene(a.viewport().rect().center())).manhattanLength() < 2
    b.zoom_out()  # and the other way
    assert a.transform().m11() == pytest.approx(b.transform().m11())


def test_sweep_chart_draws_each_variants_spread_so_overlaps_read_as_noise(qtbot):
    from fusionviz.ui.charts.sweep import SweepChart

    chart = SweepChart()
    qtbot.addWidget(chart)
    chart.show()
    rows = [{"variant": f"after round {k}", "kernels": 5 - k, "est_bytes": 1e6,
             "compile_s": 1.0, "compiled_ms": 2.0 - 0.1 * k, "compiled_min_ms": 1.8 - 0.1 * k,
             "compiled_max_ms": 2.3 - 0.1 * k} for k in range(4)]
    chart.set_rows(rows)
    bars = chart.spread_bars
    assert bars is not None and list(bars.opts["x"]) == [0.0, 1.0, 2.0, 3.0]
    assert list(bars.opts["top"]) == pytest.approx([0.3] * 4)
    assert list(bars.opts["bottom"]) == pytest.approx([0.2] * 4)
    chart.set_rows([{**r, "compiled_min_ms": None, "compiled_max_ms": None} for r in rows])
    assert chart.spread_bars is None  # no samples recorded (older traces): no bars


def test_graph_rows_say_within_noise_where_the_timing_spreads_overlap():
    from dataclasses import replace

    from fusionviz.model.synthetic import synthetic_trace
    from fusionviz.model.trace import Timing

    def timed(ms, low, high):
        trace = synthetic_trace(40, seed=2, rounds=1)
        t = Timing(compiled_ms=ms, compiled_spread=(low, high))
        return replace(trace, graphs=tuple(replace(g, timing=t) for g in trace.graphs))

    a, close, far = timed(1.0, 0.9, 1.3), timed(1.1, 1.0, 1.4), timed(2.0, 1.9, 2.1)
    _headers, rows = tables.graph_rows(compare.compare(a, close), a, close)
    assert [r[10] for r in rows] == ["within noise"] * len(rows)
    _headers, rows = tables.graph_rows(compare.compare(a, far), a, far)
    assert [r[10] for r in rows] == [pytest.approx(100.0)] * len(rows)


def test_the_export_dialog_starts_in_the_users_folder(qtbot, synthetic_folder, tmp_path,
                                                      monkeypatch):
    asked = []
    monkeypatch.setattr(QFileDialog, "getSaveFileName",
                        lambda _p, _t, suggested, _f: (asked.append(suggested), ("", ""))[1])
    monkeypatch.chdir(tmp_path)
    open_window(qtbot, synthetic_folder).export_dialog()
    assert asked == [str(tmp_path / "comparison.md")]
