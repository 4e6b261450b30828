"""Run a fusionviz child (a capture or an experiment) through QProcess; report its
progress as signals and in a widget.

A ``Job`` says what the child is: its argv builder (``runner.capture_argv`` or
``experiments.experiment_argv``), where its output goes by default and how to settle
that output once the child is gone (``finalize_trace`` for a capture). This class only
owns the process, splits its stdout into lines, and settles the output after exit,
so the GUI thread never blocks on it.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QProcess, QProcessEnvironment, QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QPushButton, QWidget

from fusionviz.model.errors import TraceError
from fusionviz.model.experiment import ranks
from fusionviz.model.experiment import runs as experiments
from fusionviz.model.run import runner
from fusionviz.model.run.process_tree import in_own_session, kill_tree, new_run_id
from fusionviz.model.run.protocol import (
    CHANNEL_ENV,
    describe_progress,
    open_channel,
    parse_progress,
    variant_position,
)
from fusionviz.model.run.settle import write_failure
from fusionviz.model.run.streams import Lines, Tail
from fusionviz.model.tracefile import bounded
from fusionviz.ui import storage
from fusionviz.ui.plain import plain
from fusionviz.ui.run.channel import PipeReader


@dataclass(frozen=True)
class Job:
    """What kind of child a run is, and how its output is made and settled."""

    kind: str  # "capture" | "experiment"
    argv: Callable[..., list[str]]  # (script, out, **options) -> argv
    default_out: Callable[[str], str]  # script -> where output goes if none is given
    settle: Callable[..., str | None]  # (out, exit_code=, status=, stderr_tail=, script=,
    #                                      ended=) -> a write problem to report, or ""
    channel: bool = True  # progress on a private pipe (torchrun closes it: ranks use stdout)


def _settle_capture(out: str, **how) -> str:
    """Settle the trace; what could not be written, if anything ("" else)."""
    settled = runner.finalize_trace(out, **how)
    problem = write_failure(settled)
    return f"{settled.status}: {problem}" if problem else ""


def _settle_experiment(out: str, *, status: str | None, exit_code: int | None,
                       stderr_tail: str, script: str, ended: dict | None = None) -> None:
    """An experiment is usable once its child wrote ``experiment.json`` (last, on success)."""
    if (Path(out) / "experiment.json").is_file():
        return
    if status == "cancelled":
        raise OSError(f"the experiment was cancelled; captures made so far are in {out}")
    why = f"exit status {exit_code}" if status is None else status
    raise OSError(f"the experiment on {os.path.basename(script)} ended ({why}) without "
                  f"results\n\n{stderr_tail}".rstrip())


def _ranks_argv(script: str, out: str, *, nproc: int = 2, **options) -> list[str]:
    """The launcher's command line; the folder keeps ``nproc`` for settling, so a rank
    that wrote nothing still gets a trace saying how the job ended."""
    (Path(out) / NPROC_FILE).write_text(str(nproc))
    return runner.capture_argv(script, out, nproc=nproc, **options)


NPROC_FILE = ".nproc"
MAX_RANKS = 4096  # more than the launcher is ever asked for: a larger count is not ours


def _settle_ranks(out: str, *, status: str | None, exit_code: int | None, stderr_tail: str,
                  script: str, ended: dict | None = None, lingered=()) -> str:
    """Settle every rank's trace in the folder ``out``, then compare the ranks;
    ``lingered``: the ranks ended after their final trace (``runner.settle_traces``)."""
    try:  # bounded as every file the app reads; TraceError is a ValueError
        nproc = int(bounded.read_text(Path(out) / NPROC_FILE, max_bytes=64))
    except (OSError, ValueError):
        nproc = 0
    if not 0 < nproc <= MAX_RANKS:
        nproc = len(list(Path(out).glob("rank*.json.gz")))
    paths = runner.rank_paths(out, nproc)
    if not paths:
        raise OSError(f"no rank of {os.path.basename(script)} wrote a trace "
                      f"({status or f'exit status {exit_code}'})\n\n{stderr_tail}".rstrip())
    # as the command line does (runner.run_ranks): a rank that wrote nothing gets a
    # trace of how the job ended
    traces = runner.settle_traces(paths, exit_code=exit_code, status=status,
                                  stderr_tail=stderr_tail, script=script, lingered=lingered)
    ranks.finish_ranks(script, out, traces, [p.name for p in paths])
    return "; ".join(f"{p.name}: {write_failure(t.script)}"
                     for p, t in zip(paths, traces, strict=True) if write_failure(t.script))


def _ranks_folder(script: str) -> str:
    return storage.experiment_folder(script, "ranks")


CAPTURE = Job("capture", runner.capture_argv, storage.capture_path, _settle_capture)
RANKS = Job("ranks", _ranks_argv, _ranks_folder, _settle_ranks, channel=False)
EXPERIMENT = Job("experiment", experiments.experiment_argv, storage.experiment_folder,
                 _settle_experiment)


class RunController(QObject):
    """Start, follow and cancel one child run (capture or experiment) at a time."""

    sig_progress = Signal(dict)
    """A progress message from the child (``protocol.parse_progress`` output)."""
    sig_output = Signal(str)
    """A line the script itself printed (stdout or stderr)."""
    sig_finished = Signal(str)
    """The child ended and its output was settled; argument: the trace path (capture)
    or the experiment folder (``job`` says which)."""
    sig_failed = Signal(str)
    """The run could not start or produced nothing usable; argument: why."""

    def __init__(self, parent: QObject | None = None, *, argv_builder=None) -> None:
        super().__init__(parent)
        # Tests set an argv builder (for every job) to run a fake child without torch.
        self._argv_builder = argv_builder
        self.process: QProcess | None = None
        self.job: Job = CAPTURE
        self.script = self.out_path = ""
        self.cancelled = False
        self.write_problem = ""  # what the last capture could not write ("" if all)
        self._stdout, self._stderr = Lines(), Lines()
        self._stderr_tail = Tail()  # for the error message / traceback pane
        self._run_id, self._pid, self._ended = "", 0, {}
        # Ended by us after its final trace(s), as it would not exit: the ranks that
        # had not ({0} for a capture); None while it has not been ended so
        self._lingered: set[int] | None = None
        self._nproc, self._done = 1, set()  # ranks in the job; those that said "done"
        self._linger_timer = QTimer(self)
        self._linger_timer.setSingleShot(True)
        self._linger_timer.timeout.connect(self._end_lingering)
        self._channel: PipeReader | None = None  # the private progress pipe, where there is one

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.state() != QProcess.ProcessState.NotRunning

    def start(self, script: str, out: str | None = None, *, job: Job = CAPTURE,
              cache_dir: str | None = None, **options) -> None:
        """Run ``job`` on ``script`` writing ``out`` (a temporary path when None)."""
        if self.running:
            raise RuntimeError(f"a {self.job.kind} is already running")
        self.job = job
        self.script, self.out_path = script, out or job.default_out(script)
        argv = (self._argv_builder or job.argv)(script, self.out_path, **options)
        cache_dir = cache_dir or os.path.join(tempfile.gettempdir(), "fusionviz-cache")
        self._run_id = new_run_id()
        env = QProcessEnvironment()
        for key, value in runner.capture_env(cache_dir, self._run_id).items():
            env.insert(key, value)
        self.cancelled, self._ended, self._lingered = False, {}, None
        self._nproc, self._done = int(options.get("nproc", 1) or 1), set()
        self._stdout, self._stderr = Lines(), Lines()
        self._stderr_tail.clear()
        proc = QProcess(self)
        proc.setProcessEnvironment(env)
        proc.setWorkingDirectory(os.path.dirname(os.path.abspath(script)) or os.getcwd())
        proc.readyReadStandardOutput.connect(self._read_stdout)
        proc.readyReadStandardError.connect(self._read_stderr)
        proc.finished.connect(self._on_finished)
        proc.errorOccurred.connect(self._on_error)
        self.process = proc
        write_end = self._open_channel(env) if job.channel else None
        argv = in_own_session(argv)
        try:
            proc.start(argv[0], argv[1:])  # forks here: the child has its copy of the pipe
        finally:
            if write_end is not None:
                os.close(write_end)
        self._pid = proc.processId()  # 0 when it failed to start

    def _open_channel(self, env: QProcessEnvironment) -> int | None:
        """Make the progress pipe; return its write end, inheritable until the child
        has it (QProcess and the session trampoline pass inherited descriptors on)."""
        self._close_channel()
        channel = open_channel()
        if channel is None:
            return None
        read_end, write_end = channel
        os.set_inheritable(write_end, True)
        env.insert(CHANNEL_ENV, str(write_end))
        self.process.setProcessEnvironment(env)
        self._channel = PipeReader(read_end, self)
        self._channel.sig_line.connect(self._progress_line)
        return write_end

    def _close_channel(self) -> None:
        if self._channel is not None:
            self._channel.drain()
            self._channel.close()
            self._channel.deleteLater()
            self._channel = None

    def cancel(self) -> None:
        """Kill the child; a capture's ``sig_finished`` still follows with what it had
        recorded, a cancelled experiment ends in ``sig_failed``."""
        if self.running:
            self.cancelled = True
            kill_tree(self.process.processId(), self._run_id)
            self.process.kill()

    def wait(self, msecs: int = 30000) -> bool:
        """Block until the child exits (for the command line and tests)."""
        return self.process is None or self.process.waitForFinished(msecs)

    def _read_stdout(self) -> None:
        for line in self._stdout.feed(bytes(self.process.readAllStandardOutput().data())):
            self._line(line)

    def _line(self, line: str) -> None:
        """A line of stdout: the script's, or (with no private pipe) maybe progress."""
        message = None if self._channel is not None else parse_progress(line)
        if message is None:
            self.sig_output.emit(line)
        else:
            self._progress(message)

    def _progress_line(self, line: str) -> None:
        message = parse_progress(line)
        if message is not None:  # else not ours to show: dropped
            self._progress(message)

    def _progress(self, message: dict) -> None:
        if message["event"] == "done":  # how the child ended, for settling the trace
            self._ended = message
            self._done.add(message.get("rank", 0))
            # every rank's trace is final: the job has a while to exit
            if self.job in (CAPTURE, RANKS) and len(self._done) >= self._nproc:
                self._linger_timer.start(int(runner.EXIT_AFTER_DONE_S * 1000))
        self.sig_progress.emit(message)

    def _end_lingering(self) -> None:
        """The capture wrote its final trace long ago but its process runs on (a thread
        or worker the script left blocks the exit): end it, keeping its status."""
        if self.running and not self.cancelled:  # the ranks whose traces will say so
            self._lingered = (runner.ranks_running(self.process.processId())
                              if self.job is RANKS else {0})
            kill_tree(self.process.processId(), self._run_id)
            self.process.kill()

    def _read_stderr(self) -> None:
        for line in self._stderr.feed(bytes(self.process.readAllStandardError().data())):
            self._stderr_line(line)

    def _stderr_line(self, line: str) -> None:
        self._stderr_tail.add(line)
        self.sig_output.emit(line)

    def _on_error(self, error: QProcess.ProcessError) -> None:
        if error == QProcess.ProcessError.FailedToStart:
            self.process = None
            self._close_channel()
            self.sig_failed.emit(f"could not start the {self.job.kind} process ({error.name})")

    def _on_finished(self, exit_code: int, exit_status: QProcess.ExitStatus) -> None:
        proc = self.process
        if proc is None:
            return
        kill_tree(self._pid, self._run_id)  # what the child left running (a daemon)
        self._read_stdout()
        self._read_stderr()
        for line in self._stdout.close():
            self._line(line)
        for line in self._stderr.close():
            self._stderr_line(line)
        self._close_channel()
        self._linger_timer.stop()
        crashed = exit_status == QProcess.ExitStatus.CrashExit and self._lingered is None
        status = "cancelled" if self.cancelled else ("crashed" if crashed else None)
        lingered = {} if self._lingered is None else {
            "lingered": self._lingered if self.job is RANKS else True}
        try:
            self.write_problem = self.job.settle(
                self.out_path, exit_code=None if crashed or lingered else exit_code,
                status=status, stderr_tail=self._stderr_tail.text(), script=self.script,
                ended=self._ended, **lingered) or ""
        except (OSError, TraceError) as e:
            lead = "the capture left no readable trace: " if self.job.kind == "capture" else ""
            self.sig_failed.emit(f"{lead}{e}")
            return
        finally:
            self.process = None
            proc.deleteLater()
        self.sig_finished.emit(self.out_path)


class RunProgress(QWidget):
    """Status-bar widget: what the run is doing, a progress bar and a Cancel button.

    An experiment's lines are prefixed with the capture they belong to; its bar counts
    captures once their number is known, and is a busy bar otherwise."""

    sig_text = Signal(str)
    """The progress line changed (the window echoes it in the empty graph view)."""

    def __init__(self, controller: RunController, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = plain(QLabel())  # script names, graph and variant labels: as text
        self.bar = QProgressBar()
        self.bar.setRange(0, 0)  # busy: the number of graphs is not known in advance
        self.bar.setMaximumWidth(160)
        self.bar.setMaximumHeight(14)
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop the run (Esc); a capture keeps the graphs recorded so far")
        self.cancel.setMaximumWidth(90)
        self.cancel.clicked.connect(controller.cancel)
        self._variant = ""  # "[2/5 after round 0] " while an experiment runs
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        for w in (self.label, self.bar, self.cancel):
            row.addWidget(w)
        controller.sig_progress.connect(self._on_progress)
        controller.sig_finished.connect(self.stop)
        controller.sig_failed.connect(self.stop)
        # A script that goes quiet (it hangs, or just runs on after its last compile)
        # is said to be running, with how long since its last news, not left on a stale
        # "graph 0: timed" for minutes.
        self._news, self._since = "", 0.0
        self._clock = QTimer(self, interval=1000)
        self._clock.timeout.connect(self._tick)
        self.hide()

    def stop(self, *_args) -> None:
        self._clock.stop()
        self.hide()

    def _tick(self) -> None:
        quiet = time.monotonic() - self._since
        if quiet >= QUIET_S:
            text = (f"{self._news} · the script is running, {quiet_for(quiet)} since its "
                    "last progress (Esc cancels)")
            self.label.setText(text)
            self.sig_text.emit(text)

    def started(self, script: str, doing: str = "capturing") -> None:
        self._variant = ""
        self.bar.setRange(0, 0)
        self._set(f"{doing} {os.path.basename(script)}…")
        self._clock.start()
        self.show()

    def _on_progress(self, msg: dict) -> None:
        if msg.get("event") != "variant":
            self._set(self._variant + describe_progress(msg))
            return
        self._variant = f"[{variant_position(msg)} {msg.get('label', '')}] "
        if msg.get("of"):
            self.bar.setRange(0, int(msg["of"]))
            self.bar.setValue(int(msg.get("index", 0)))
        self._set(f"{self._variant}starting the capture")

    def _set(self, text: str) -> None:
        self._news, self._since = text, time.monotonic()
        self.label.setText(text)
        self.sig_text.emit(text)


QUIET_S = 10.0  # seconds without progress before the label says the script runs on


def quiet_for(seconds: float) -> str:
    """``35 s``, ``2 min 05 s``."""
    whole = int(seconds)
    return f"{whole} s" if whole < 60 else f"{whole // 60} min {whole % 60:02d} s"
