"""Experiments from the explorer: menus and context menus build the right command line,
the run goes through the window's RunController, its comparison opens, Cancel kills it.

The child is a fake ``fusionviz experiment`` (no torch): it prints protocol lines,
including ``variant`` events, and writes an experiment folder made of the committed
traces of a real CPU experiment; the argv it stands in for is recorded.
"""

from __future__ import annotations

import dataclasses
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import QPointF
from PySide6.QtGui import QContextMenuEvent
from PySide6.QtWidgets import QApplication, QToolBar

from fusionviz.model.experiment.runs import experiment_argv
from fusionviz.model.tracefile.io import load_trace, save_trace
from fusionviz.ui.ledger.pane import row_pair
from fusionviz.ui.main_window import MainWindow
from fusionviz.ui.run.controller import EXPERIMENT

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = DATA / "experiments" / "cpu_forbid_whatif_ops"
SCRIPT = DATA / "scripts" / "whatif_ops.py"

FAKE_EXPERIMENT = textwrap.dedent('''
    import shutil, subprocess, sys, time
    from fusionviz.model.run.protocol import encode_progress, progress_writer
    emit = progress_writer()  # the controller's private pipe
    how, src, out = sys.argv[1:4]
    emit(encode_progress("variant", index=0, of=2, label="baseline"))
    emit(encode_progress("round", graph=0, round=1, nodes=5, variant=0))
    print("compiling...", flush=True)
    if how == "hang":  # like run_capture: a capture child in a session of its own
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                  start_new_session=True)
        open(out + "/worker.pid", "w").write(str(worker.pid))
        emit(encode_progress("variant", index=1, of=2, label="variant"))
        time.sleep(60)
    if how == "die":
        print("Traceback (most recent call last):\\nRuntimeError: boom", file=sys.stderr)
        sys.exit(3)
    emit(encode_progress("variant", index=1, of=2, label="variant"))
    shutil.copytree(src, out, dirs_exist_ok=True)
''')


@pytest.fixture
def window(qtbot, settings, tmp_path):
    """The explorer on the recorded baseline, its script pointing at this checkout."""
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    trace = load_trace(RECORDED / "a.json.gz")
    trace = dataclasses.replace(trace, script=dataclasses.replace(trace.script,
                                                                  path=str(SCRIPT)))
    save_trace(trace, tmp_path / "baseline.json.gz")
    assert w.open_trace(str(tmp_path / "baseline.json.gz"))
    return w


@pytest.fixture
def fake(window, tmp_path):
    """Swap the child for the fake: ``argvs`` are the command lines the real child would
    have had, ``how`` says how the fake ends (ok, die, hang)."""
    child = tmp_path / "fake_experiment.py"
    child.write_text(FAKE_EXPERIMENT)
    fake = SimpleNamespace(argvs=[], how="ok")

    def builder(script, out, **options):
        fake.argvs.append(experiment_argv(script, out, **options))
        return [sys.executable, str(child), fake.how, str(RECORDED), out]

    window.runner._argv_builder = builder
    return fake


def finish(qtbot, window, start) -> None:
    with qtbot.waitSignal(window.runner.sig_finished, timeout=30000):
        assert start()


def flags(argv: list[str]) -> list[str]:
    return argv[argv.index("--json-progress"):]


def test_sweep_from_the_menu_runs_and_opens_the_comparison(qtbot, window, fake):
    texts = []
    window.runner.sig_progress.connect(lambda _m: texts.append(window.progress.label.text()))
    finish(qtbot, window, lambda: window.actions_by_name["sweep_rounds"].trigger() or True)
    argv = fake.argvs[-1]
    assert "--sweep-rounds" in argv and argv[argv.index("experiment") + 1] == str(SCRIPT)
    assert flags(argv)[flags(argv).index("--device") + 1] == "cpu"  # as the trace was
    assert "[1/2 baseline] graph 0: fusion round 1 -> 5 nodes" in texts
    assert window.runner.job is EXPERIMENT and window.progress.isHidden()
    assert "compiling..." in window.output.toPlainText()
    [view] = window.experiments.compare_windows
    assert [v.label for v in view.variants] == ["baseline", "fusionviz.forbid=op0,op5"]
    assert window.state.trace.script.path == str(SCRIPT)  # the explorer keeps its trace


def test_force_uses_the_two_selected_nodes(qtbot, window, fake):
    action = window.actions_by_name["force_pair"]
    assert not action.isEnabled() and "Select two nodes" in action.toolTip()
    window.graph_view.click_node("op2")
    window.graph_view.click_node("op3", add=True)
    assert action.isEnabled() and "(op2 × op3)" in action.text()
    finish(qtbot, window, lambda: action.trigger() or True)
    argv = fake.argvs[-1]
    assert argv[argv.index("--force") + 1] == "op2,op3" and argv.count("--force") == 1
    assert "--forbid" not in argv and "--sweep-rounds" not in argv


def test_forbid_from_a_ledger_row_context_menu(qtbot, window, fake):
    window.state.set_step(1)  # round 1's ledger
    rows = window.ledger.shown_rows
    assert rows
    menus = []
    window.ledger.sig_row_menu.connect(lambda row, pos: menus.append(row))
    table = window.ledger.table
    table.customContextMenuRequested.emit(table.visualRect(table.model().index(0, 0)).center())
    assert menus == [rows[0]]
    menu = window.experiments.ledger_menu(rows[0])
    forbid = next(a for a in menu.actions() if a.text().startswith("Forbid"))
    side_a, side_b = row_pair(rows[0])
    assert forbid.isEnabled() and f"{side_a[0]} × {side_b[0]}" in forbid.text()
    finish(qtbot, window, lambda: forbid.trigger() or True)
    x, y = fake.argvs[-1][fake.argvs[-1].index("--forbid") + 1].split(",")
    assert x in side_a and y in side_b  # one node of each side names the pair
    for menu in QApplication.topLevelWidgets():
        if menu.isVisible() and menu.inherits("QMenu"):
            menu.close()


def test_right_click_on_a_second_node_makes_a_pair(qtbot, window, fake):
    view = window.graph_view
    view.click_node("op0")
    shown = []
    view.sig_node_menu.connect(lambda name, _p: shown.append(name))
    window.show()
    qtbot.waitExposed(window)
    view.fit()
    pos = view.mapFromScene(view.node_scene_pos("op4") + QPointF(30, 10))
    event = QContextMenuEvent(QContextMenuEvent.Reason.Mouse, pos, view.viewport().mapToGlobal(pos))
    QApplication.sendEvent(view.viewport(), event)
    assert shown == ["op4"] and window.state.selected_nodes == ("op0", "op4")
    menu = window.experiments.graph_menu("op4")
    texts = [a.text() for a in menu.actions() if a.isEnabled()]
    assert "Force op0 × op4 (recompile and compare)" in texts and "Why Not Fused?" in texts
    for widget in QApplication.topLevelWidgets():
        if widget.inherits("QMenu"):
            widget.close()


def test_ab_dialog_passes_typed_settings(qtbot, window, fake):
    dialog = window.experiments.ab_dialog()
    assert dialog is not None and not dialog.isModal()
    assert dialog.preset.currentText() == "default vs max-autotune-no-cudagraphs"
    assert "max_autotune=True" in dialog.side_b.toPlainText()
    dialog.preset.setCurrentText("custom settings")
    dialog.side_b.setPlainText("max_fusion_size=1\n# a comment\nepilogue_fusion=False")
    finish(qtbot, window, lambda: dialog.run_button.click() or True)
    argv = fake.argvs[-1]
    assert [argv[i + 1] for i, x in enumerate(argv) if x == "--ab"] == [
        "max_fusion_size=1", "epilogue_fusion=False"]
    assert "--ab-base" not in argv


def test_ab_dialog_refuses_a_bad_line_and_flips_recorded_flags(qtbot, window, fake):
    dialog = window.experiments.ab_dialog()
    assert "loop_ordering_after_fusion: True vs False" in dialog.presets
    dialog.side_b.setPlainText("just words")
    dialog.run_button.click()
    assert "not a key=value" in dialog.error.text() and not fake.argvs
    dialog.close()


def test_keep_spills_needs_a_gpu_trace(qtbot, window, fake, tmp_path):
    action = window.actions_by_name["keep_spills"]
    assert not action.isEnabled() and "compiled for the CPU's C++ backend" in action.toolTip()
    assert not window.experiments.keep_spills() and not fake.argvs
    trace = window.state.trace
    gpu = dataclasses.replace(trace, graphs=tuple(dataclasses.replace(g, device="cuda:0")
                                                  for g in trace.graphs))
    save_trace(gpu, tmp_path / "gpu.json.gz")
    window.open_trace(str(tmp_path / "gpu.json.gz"))
    assert action.isEnabled()
    finish(qtbot, window, lambda: action.trigger() or True)
    argv = fake.argvs[-1]
    assert "--keep-spills" in argv and argv[argv.index("--device") + 1] == "cuda"


def test_experiments_are_disabled_without_a_runnable_script(qtbot, settings, tmp_path):
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    sweep = w.actions_by_name["sweep_rounds"]
    assert not sweep.isEnabled() and "Open a trace" in sweep.toolTip()
    trace = load_trace(RECORDED / "a.json.gz")
    moved = dataclasses.replace(trace, script=dataclasses.replace(trace.script,
                                                                  path="/elsewhere/model.py"))
    save_trace(moved, tmp_path / "moved.json.gz")
    w.open_trace(str(tmp_path / "moved.json.gz"))
    assert not sweep.isEnabled() and "not on this machine: /elsewhere/model.py" in sweep.toolTip()
    assert not w.experiments.sweep_rounds() and "not on this machine" in w.errors[-1]
    assert not w.runner.running


def test_open_experiment_folder_and_a_bad_one(qtbot, window, tmp_path):
    view = window.experiments.open_experiment(str(RECORDED))
    # A tab of the explorer's window, in front, not a second window over it.
    assert view is not None and window.views.currentWidget() is view and not view.isWindow()
    assert window.statusBar().currentMessage().startswith("ab experiment (2 captures) "
                                                          f"opened from {RECORDED}")
    assert window.open_path(str(RECORDED))  # a folder dropped or given on the command line
    assert len(window.experiments.compare_windows) == 2 and window.views.count() == 3
    assert window.experiments.open_experiment(str(tmp_path)) is None
    assert "Cannot open the experiment" in window.errors[-1]
    window.views.tabCloseRequested.emit(2)  # the tab's close button
    qtbot.waitUntil(lambda: len(window.experiments.compare_windows) == 1)
    assert window.views.count() == 2 and window.views.currentIndex() == 1
    window.close()  # the explorer takes its comparisons with it
    assert not view.isVisible() and not window.experiments.compare_windows


def test_an_experiment_opened_alone_fills_the_explorer_with_its_baseline(qtbot, settings):
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    view = w.experiments.open_experiment(str(RECORDED))
    assert w.views.currentWidget() is view
    assert w.state.path == str(RECORDED / "a.json.gz")
    w.show()
    assert view.isVisible() and not w.docks["ledger"].isVisible()  # the whole window
    w.views.setCurrentIndex(0)
    assert w.docks["ledger"].isVisible() and w.docks["graphs"].isVisible()


def test_a_child_that_dies_reports_why(qtbot, window, fake):
    fake.how = "die"
    with qtbot.waitSignal(window.runner.sig_failed, timeout=30000) as failed:
        window.experiments.sweep_rounds()
    assert "without results" in failed.args[0] and "RuntimeError: boom" in failed.args[0]
    assert window.errors and not window.experiments.compare_windows


def test_cancel_kills_the_experiment_and_its_captures(qtbot, window, fake, tmp_path, alive):
    fake.how = "hang"
    out = tmp_path / "exp"
    out.mkdir()
    with qtbot.waitSignal(window.runner.sig_progress, timeout=30000,
                          check_params_cb=lambda m: m.get("index") == 1):
        window.runner.start(str(SCRIPT), str(out), job=EXPERIMENT, kind="sweep")
    worker = int((out / "worker.pid").read_text())
    assert alive(worker)
    with qtbot.waitSignal(window.runner.sig_failed, timeout=30000) as failed:
        window.actions_by_name["cancel"].trigger()
    assert "cancelled" in failed.args[0] and not window.runner.running
    qtbot.waitUntil(lambda: not alive(worker), timeout=5000)
    assert not window.experiments.compare_windows


def test_open_b_in_the_explorer(qtbot, window):
    view = window.experiments.open_experiment(str(RECORDED))
    bar = view.findChild(QToolBar, "compare_toolbar")
    next(a for a in bar.actions() if a.text() == "Open B in Explorer").trigger()
    assert window.state.path == str(RECORDED / "b.json.gz")
    assert window.state.trace.config.get("fusionviz.forbid") == "op0,op5"


def test_variants_compile_with_the_mode_of_the_explored_capture(qtbot, window, fake):
    window._last_script = (str(SCRIPT), {"mode": "max-autotune-no-cudagraphs"})
    finish(qtbot, window, window.experiments.sweep_rounds)
    argv = fake.argvs[-1]
    assert argv[argv.index("--mode") + 1] == "max-autotune-no-cudagraphs"
