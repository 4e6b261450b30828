"""SIGTERM, Ctrl+C (SIGINT) and SIGHUP close the window as its close button does.

Python runs a signal handler only when the interpreter gets control, which Qt's event
loop does not give it while it waits; and Python's default SIGTERM ends the app at
once, leaving a running capture (in a session of its own) to run on. So while
``QuitOnSignal`` is installed these signals only write their number to a socket
(``signal.set_wakeup_fd``) that a ``QSocketNotifier`` watches; the event loop then
closes the window (its ``closeEvent`` cancels a running capture through
``RunController.cancel``) and the app exits 128 + the signal's number.
"""

from __future__ import annotations

import contextlib
import signal
import socket

from PySide6.QtCore import QCoreApplication, QObject, QSocketNotifier
from PySide6.QtWidgets import QWidget

from fusionviz.model.run.process_tree import STOP_SIGNALS


def _note(_signum: int, _frame) -> None:
    """Nothing to do in Python: the wake-up socket carries the signal's number."""


class QuitOnSignal(QObject):
    """``QuitOnSignal(window)`` in the main thread before the event loop; ``uninstall``
    after it, which gives back the handlers that were there."""

    def __init__(self, window: QWidget) -> None:
        super().__init__(window)
        self._window, self._closing = window, False
        self._read, self._write = socket.socketpair()
        for end in (self._read, self._write):
            end.setblocking(False)
        self._wakeup_before = signal.set_wakeup_fd(self._write.fileno(),
                                                   warn_on_full_buffer=False)
        self._before = {s: signal.signal(s, _note) for s in STOP_SIGNALS}
        self._notifier = QSocketNotifier(self._read.fileno(), QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self._on_signal)

    def _on_signal(self, *_args) -> None:
        try:
            numbers = self._read.recv(64)
        except BlockingIOError:
            return
        if numbers and not self._closing:  # the first one counts
            self._closing = True
            self._window.close()
            QCoreApplication.exit(128 + numbers[0])

    def uninstall(self) -> None:
        self._notifier.setEnabled(False)
        signal.set_wakeup_fd(self._wakeup_before)
        for s, handler in self._before.items():
            with contextlib.suppress(TypeError):  # None: not set from Python
                signal.signal(s, handler)
        self._read.close()
        self._write.close()
