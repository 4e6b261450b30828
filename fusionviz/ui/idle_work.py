"""Work done in idle time, a few milliseconds at a time: finishing a lazily loaded
trace, then preparing the shown graph's fusion steps.

The window opens a trace with ``load_trace(lazy=True)``: the graph is on screen
before the nodes' reads/writes/origins and the rounds' ledgers are built (each is
built anyway the moment a pane reads it). ``IdleWork`` runs such work, a generator,
in slices of ``SLICE_S`` between events, so stepping and panning stay fluid; it
reports progress, the end, or the TraceError of a malformed part as soon as met.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

from PySide6.QtCore import QObject, QTimer, Signal

from fusionviz.model.errors import TraceError
from fusionviz.model.gc_pause import GcPause

SLICE_S = 0.008  # work per event-loop turn: well inside a 16 ms frame
START_MS = 100  # let the first frames (and a first click) go first


class IdleWork(QObject):
    """Runs one generator at a time between events; it yields (done, total) or None."""

    sig_progress = Signal(int, int)
    """(done, total) while it works, when the generator says."""
    sig_done = Signal()
    sig_failed = Signal(str)
    """The generator raised TraceError: a part of the trace is malformed."""

    def __init__(self, parent: QObject | None = None, *, pause_gc: bool = False) -> None:
        super().__init__(parent)
        self._steps: Iterator | None = None
        # No cyclic GC while it allocates a trace's objects; frozen when done.
        self._gc = GcPause() if pause_gc else None
        self._timer = QTimer(self)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._work)
        self._delay = QTimer(self)
        self._delay.setSingleShot(True)
        self._delay.timeout.connect(self._timer.start)

    @property
    def running(self) -> bool:
        return self._steps is not None

    def start(self, steps: Iterator, delay_ms: int = START_MS) -> None:
        """Run ``steps`` from ``delay_ms`` on (stops any earlier run)."""
        self.stop()
        self._steps = iter(steps)
        if self._gc is not None:
            self._gc.pause()
        self._delay.start(delay_ms)

    def finish(self) -> None:
        """Do the rest now, without waiting for idle time (results go to the signals)."""
        if self.running:
            self._delay.stop()
            self._work(budget=float("inf"))

    def stop(self) -> None:
        self._delay.stop()
        self._timer.stop()
        self._steps = None
        if self._gc is not None:
            self._gc.resume()

    def _work(self, budget: float = SLICE_S) -> None:
        end = time.perf_counter() + budget
        progress = None
        try:
            while time.perf_counter() < end:
                progress = next(self._steps)
        except StopIteration:
            if self._gc is not None:
                # What was built is long-lived: later collections skip it. (Cyclic
                # garbage made meanwhile is frozen too; a collection here would scan
                # everything just built, ~0.1 s, to find a few objects.)
                self._gc.resume(freeze=True)
            self.stop()
            self.sig_done.emit()
            return
        except TraceError as e:
            self.stop()
            self.sig_failed.emit(str(e))
            return
        if progress is not None:
            self.sig_progress.emit(*progress)
