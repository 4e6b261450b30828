"""Measuring the advisor's candidates from the window: ``advisor.measure.measure`` in a
thread (its replays are child processes; this thread only waits for them), its lines
and its result handed to the GUI thread through queued signals, cancellable."""

from __future__ import annotations

import tempfile
import threading

from PySide6.QtCore import QObject, Signal

from fusionviz.model.advisor.candidates import Candidate
from fusionviz.model.advisor.measure import Measurement, chosen, measure, plan
from fusionviz.model.trace import Graph, Trace


class MeasureRun(QObject):
    """One measurement of one graph's candidates; ``start`` once."""

    sig_line = Signal(str)
    """A replay started or ended (its progress line)."""
    sig_progress = Signal(int, int)
    """(replays ended, replays planned)."""
    sig_done = Signal(object)
    """The Measurement (also after Cancel: what was timed before it)."""

    def __init__(self, trace: Trace, path: str, graph: Graph, candidates: list[Candidate],
                 count: int, budget: float = 600, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.trace, self.graph = trace, graph
        self.folder = tempfile.mkdtemp(prefix="fusionviz-advise-")
        self.total = len(plan(len(chosen(candidates, count))))  # replays to come
        self._ended = 0
        self._cancel = threading.Event()
        self._thread = threading.Thread(
            target=self._work, args=(trace, path, graph, candidates, count, budget),
            name="fusionviz-advise", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def cancel(self) -> None:
        self._cancel.set()

    @property
    def cancelled(self) -> bool:
        return self._cancel.is_set()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def wait(self, seconds: float) -> bool:
        """Block until the run has ended (tests, closing the window); False on timeout."""
        self._thread.join(seconds)
        return not self._thread.is_alive()

    def _work(self, trace, path, graph, candidates, count, budget) -> None:
        try:
            result = measure(trace, path, graph, candidates, count, folder=self.folder,
                             budget=budget, on_event=self._line, stopped=self._cancel.is_set)
        except Exception as e:  # noqa: BLE001 - said in the pane, never a dead thread
            result = Measurement(graph.index, "", problem=f"{type(e).__name__}: {e}")
        self.sig_done.emit(result)

    def _line(self, line: str) -> None:
        if " ended: " in line:
            self._ended += 1
            self.sig_progress.emit(self._ended, self.total)
        self.sig_line.emit(line)
