"""Ctrl+C (SIGINT), SIGTERM (``timeout``, ``kill``) and SIGHUP end a capture job whole.

The script runs in a session of its own (``runner.run_ranks``), and torchrun starts
each rank in yet another, so a signal to the command line reaches none of them; and
Python's default SIGTERM ends the command line at once, leaving the job running. So
while ``JobSignals`` is entered, these signals only note themselves; ``poll`` (handed to
``run_ranks``, which calls it every ``POLL_S``) then raises ``Stopped``, and ``run_ranks``
ends the job as the window's Cancel does (``process_tree.kill_tree``) and settles every
trace ``cancelled``. The command then says so in one line and exits 128 + the signal's
number (130 for SIGINT, 143 for SIGTERM).
"""

from __future__ import annotations

import signal
import threading

from fusionviz.model.run.process_tree import STOP_SIGNALS


class Stopped(KeyboardInterrupt):
    """A signal asked the job to stop (no ``except Exception`` swallows it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class JobSignals:
    """``with JobSignals() as signals: run_ranks(..., poll=signals.poll)``."""

    def __init__(self) -> None:
        self.signum = 0
        self._before: dict[int, object] = {}

    def __enter__(self) -> JobSignals:
        if threading.current_thread() is threading.main_thread():  # else Python refuses
            self._before = {s: signal.signal(s, self._note) for s in STOP_SIGNALS}
        return self

    def __exit__(self, *_exc) -> None:
        for s, handler in self._before.items():
            signal.signal(s, handler)

    def _note(self, signum: int, _frame) -> None:
        if not self.signum:  # the first one counts; the job is being ended already
            self.signum = signum

    def poll(self) -> None:
        """Raise ``Stopped`` once a signal came."""
        if self.signum:
            raise Stopped(self.signum)
