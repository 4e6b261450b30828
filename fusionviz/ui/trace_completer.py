"""Finish a lazily loaded trace in idle time, a few milliseconds at a time.

The window opens a trace with ``load_trace(lazy=True)``: the graph is on screen
before the nodes' reads/writes/origins and the rounds' ledgers are built (each is
built anyway the moment a pane reads it). ``TraceCompleter`` then builds the rest in
slices of ``SLICE_S`` between events, so stepping and panning stay fluid, shows its
progress in the status bar, and reports a malformed part as soon as it meets it.
"""

from __future__ import annotations

import gc
import time

from PySide6.QtCore import QObject, QTimer, Signal

from fusionviz.model import lazy
from fusionviz.model.trace_io import TraceError

SLICE_S = 0.008  # work per event-loop turn: well inside a 16 ms frame
START_MS = 100  # let the first frames (and a first click) go first


class TraceCompleter(QObject):
    sig_progress = Signal(int, int)
    """(objects done, objects in all) while it works."""
    sig_done = Signal()
    sig_failed = Signal(str)
    """A part of the trace is malformed: the message names it."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._steps = None
        self._gc_was_enabled = True
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._work)
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.timeout.connect(self._timer.start)

    @property
    def running(self) -> bool:
        return self._steps is not None

    def start(self, trace, delay_ms: int = START_MS) -> None:
        """Complete ``trace`` from ``delay_ms`` on (stops any earlier run)."""
        self.stop()
        if not lazy.pending_fields(trace):
            return
        self._steps = lazy.complete(trace)
        # No cyclic GC while the trace's objects are made (a collection would walk
        # them, and they are never garbage); they are frozen when done, like the rest.
        self._gc_was_enabled = gc.isenabled()
        gc.disable()
        self._delay.start(delay_ms)

    def finish(self) -> None:
        """Complete now, without waiting for idle time (raises nothing; see signals)."""
        if self.running:
            self._delay.stop()
            self._work(budget=float("inf"))

    def stop(self) -> None:
        self._delay.stop()
        self._timer.stop()
        if self._steps is not None:
            self._steps = None
            if self._gc_was_enabled:
                gc.enable()

    def _work(self, budget: float = SLICE_S) -> None:
        end = time.perf_counter() + budget
        done = total = 0
        try:
            while time.perf_counter() < end:
                done, total = next(self._steps)
        except StopIteration:
            gc.freeze()
            self.stop()
            self.sig_done.emit()
            return
        except TraceError as e:
            self.stop()
            self.sig_failed.emit(str(e))
            return
        self.sig_progress.emit(done, total)
