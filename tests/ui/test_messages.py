"""What the window says when things go wrong: the cause in the dialog's main text, no
claim of graphs that do not exist, and no stale progress left in the view."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from fusionviz.model.report.script_status import script_failure
from fusionviz.model.trace import Script

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_failure_says_what_happened_and_what_is_shown():
    syntax = Script(path="/w/bad.py", status="error", exit_code=1,
                    message="SyntaxError: invalid syntax (bad.py, line 3)",
                    traceback="Traceback …\nSyntaxError: invalid syntax")
    text = script_failure(syntax, 0)
    head, detail = text.split("\n\n", 1)
    assert head == ("bad.py ended with status 'error': SyntaxError: invalid syntax "
                    "(bad.py, line 3). No graph was captured before that.")
    assert detail.endswith("SyntaxError: invalid syntax")
    assert "The 2 graphs captured before that are shown." in script_failure(syntax, 2)
    assert "The 1 graph captured before that is shown." in script_failure(syntax, 1)


@pytest.mark.torch  # starts a capture
def test_a_script_with_a_syntax_error_run_from_the_window(window, qtbot, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import torch\ndef f(x)\n    return x\n")
    with qtbot.waitSignal(window.runner.sig_finished, timeout=60000):
        assert window.run_script(str(bad), device="cpu")
    message = window.errors[-1]
    head = message.split("\n\n")[0]
    assert "bad.py ended with status 'error'" in head and "SyntaxError" in head
    assert "No graph was captured" in head and "captured before that are shown" not in head
    box = next(b for b in window.findChildren(QMessageBox) if b.isVisible())
    assert "SyntaxError" in box.text()  # the cause, not behind "Show Details…"


def test_an_unreadable_trace_says_why_in_the_dialog(window, tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "something else"}\n')
    assert not window.open_trace(str(broken))
    box = next(b for b in window.findChildren(QMessageBox) if b.isVisible())
    assert box.text().startswith("Cannot open the trace: ") and str(broken) in box.text()


def test_a_failed_run_replaces_the_progress_in_the_empty_view(window):
    window.graph_view.set_message("starting hang.py… (Esc cancels; …)")
    window._on_run_failed("the capture was cancelled; no graph was captured\n\ndetails")
    assert window.graph_view.message == "the capture was cancelled; no graph was captured"


def test_a_trace_from_an_unverified_torch_says_so_in_the_notices(window, tmp_path):
    import dataclasses

    from fusionviz.model.tracefile.io import load_trace, save_trace

    trace = load_trace(DATA / "cpu_mlp_block.json.gz")
    save_trace(dataclasses.replace(trace, env={**trace.env, "torch": "2.16.0"}),
               tmp_path / "newer.json.gz")
    assert window.open_trace(str(tmp_path / "newer.json.gz"))
    assert any(line.startswith("Captured with torch 2.16.0, which fusionviz was not verified")
               for line in window.notice_lines())
    assert window.docks["notices"].isVisibleTo(window)


def test_a_quiet_script_is_said_to_be_running_not_left_on_stale_progress(qtbot, monkeypatch):
    from fusionviz.ui.run import controller as run
    from fusionviz.ui.run.controller import RunController, RunProgress, quiet_for

    monkeypatch.setattr(run, "QUIET_S", 0.5)
    progress = RunProgress(RunController())
    qtbot.addWidget(progress)
    progress.started("hang.py")
    progress._on_progress({"event": "timing", "graph": 0, "compiled_ms": 1.5})
    assert progress.label.text() == "graph 0: timed (compiled 1.500 ms)"
    qtbot.waitUntil(lambda: "the script is running" in progress.label.text(), timeout=5000)
    assert progress.label.text().startswith("graph 0: timed (compiled 1.500 ms) · the "
                                            "script is running, ")
    assert "since its last progress (Esc cancels)" in progress.label.text()
    assert (quiet_for(35.2), quiet_for(125)) == ("35 s", "2 min 05 s")


NO_GRAPH = Script(
    path="/w/ddp.py", status="no_graphs",
    message=("the script ran to the end but no graph reached Inductor: Dynamo recorded 2 "
             "graph breaks and compiled no graph. Try: compile the module inside "
             "DistributedDataParallel, DDP(torch.compile(model)), not "
             "torch.compile(DDP(model)).\nWhat Dynamo recorded:\n- graph break: Attempted "
             "to call function marked as skipped [in contextlib.py:105 __init__, from "
             "ddp.py:26] (×2)\nAlso try: run with TORCH_LOGS=graph_breaks."))


def test_a_message_of_several_lines_gives_its_first_line_then_the_rest_in_the_detail():
    head, detail = script_failure(NO_GRAPH, 0).split("\n\n", 1)
    assert head == ("ddp.py ended with status 'no_graphs': the script ran to the end but "
                    "no graph reached Inductor: Dynamo recorded 2 graph breaks and compiled "
                    "no graph. Try: compile the module inside DistributedDataParallel, "
                    "DDP(torch.compile(model)), not torch.compile(DDP(model)). No graph was "
                    "captured before that.")
    assert detail.splitlines() == NO_GRAPH.message.splitlines()[1:]
    asked = Script(path="/w/eager.py", status="no_graphs", message="does it call torch.compile?")
    assert script_failure(asked, 0) == ("eager.py ended with status 'no_graphs': does it call "
                                        "torch.compile? No graph was captured before that.")


def test_a_trace_without_graphs_says_why_in_the_view_and_line_by_line_in_the_notices(
        window, tmp_path):
    from fusionviz.model.trace import Trace
    from fusionviz.model.tracefile.io import save_trace

    save_trace(Trace(script=NO_GRAPH), tmp_path / "t.json.gz")
    assert window.open_trace(str(tmp_path / "t.json.gz")), window.errors
    assert window.graph_view.message == script_failure(NO_GRAPH, 0).split("\n\n")[0]
    shown = window.notices.toPlainText().splitlines()
    assert shown[0].endswith("not torch.compile(DDP(model)).")
    assert shown[1:] == NO_GRAPH.message.splitlines()[1:]  # each of its lines a line
