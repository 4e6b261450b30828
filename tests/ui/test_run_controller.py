"""RunController drives a real child process that speaks the progress protocol.

The child is a tiny Python script (no torch) standing in for the capture: it prints
``FUSIONVIZ {json}`` progress lines between ordinary output, writes a trace, and exits
the way the test asks. ``finalize_trace`` then settles the status, as for a capture.
"""

from __future__ import annotations

import os
import sys
import textwrap

import pytest

from fusionviz.model.run.protocol import describe_progress
from fusionviz.model.tracefile import io as trace_io
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.main_window import MainWindow
from fusionviz.ui.run.controller import RunController

FAKE_CHILD = textwrap.dedent('''
    import sys, time
    from dataclasses import replace
    from fusionviz.model.trace import Script
    from fusionviz.model.run.protocol import encode_progress, progress_writer
    emit = progress_writer()  # the controller's private pipe
    from fusionviz.model.synthetic import synthetic_trace
    from fusionviz.model.tracefile.io import save_trace
    out, how = sys.argv[1], sys.argv[2]
    emit(encode_progress("start", script="fake.py"))
    print("hello from the script", flush=True)
    print('FUSIONVIZ {"event":"round","graph":0,"round":"x"}', flush=True)  # forged
    print("FUSIONVIZ garbage", flush=True)
    emit(encode_progress("graph_start", graph=0, compile_id="0/0", kind="inference"))
    emit(encode_progress("round", graph=0, round=1, nodes=30))
    if how == "hang":
        import subprocess  # like Inductor's compile workers: a grandchild process
        worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        open(out + ".worker", "w").write(str(worker.pid))
        emit(encode_progress("round", graph=0, round=2, nodes=20))
        time.sleep(60)
    if how != "die":
        trace = synthetic_trace(40, seed=1, rounds=2)
        if how == "fail":  # like the capture: the script's exception is recorded
            tb = "Traceback (most recent call last):\\nRuntimeError: boom"
            trace = replace(trace, script=Script("fake.py", status="error", traceback=tb,
                                                 message="RuntimeError: boom"))
        if how == "full":  # its last write failed: the file is the one before it
            trace = replace(trace, script=Script("fake.py", status="running"))
        save_trace(trace, out)
    emit(encode_progress("graph_done", graph=0, nodes=40, kernels=12))
    failed = {"write_error": "no space left on device", "kept": 1} if how == "full" else {}
    emit(encode_progress("done", status="ok", graphs=1, **failed))
    if how in ("die", "fail"):  # die: before writing a trace; fail: after
        print("Traceback (most recent call last):\\nRuntimeError: boom", file=sys.stderr)
        sys.exit(3)
''')


@pytest.fixture
def child(tmp_path):
    path = tmp_path / "fake_child.py"
    path.write_text(FAKE_CHILD)

    def argv(script, out, *, how="ok", **_options):
        return [sys.executable, str(path), out, how]

    return argv


def run(qtbot, controller, how, tmp_path):
    progress, output = [], []
    controller.sig_progress.connect(progress.append)
    controller.sig_output.connect(output.append)
    with qtbot.waitSignal(controller.sig_finished, timeout=30000) as done:
        controller.start(str(tmp_path / "fake.py"), str(tmp_path / "out.json.gz"),
                         cache_dir=str(tmp_path / "cache"), how=how)
    return done.args[0], progress, output


def test_progress_output_and_trace_of_a_good_run(qtbot, child, tmp_path):
    controller = RunController(argv_builder=child)
    path, progress, output = run(qtbot, controller, "ok", tmp_path)
    assert [m["event"] for m in progress] == ["start", "graph_start", "round", "graph_done",
                                              "done"]
    assert "hello from the script" in output
    # what the script prints is its output, even when it looks like progress
    assert 'FUSIONVIZ {"event":"round","graph":0,"round":"x"}' in output
    assert "FUSIONVIZ garbage" in output
    trace = load_trace(path)
    assert trace.script.status == "ok" and len(trace.graphs[0].nodes) == 40
    assert not controller.running


def test_without_a_private_pipe_progress_comes_on_stdout_checked(qtbot, child, tmp_path,
                                                                 monkeypatch):
    """Where no pipe can be handed over (not POSIX), stdout carries the progress; a
    line of the wrong shape is still the script's output."""
    monkeypatch.setattr("fusionviz.ui.run.controller.open_channel", lambda: None)
    _path, progress, output = run(qtbot, RunController(argv_builder=child), "ok", tmp_path)
    assert [m["event"] for m in progress] == ["start", "graph_start", "round", "graph_done",
                                              "done"]
    assert 'FUSIONVIZ {"event":"round","graph":0,"round":"x"}' in output
    assert "hello from the script" in output


CHANNEL_CHILD = textwrap.dedent('''
    import os, subprocess, sys
    from fusionviz.model.run.protocol import encode_progress, progress_writer
    pipe = os.readlink(f"/proc/self/fd/{os.environ['FUSIONVIZ_PROGRESS_FD']}")
    emit = progress_writer()
    print("in the environment:", os.environ.get("FUSIONVIZ_PROGRESS_FD"), flush=True)
    look = ("import os, sys; d = '/proc/self/fd/'; print(any(os.path.lexists(d + f) and "
            "os.readlink(d + f) == sys.argv[1] for f in os.listdir(d)))")
    held = subprocess.run([sys.executable, "-c", look, pipe], close_fds=False,
                          capture_output=True, text=True)
    held = held.stdout.strip() or held.stderr
    print("a subprocess holds the pipe:", held, flush=True)
    emit(encode_progress("start", script="x.py"))
''')


def test_the_progress_pipe_is_private_to_the_child(qtbot, tmp_path):
    """The child takes the pipe out of its environment and keeps it from the
    script's subprocesses: only the child itself can speak on it."""
    path = tmp_path / "channel_child.py"
    path.write_text(CHANNEL_CHILD)
    controller = RunController(argv_builder=lambda s, o, **k: [sys.executable, str(path)])
    path_, progress, output = run(qtbot, controller, "ok", tmp_path)
    assert progress == [{"event": "start", "script": "x.py"}]
    assert "in the environment: None" in output
    assert "a subprocess holds the pipe: False" in output


def test_a_trace_the_child_could_not_finish_writing_says_so(qtbot, child, tmp_path):
    controller = RunController(argv_builder=child)
    path, _, _ = run(qtbot, controller, "full", tmp_path)
    script = load_trace(path).script
    assert script.status == "ok"
    assert script.message == "could not write the trace: no space left on device; graph 0 kept"
    # what the window reports, even where the settled status could not be written either
    assert controller.write_problem == ("ok: could not write the trace: no space left on "
                                        "device; graph 0 kept")


def test_a_crashing_script_still_yields_a_trace_with_its_traceback(qtbot, child, tmp_path):
    path, _, output = run(qtbot, RunController(argv_builder=child), "die", tmp_path)
    trace = load_trace(path)
    assert trace.script.status == "error" and trace.script.exit_code == 3
    assert "RuntimeError: boom" in trace.script.traceback
    assert "RuntimeError: boom" in output


def test_cancel_kills_the_child_and_its_workers(qtbot, child, tmp_path, alive):
    controller = RunController(argv_builder=child)
    with qtbot.waitSignal(controller.sig_progress, timeout=30000,
                          check_params_cb=lambda m: m.get("round") == 2):
        controller.start(str(tmp_path / "fake.py"), str(tmp_path / "out.json.gz"),
                         cache_dir=str(tmp_path / "cache"), how="hang")
    with qtbot.waitSignal(controller.sig_finished, timeout=30000) as done:
        controller.cancel()
    assert load_trace(done.args[0]).script.status == "cancelled"
    assert not controller.running
    worker = int((tmp_path / "out.json.gz.worker").read_text())
    qtbot.waitUntil(lambda: not alive(worker), timeout=5000)


DAEMON_SCRIPT = os.path.join(os.path.dirname(__file__), "..", "data", "scripts",
                             "starts_a_daemon.py")


@pytest.mark.parametrize("how", ["exit", "hang"])
def test_a_daemon_the_script_started_ends_with_the_run(qtbot, tmp_path, alive, how):
    """A double-forked daemon in a session of its own: ended when the child exits,
    and when the run is cancelled (found by the run's cookie in its environment)."""
    pidfile = tmp_path / "daemon.pid"
    controller = RunController(
        argv_builder=lambda s, o, **k: [sys.executable, DAEMON_SCRIPT, str(pidfile), how])
    # heard from the start: the child that exits may be found gone in the same event as
    # its last line is read (a loaded machine), so it finishes before a later wait begins
    finished = []
    controller.sig_finished.connect(finished.append)
    with qtbot.waitSignal(controller.sig_output, timeout=30000,
                          check_params_cb=lambda line: line == "daemon started"):
        controller.start(DAEMON_SCRIPT, str(tmp_path / "out.json.gz"),
                         cache_dir=str(tmp_path / "cache"))
    if how == "hang":
        assert not finished
        controller.cancel()
    qtbot.waitUntil(lambda: bool(finished), timeout=30000)
    qtbot.waitUntil(lambda: not alive(int(pidfile.read_text())), timeout=5000)


def test_a_missing_interpreter_reports_failure(qtbot, tmp_path):
    controller = RunController(argv_builder=lambda s, o, **k: [str(tmp_path / "nope")])
    with qtbot.waitSignal(controller.sig_failed, timeout=10000) as failed:
        controller.start("x.py", str(tmp_path / "out.json.gz"), cache_dir=str(tmp_path))
    assert "could not start" in failed.args[0]


def test_window_runs_a_script_shows_progress_then_the_graphs(qtbot, child, tmp_path, settings,
                                                            monkeypatch):
    reads = []  # whole-file reads of a trace: the window's load only (no settle rewrite)
    read_bytes = trace_io._read_bytes
    monkeypatch.setattr(trace_io, "_read_bytes", lambda *a: reads.append(a[0]) or read_bytes(*a))
    window = MainWindow(settings=settings)
    qtbot.addWidget(window)
    window.runner._argv_builder = child
    texts, placeholders = [], []
    window.runner.sig_progress.connect(lambda m: texts.append(window.progress.label.text()))
    window.runner.sig_progress.connect(lambda m: placeholders.append(window.graph_view.message))
    with qtbot.waitSignal(window.runner.sig_finished, timeout=30000):
        assert window.run_script(str(tmp_path / "fake.py"), how="fail")
    assert "graph 0: fusion round 1 -> 30 nodes" in texts
    assert any(m.startswith("graph 0: fusion round 1") for m in placeholders)
    assert window.progress.isHidden()
    assert window.state.trace is not None and len(window.state.trace.graphs) == 1
    assert "hello from the script" in window.output.toPlainText()
    assert window.errors and "RuntimeError: boom" in window.errors[-1]
    assert any("Script status: error" in line for line in window.notice_lines())
    assert len(reads) == 1, reads
    # the output belongs to the run's trace: opened again, it stays; another trace's
    # script output is not known, and the pane says so instead of showing this one's
    assert window.open_trace(window.runner.out_path)
    assert "hello from the script" in window.output.toPlainText()
    other = os.path.join(os.path.dirname(__file__), "..", "data", "cpu_replay_block.json.gz")
    assert window.open_trace(other)
    assert window.output.toPlainText().startswith(
        "No script output for cpu_replay_block.json.gz: a trace does not keep")


def test_progress_is_described_by_the_protocol_for_the_window_and_the_cli():
    assert describe_progress({"event": "graph_start", "graph": 2, "kind": "backward",
                              "compile_id": "0/0"}) == \
        "graph 2 (backward, compile id 0/0): compiling"
    assert describe_progress({"event": "round", "graph": 0, "round": 2, "nodes": 7}) == \
        "graph 0: fusion round 2 -> 7 nodes"
    assert describe_progress({"event": "timing", "graph": 1}) == "graph 1: timed"
    assert describe_progress({"event": "timing", "graph": 1, "compiled_ms": 0.5}) == \
        "graph 1: timed (compiled 0.500 ms)"
    assert describe_progress({"event": "done", "status": "ok", "graphs": 2}) == \
        "capture finished: ok, 2 graph(s)"
    assert describe_progress({"event": "variant", "index": 1, "of": 5, "label": "k=0"}) == \
        "capture 2/5: k=0"


@pytest.mark.parametrize("nproc", ["fifo", "999999999999", "x" * 100_000, "-3"])
def test_a_rank_count_file_that_is_not_ours_falls_back_to_the_traces_there(tmp_path, nproc):
    """The folder's rank count is read bounded: a FIFO, an absurd or a broken count
    does not hang or build a list of 10^12 paths; the traces present are counted."""
    import os

    from fusionviz.ui.run.controller import NPROC_FILE, _settle_ranks

    if nproc == "fifo":
        os.mkfifo(tmp_path / NPROC_FILE)
    else:
        (tmp_path / NPROC_FILE).write_text(nproc)
    with pytest.raises(OSError, match="no rank of train.py wrote a trace"):
        _settle_ranks(str(tmp_path), status="crashed", exit_code=1, stderr_tail="",
                      script="/somewhere/train.py")


@pytest.mark.torch  # starts a capture
def test_a_capture_that_will_not_exit_after_its_trace_is_ended_keeping_its_status(
        qtbot, tmp_path, monkeypatch):
    """The real capture child on a script whose left-behind thread blocks its exit: the
    window does not wait on it for ever, nor call the run crashed."""
    from fusionviz.model.run import runner

    monkeypatch.setattr(runner, "EXIT_AFTER_DONE_S", 1.0)
    script = os.path.join(os.path.dirname(DAEMON_SCRIPT), "lingers_at_exit.py")
    controller = RunController()
    with qtbot.waitSignal(controller.sig_finished, timeout=60000) as done:
        controller.start(script, str(tmp_path / "out.json.gz"), device="cpu",
                         cache_dir=str(tmp_path / "cache"))
    trace = load_trace(done.args[0])
    assert trace.script.status == "no_graphs"
    assert "did not exit after it finished" in trace.script.message


@pytest.mark.torch  # starts a capture
def test_a_rank_that_will_not_exit_after_its_trace_is_ended_and_only_it_says_so(
        qtbot, tmp_path, monkeypatch):
    """A job of two ranks where rank 1's left-behind thread blocks its exit: once both
    ranks wrote their final trace, the window ends the job; each rank keeps its status
    and only rank 1's trace says it was ended."""
    from fusionviz.model.run import runner
    from fusionviz.model.run.settle import LINGERED
    from fusionviz.ui.run.controller import RANKS

    # time for rank 0 to exit by itself on a loaded machine, not rank 1's ten minutes
    monkeypatch.setattr(runner, "EXIT_AFTER_DONE_S", 10.0)
    script = os.path.join(os.path.dirname(DAEMON_SCRIPT), "rank_lingers_at_exit.py")
    folder = tmp_path / "ranks"
    folder.mkdir()
    controller = RunController()
    with qtbot.waitSignal(controller.sig_finished, timeout=120000):
        controller.start(script, str(folder), job=RANKS, nproc=2, device="cpu",
                         timing=False, cache_dir=str(tmp_path / "cache"))
    scripts = [load_trace(p).script for p in runner.rank_paths(folder, 2)]
    assert [s.status for s in scripts] == ["no_graphs", "no_graphs"]
    assert [LINGERED in s.message for s in scripts] == [False, True]
