"""Bounded reading of a child's output: lines of bounded length, and a bounded tail.

A script may print a gigabyte without a newline, or megabytes of warnings on stderr;
what the parent keeps of it must not grow with it. ``Lines`` splits a byte stream
into text lines, cutting an overlong one; ``Tail`` keeps the last lines of a stream
(for the error message, the trace's traceback and ``fusionviz capture``)."""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable

MAX_LINE = 64 * 1024  # characters of one line kept; the rest of it is dropped
CUT = " […line cut]"


class Lines:
    """Feed bytes, get the complete lines they end (decoded, without newline)."""

    def __init__(self, max_line: int = MAX_LINE) -> None:
        self.max_line = max_line
        self._buf = b""
        self._cutting = False  # inside a line already given, cut: drop up to its newline

    def feed(self, data: bytes) -> list[str]:
        *done, self._buf = (self._buf + data).split(b"\n")
        lines = []
        for raw in done:
            if self._cutting:
                self._cutting = False
            elif len(raw) > self.max_line:  # a whole long line in one chunk: cut it too
                lines.append(_text(raw[: self.max_line]) + CUT)
            else:
                lines.append(_text(raw))
        if len(self._buf) > self.max_line:
            if not self._cutting:
                lines.append(_text(self._buf[: self.max_line]) + CUT)
            self._buf, self._cutting = b"", True
        return lines

    def close(self) -> list[str]:
        """The last line, when the stream ended without a newline."""
        last, self._buf = self._buf, b""
        return [_text(last)] if last and not self._cutting else []


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", "replace").rstrip("\r")


class Tail:
    """The last ``max_lines`` lines of a stream, at most ``max_chars`` characters."""

    def __init__(self, max_lines: int = 200, max_chars: int = 16000) -> None:
        self.max_chars = max_chars
        self._lines: deque[str] = deque(maxlen=max_lines)
        self._chars = 0
        self.dropped = 0  # lines seen and no longer kept

    def add(self, line: str) -> None:
        line = line[-self.max_chars:]
        if len(self._lines) == self._lines.maxlen:
            self._drop()
        self._lines.append(line)
        self._chars += len(line) + 1
        while self._chars > self.max_chars and len(self._lines) > 1:
            self._drop()

    def _drop(self) -> None:
        self._chars -= len(self._lines.popleft()) + 1
        self.dropped += 1

    def clear(self) -> None:
        self._lines.clear()
        self._chars = self.dropped = 0

    def text(self) -> str:
        """The lines kept, after a note of how many came before them."""
        lead = [f"[… {self.dropped} earlier lines not kept]"] if self.dropped else []
        return "\n".join([*lead, *self._lines])


def pump(stream, on_line: Callable[[str], None],
         on_error: Callable[[BaseException], None]) -> threading.Thread:
    """Read the binary ``stream`` to its end in a daemon thread, ``on_line`` for each
    line; an exception from ``on_line`` stops the reading and goes to ``on_error``."""

    def run() -> None:
        lines = Lines()
        try:
            while chunk := stream.read1(1 << 16):
                for line in lines.feed(chunk):
                    on_line(line)
            for line in lines.close():
                on_line(line)
        except (OSError, ValueError):  # closed under us: the run is over
            pass
        except BaseException as e:  # noqa: BLE001 - a callback raised: the caller re-raises
            on_error(e)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
