"""The GUI's end of a child's private progress pipe (``protocol.open_channel``).

Read in the GUI thread when the pipe has data (a QSocketNotifier on the read end, made
non-blocking), a bounded amount at a time, so a child that floods it cannot freeze
the window; complete lines come out as ``sig_line``.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, QSocketNotifier, Signal

from fusionviz.model.run.streams import Lines

_READ_AT_ONCE = 1 << 20  # bytes per wake-up; the notifier fires again for the rest


class PipeReader(QObject):
    """Owns the read end ``fd``; ``close`` (or the end of the pipe) releases it."""

    sig_line = Signal(str)

    def __init__(self, fd: int, parent: QObject | None = None) -> None:
        super().__init__(parent)
        os.set_blocking(fd, False)
        self._fd, self._lines = fd, Lines()
        self._notifier = QSocketNotifier(fd, QSocketNotifier.Type.Read, self)
        self._notifier.activated.connect(self.drain)

    def drain(self) -> None:
        """Read what the pipe holds now (up to a bound) and give its complete lines."""
        left = _READ_AT_ONCE
        while self._fd >= 0 and left > 0:
            try:
                data = os.read(self._fd, min(left, 1 << 16))
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:  # every writer is gone
                self.close()
                return
            left -= len(data)
            for line in self._lines.feed(data):
                self.sig_line.emit(line)

    def close(self) -> None:
        """Give the last line (if it lacked its newline) and release the pipe."""
        if self._fd < 0:
            return
        self._notifier.setEnabled(False)
        os.close(self._fd)
        self._fd = -1
        for line in self._lines.close():
            self.sig_line.emit(line)
