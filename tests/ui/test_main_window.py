"""The main window end to end: open traces, switch graphs, step, errors, settings, notices."""

from __future__ import annotations

import dataclasses
import gzip
import os
import zlib
from pathlib import Path

import pytest
from PySide6.QtCore import QMimeData, QPointF, Qt, QUrl
from PySide6.QtGui import QDropEvent
from PySide6.QtWidgets import QApplication

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Capabilities, Problem
from fusionviz.model.tracefile.io import load_trace, save_trace
from fusionviz.ui.ledger.why_not import WhyNotDialog
from fusionviz.ui.main_window import MainWindow
from fusionviz.ui.theme import is_dark

DATA_DIR = Path(__file__).resolve().parents[1] / "data"


def test_open_every_graph_and_step_through_every_round(window, any_trace_path, qtbot):
    assert window.open_trace(str(any_trace_path)), window.errors
    trace = load_trace(any_trace_path)
    for gi, graph in enumerate(trace.graphs):
        item = window.graphs_list.topLevelItem(gi)
        window.graphs_list.setCurrentItem(item)
        assert window.state.graph_index == gi
        assert item.text(2) == str(len(graph.nodes))
        steps = fusion_steps(graph)
        window.stepper.go_first()
        for k, step in enumerate(steps):
            assert window.state.step == k
            assert window.stepper.label.text().startswith(step.label)
            view = window.graph_view  # big graphs open with repeated blocks folded:
            boxes = view.folding.view.boxes  # a box joins no group's region
            for group in step.groups:
                outside = [v for v in view.folding.shown(group) if v not in boxes]
                first = view.shown_as(group[0])
                assert set(view.group_of_node(group[0])) == (set(outside) if first not in boxes
                                                             else {first})
            window.stepper.go_next()
        assert window.state.step == len(steps) - 1


def test_arrow_home_end_keys_step(window, synthetic_path, qtbot):
    window.open_trace(str(synthetic_path))
    window.activateWindow()
    window.graph_view.setFocus()
    n = len(fusion_steps(window.state.graph))
    qtbot.keyClick(window.graph_view, Qt.Key.Key_Right)
    assert window.state.step == 1
    qtbot.keyClick(window.graph_view, Qt.Key.Key_End)
    assert window.state.step == n - 1
    qtbot.keyClick(window.graph_view, Qt.Key.Key_Left)
    assert window.state.step == n - 2
    qtbot.keyClick(window.graph_view, Qt.Key.Key_Home)
    assert window.state.step == 0


def test_clicking_a_node_selects_it_and_shows_its_kernel(window, synthetic_path, qtbot):
    window.open_trace(str(synthetic_path))
    view = window.graph_view
    view.resetTransform()
    view.centerOn(view.node_scene_pos("op20"))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.mapFromScene(view.node_scene_pos("op20") + QPointF(30, 0)))
    assert window.state.selected_nodes == ("op20",)
    assert window.state.kernel == view.kernel_of["op20"].name


def test_why_not_fused_with_two_selected_nodes(window, synthetic_path):
    window.open_trace(str(synthetic_path))
    graph = window.state.graph
    cand = next(c for c in graph.rounds[0].candidates if c.outcome == "rejected")
    window.graph_view.click_node(cand.a[0])
    window.graph_view.click_node(cand.b[0], add=True)
    window.actions_by_name["why_not"].trigger()
    dialogs = window.findChildren(WhyNotDialog)
    assert len(dialogs) == 1 and dialogs[0].isVisible() and not dialogs[0].isModal()
    assert cand.reasons[0].text in dialogs[0].text.toPlainText()
    window.state.select_nodes(("op1",))
    window.why_not_fused()
    assert "Select two nodes" in window.errors[-1]


def _core_end(gz: bytes) -> int:
    """The fewest bytes of gzip stream ``gz`` that hold its whole first line (the core:
    format 3 keeps the table of strings there, most of a small trace's bytes)."""
    unzip, out = zlib.decompressobj(wbits=31), b""
    for n in range(0, len(gz), 64):
        out += unzip.decompress(gz[n:n + 64])
        if b"\n" in out:
            return n + 64
    raise AssertionError("no line end")


def test_a_truncated_trace_opens_as_far_as_it_goes_and_says_so(window, synthetic_path,
                                                               tmp_path, qtbot):
    cut = tmp_path / "cut.json.gz"
    data = synthetic_path.read_bytes()
    cut.write_bytes(data[: (_core_end(data) + len(data)) // 2])  # in the part lines
    assert window.open_trace(str(cut))  # the core line is whole: the graphs are there
    assert any("gzip stream ends early" in line for line in window.notice_lines())
    qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
    assert any(str(cut) in e for e in window.errors)  # the cut part, met by the reader
    assert QApplication.activeModalWidget() is None


@pytest.mark.parametrize("damage", ["garbage", "empty", "wrong json"])
def test_broken_trace_shows_an_error_and_the_window_lives_on(window, synthetic_path,
                                                             tmp_path, damage):
    bad = tmp_path / "bad.json.gz"
    bad.write_bytes({"garbage": b"\x00\x01 not a trace", "empty": b"",
                     "wrong json": gzip.compress(b'{"format": "other"}')}[damage])
    assert not window.open_trace(str(bad))
    assert str(bad) in window.errors[-1]
    assert QApplication.activeModalWidget() is None  # nothing blocks the event loop
    assert window.open_trace(str(synthetic_path))  # and it still works
    assert window.state.trace is not None


def test_notices_and_environment_are_shown(window, tmp_path):
    trace = dataclasses.replace(
        synthetic_trace(30, seed=1),
        env={"torch": "2.13.0", "triton": "3.5", "device_name": "NVIDIA H100"},
        capabilities=Capabilities(installed=("rounds",), missing=("benchmark_fusion",)),
        warnings=("something odd",),
        problems=(Problem("kernels", "source not found"),),
    )
    path = tmp_path / "t.json.gz"
    save_trace(trace, path)
    window.open_trace(str(path))
    lines = window.notice_lines()
    assert "Not recorded on this torch: benchmark_fusion" in lines
    assert "something odd" in lines and "kernels: source not found" in lines
    assert "benchmark_fusion" in window.notices.toPlainText()
    assert window.notice_label.text() == "⚠ 3 notices"
    assert window.env_label.text() == "torch 2.13.0 · triton 3.5 · NVIDIA H100"


def test_dock_layout_and_recent_files_persist(qtbot, settings, synthetic_path):
    first = MainWindow(settings=settings)
    qtbot.addWidget(first)
    first.show()
    first.open_trace(str(synthetic_path))
    first.docks["charts"].hide()
    first.close()
    second = MainWindow(settings=settings)
    qtbot.addWidget(second)
    second.show()
    assert second.docks["charts"].isHidden() and not second.docks["ledger"].isHidden()
    assert second.recent_files() == [os.path.abspath(synthetic_path)]


def test_default_settings_never_touch_the_users_files(qtbot, isolated_settings):
    window = MainWindow()
    qtbot.addWidget(window)
    window.save_layout()
    assert window.settings.fileName().startswith(str(isolated_settings))


def test_dark_theme_toggles_and_is_remembered(window, settings):
    try:
        window.toggle_dark()
        assert is_dark()
        assert window.graph_view.backgroundBrush().color().lightness() < 80
        assert str(settings.value("dark")).lower() == "true"
    finally:
        window.set_dark(False)
    assert window.graph_view.backgroundBrush().color().lightness() > 200


def test_dropping_a_trace_file_opens_it(window, synthetic_path):
    mime = QMimeData()
    mime.setUrls([QUrl.fromLocalFile(str(synthetic_path))])
    event = QDropEvent(QPointF(10, 10), Qt.DropAction.CopyAction, mime,
                       Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier)
    window.dropEvent(event)
    assert window.state.path == str(synthetic_path)


def test_find_bar_searches_the_graph(window, synthetic_path, qtbot):
    window.open_trace(str(synthetic_path))
    window.actions_by_name["find"].trigger()
    assert window.find_bar.isVisible()
    qtbot.keyClicks(window.find_edit, "op12")
    qtbot.keyClick(window.find_edit, Qt.Key.Key_Return)
    hits = [window.graph_view.paint_data.names[i] for i in window.graph_view.overlay.hits]
    assert hits and all("op12" in h for h in hits)
    assert window.find_hits.text().strip().startswith(str(len(hits)))
    window.actions_by_name["cancel"].setEnabled(True)  # Esc also cancels a running capture
    qtbot.keyClick(window.find_edit, Qt.Key.Key_Escape)
    assert not window.find_bar.isVisible()
    window.actions_by_name["find"].trigger()
    next(a for a in window.find_bar.actions() if a.text() == "✕").trigger()
    assert not window.find_bar.isVisible()


def test_app_start_opens_a_trace_or_captures_the_bundled_example(window, synthetic_path,
                                                                  monkeypatch):
    from fusionviz.model.run import runner
    from fusionviz.ui.app import start

    start(window, str(synthetic_path), None)
    assert window.state.path == str(synthetic_path)
    started = []
    monkeypatch.setattr(window, "run_script", lambda path, **o: started.append((path, o)))
    start(window, None, {"mode": "max-autotune"})
    assert started == [(runner.default_example(), {"mode": "max-autotune"})]
    start(window, "model.py", {"device": "cpu"})
    assert started[-1] == ("model.py", {"device": "cpu"})


def _panes(window) -> dict:
    """What the panes show of the current graph."""
    window.docks["kernels"].raise_()
    QApplication.processEvents()
    return {
        "graph": window.state.graph_index,
        "listed": window.graphs_list.currentItem().text(0),
        "kernels": sorted(window.kernel_table.shown_names()),
        "kernel": window.state.kernel,
        "step": window.state.step,
    }


def test_a_trace_opens_on_the_graph_asked_for_as_after_a_switch(window, monkeypatch):
    """``fusionviz TRACE --graph 1``: the backward graph is shown without the forward
    one built first; the panes show what a switch to it shows. A graph the trace lacks
    is said, and the first one shown."""
    from fusionviz.ui.app import start

    path = str(DATA_DIR / "gpu_gpt2_train.json.gz")
    built = []
    window.state.sig_graph_changed.connect(built.append)
    start(window, path, None, 1)
    assert built == [1]  # the forward graph was never shown
    direct = _panes(window)
    assert direct["listed"].startswith("#1 backward")
    assert direct["graph"] == 1 and direct["kernels"] == sorted(
        k.name for k in window.state.trace.graphs[1].kernels)
    assert window.open_trace(path)
    window.state.set_graph(1)
    assert _panes(window) == direct
    assert window.open_trace(path, graph=7)
    assert window.state.graph_index == 0
    assert window.errors[-1] == "gpu_gpt2_train.json.gz has no graph 7 (graphs 0 to 1): " \
        "showing graph 0."


def test_traces_without_graphs_or_nodes_open_quietly(window, tmp_path):
    from fusionviz.model.trace import Graph, Script, Trace

    empty = Trace(script=Script("s.py", status="no_graphs", message="nothing compiled"))
    bare = Trace(graphs=(Graph(index=0),))
    for k, trace in enumerate((empty, bare)):
        path = tmp_path / f"t{k}.json.gz"
        save_trace(trace, path)
        assert window.open_trace(str(path)), window.errors
        window.stepper.go_next()
        window.graph_view.fit()
        window.graph_view.find("op")
        image = window.graph_view.render_image()
        assert not image.isNull()
    assert "Script status: no_graphs" not in " ".join(window.notice_lines())  # bare is ok
    assert window.ledger.title.text().startswith("<b>before fusion")
    assert window.open_trace(str(tmp_path / "t0.json.gz"), graph=1)  # --graph 1, no graph
    assert window.errors == ["t0.json.gz has no graph 1 (no graphs)."]


def test_graph_and_ledger_shortcuts(window, tmp_path, qtbot):
    from fusionviz.model.tracefile.io import load_trace as load

    path = sorted(DATA_DIR.glob("*.json.gz"))
    multi = next((p for p in path if len(load(p).graphs) > 1), None)
    if multi is None:
        pytest.skip("no recorded trace with several graphs")
    window.open_trace(str(multi))
    n = len(window.state.trace.graphs)
    window.actions_by_name["next_graph"].trigger()
    assert window.state.graph_index == 1
    window.actions_by_name["prev_graph"].trigger()
    window.actions_by_name["prev_graph"].trigger()
    assert window.state.graph_index == n - 1
    window.actions_by_name["filter_ledger"].trigger()
    assert window.ledger.reason.hasFocus()


def test_kernels_only_collapses_every_graph_and_back(window, qtbot):
    path = DATA_DIR / "gpu_mlp_block.json.gz"
    assert window.open_trace(str(path))
    full = window.state.trace
    window.state.set_graph(1)
    window.state.set_step(2)
    action = window.actions_by_name["kernels_only"]
    qtbot.keyClick(window, Qt.Key.Key_K, Qt.KeyboardModifier.ControlModifier)
    assert window.kernels_only and action.isChecked()
    graph = window.state.graph
    assert window.state.graph_index == 1 and not graph.rounds
    assert len(graph.nodes) == len(full.graphs[1].final_groups)
    assert window.stepper.label.text().startswith("final")
    assert "(kernels only)" in window.windowTitle()
    fused = max(graph.nodes, key=lambda n: len(n.members))
    window.graph_view.click_node(fused.name)
    kernel = next(k for k in graph.kernels if fused.name in k.nodes)
    assert window.state.kernel == kernel.name  # the kernel pane shows its source
    window.toggle_kernels_only()
    assert not window.kernels_only and not action.isChecked()
    assert window.state.trace is full and window.state.graph_index == 1
    assert window.state.step == 2  # the step the user was at, not "before fusion"
    window.toggle_kernels_only()
    assert window.open_trace(str(path)) and not window.kernels_only  # a new open: full


def test_kernels_only_and_back_keeps_the_opened_blocks_and_the_step(window):
    assert window.open_trace(str(DATA_DIR / "gpu_gpt2_train.json.gz"))
    view = window.graph_view
    run = next(k for k, box in view.folding.view.boxes.items() if box.run is not None)
    view.expand_box(run)  # blocks.0-11 ×12 → twelve blocks
    block = next(k for k, box in view.folding.view.boxes.items() if box.path == "blocks.4")
    view.expand_box(block)
    opened = view.folding.snapshot()
    window.state.set_step(3)
    window.graph_view.click_node(window.state.graph.nodes[5].name)
    selected = window.state.selected_nodes
    window.toggle_kernels_only()
    window.toggle_kernels_only()
    assert view.folding.snapshot() == opened and window.state.step == 3
    assert window.state.selected_nodes == selected
    assert any(box.path == "blocks.3" for box in view.folding.view.boxes.values())
