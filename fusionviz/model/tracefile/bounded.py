"""Every file the app reads, read within bounds before any of it is parsed (#11, #19).

The byte cap (``MAX_BYTES`` of JSON) does not bound memory: parsed JSON takes up to
~40 bytes per byte (``[],`` is a 56-byte list and its pointer), and gzip packs a
thousand ``[],`` in a few bytes, so a 100 KB file could take gigabytes. So:

- special files (a FIFO, a device) are refused before they are opened;
- gzip is inflated a piece at a time, never more than ``max_bytes`` out;
- the memory its JSON would take once read is estimated from counts of its
  structural bytes (``estimate_memory``) as the pieces come in, and the file is
  refused once that passes its budget: ``memory_budget``, in proportion to the
  file's size on disk, with a floor and a ceiling. A small file that inflates to a
  bomb is refused after its first few megabytes.

Traces go through ``read_bytes``; the small files beside them (an experiment's
``experiment.json`` and ``report.md``) through ``read_json`` and ``read_text``, the
same reader with a smaller cap; and a file an experiment names goes through
``inside``, which keeps it in the experiment's folder. Every refusal is a TraceError
naming the file.
"""

from __future__ import annotations

import gzip
import json
import os
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from fusionviz.model.errors import TraceError

MAX_BYTES = 512 * 1024 * 1024  # uncompressed JSON size cap
MAX_MEMORY = 4 * 1024**3  # what a trace may take once read, however big its file
MEMORY_FLOOR = 256 * 1024**2  # what any file may take
# ... and between the two, this much per byte of the file: a gzipped trace holds about
# 10 bytes of JSON a byte, which read into about 8 bytes of memory a byte (estimated).
MEMORY_PER_FILE_BYTE = 1000
# experiment.json and report.md: fusionviz writes a few kilobytes of either
MAX_SIDE_BYTES = 16 * 1024**2

# What the JSON parsers build (CPython 3.11, 64-bit), per structural byte: measured
# on files of each shape (benchmarks/bench_load.py) and rounded up.
_LIST = 88  # '[': a list (56 bytes, over-allocated by json's parser)
_DICT = 232  # '{': a dict of a few keys (184 bytes) and a key string of its own
_ITEM = 64  # ',': one more value (a float, an int or a short string) and its pointer
_WORST = 1 + max(_LIST, _DICT, _ITEM)  # the most any one byte adds to the estimate
_OTHER_BYTES = bytes(sorted(set(range(256)) - set(b"[{,")))

_GZIP_MAGIC = b"\x1f\x8b"
_IN = 1 << 20  # compressed bytes read at a time
_OUT = 16 << 20  # JSON bytes inflated at a time: a bomb is looked at every 16 MB


def estimate_memory(data: bytes) -> int:
    """Roughly the bytes of memory JSON text ``data`` takes once parsed, with the text
    itself (an over-estimate for ordinary traces, about 2x; see ``bench_load.py``).
    Counts add up: the estimate of a text is the sum of its pieces' estimates."""
    kept = data.translate(None, _OTHER_BYTES)  # ~3x faster than three counts of data
    return (len(data) + _LIST * kept.count(b"[") + _DICT * kept.count(b"{")
            + _ITEM * kept.count(b","))


def memory_budget(file_size: int) -> int:
    """The memory a trace file of ``file_size`` bytes (on disk) may take once read."""
    return min(MAX_MEMORY, max(MEMORY_FLOOR, MEMORY_PER_FILE_BYTE * file_size))


def open_regular(path: Path) -> tuple[BinaryIO, int]:
    """(``path`` opened for reading, its size) when it is a regular file, a symlink to
    one included; TraceError for a FIFO, a device, a socket or a folder, refused before
    it is opened (a FIFO blocks the open, ``/dev/zero`` never ends); OSError for a file
    that is not there or not readable. The file is looked at again once open, so one
    swapped for a FIFO in between is refused too, and never blocks the open."""
    if not stat.S_ISREG(path.stat().st_mode):
        raise TraceError(f"{path}: not a regular file")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise TraceError(f"{path}: not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb"), info.st_size
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: Path, max_bytes: int = MAX_BYTES, cut: list[str] | None = None,
               *, first_line: bool = False) -> bytes:
    """The JSON text of trace file ``path`` (gunzipped), within bounds; TraceError for
    a special file, more than ``max_bytes`` of JSON or a text over its memory budget;
    OSError, EOFError, zlib.error or gzip.BadGzipFile for a file that cannot be read.

    A gzip stream that ends early is an EOFError, or (``cut`` given) what it held,
    noted in ``cut``. ``first_line``: stop once the first line is in (it is the start
    of the text returned).
    """
    return _read(path, max_bytes, cut, first_line=first_line, what="trace")


def _read(path: Path, max_bytes: int, cut: list[str] | None = None, *,
          first_line: bool = False, what: str) -> bytes:
    """``read_bytes`` of a file of kind ``what`` (a trace's empty file is refused)."""
    f, size = open_regular(path)
    with f:
        if size > max_bytes and not first_line:
            raise TraceError(f"{path}: file larger than {max_bytes} bytes")
        if size == 0 and what == "trace":
            raise TraceError(f"{path}: the file is empty (0 bytes), not a trace: was the "
                             "capture that writes it stopped before its first write?")
        budget = _Budget(path, size)
        gzipped = f.read(2) == _GZIP_MAGIC
        f.seek(0)
        if first_line and not gzipped and size > max(max_bytes, MAX_BYTES):
            # no such trace loads: its first line is not worth reading (up to MAX_BYTES)
            raise TraceError(f"{path}: file larger than {max(max_bytes, MAX_BYTES)} bytes")
        if not gzipped and not first_line:  # no bigger than the file: one read, one look
            raw = f.read(max_bytes + 1)
            if len(raw) > max_bytes:  # it grew since it was looked at
                raise TraceError(f"{path}: file larger than {max_bytes} bytes")
            budget.check([raw], len(raw))
            return raw
        chunks: list[bytes] = []
        total = 0
        # (plain text here is read for its first line: up to its newline, a piece at a time)
        for chunk in _inflate(f, cut) if gzipped else iter(lambda: f.readline(_OUT), b""):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise TraceError(f"{path}: {what} larger than {max_bytes} bytes uncompressed"
                                 if gzipped else f"{path}: first line larger than "
                                 f"{max_bytes} bytes")
            budget.check(chunks, total)
            if first_line and b"\n" in chunk:
                break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def read_json(path: Path, max_bytes: int = MAX_SIDE_BYTES) -> object:
    """The JSON value of a small file (``experiment.json``), read as a trace is (a
    regular file, within ``max_bytes`` and its memory budget); TraceError naming the
    file when it cannot be read, is not JSON or is nested too deeply to read."""
    raw = _side_file(path, max_bytes, "JSON")
    try:
        return json.loads(raw)
    except RecursionError as e:
        raise TraceError(f"{path}: not readable JSON (nested too deeply)") from e
    except ValueError as e:  # invalid JSON or text, an integer of thousands of digits
        raise TraceError(f"{path}: not readable JSON ({e})") from e


def read_text(path: Path, max_bytes: int = MAX_SIDE_BYTES) -> str:
    """The text of a small file (an experiment's ``report.md``), bounded as
    ``read_json``; bytes that are not UTF-8 read as U+FFFD."""
    return _side_file(path, max_bytes, "text").decode("utf-8", errors="replace")


def _side_file(path: Path, max_bytes: int, what: str) -> bytes:
    try:
        return _read(path, max_bytes, what=what)
    except (OSError, EOFError, zlib.error) as e:  # gzip.BadGzipFile is an OSError
        raise TraceError(f"{path}: cannot read the file: "
                         f"{getattr(e, 'strerror', None) or e}") from e


def inside(folder: Path, name: object, listed_in: Path) -> Path:
    """The file ``name`` in ``folder``, as ``listed_in`` (the file naming it) names it;
    TraceError unless it is a relative path that stays in the folder (no ``..`` out of
    it, no absolute path, no symlink leading out): a folder someone sent must not make
    the app read files elsewhere on this machine."""
    if not isinstance(name, str) or not name or "\0" in name:
        raise TraceError(f"{listed_in}: {name!r} is not a file name")
    path = folder / name
    try:
        home, real = folder.resolve(), path.resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop
        raise TraceError(f"{listed_in}: cannot follow {name!r}: {e}") from e
    if Path(name).is_absolute() or not real.is_relative_to(home) or real == home:
        raise TraceError(f"{listed_in}: {name!r} lies outside the folder {folder}")
    return path


class _Budget:
    """The memory budget of one file, checked as its text comes in."""

    def __init__(self, path: Path, file_size: int) -> None:
        self.path, self.file_size = path, file_size
        self.limit = memory_budget(file_size)
        self.estimate = 0
        self.counted = 0  # the chunks counted in ``estimate``

    def check(self, chunks: list[bytes], total: int) -> None:
        """TraceError once the estimate of ``chunks`` (``total`` bytes in all) passes
        the budget. They are counted only once they might: no byte adds more than
        ``_WORST`` to the estimate, so the first ``limit / _WORST`` bytes never do."""
        if total * _WORST <= self.limit:
            return
        for chunk in chunks[self.counted:]:
            self.estimate += estimate_memory(chunk)
        self.counted = len(chunks)
        if self.estimate > self.limit:
            raise TraceError(
                f"{self.path}: reading this trace would take more than "
                f"{_size(self.estimate)} of memory (estimated from its first "
                f"{_size(total)} of JSON); a file of {_size(self.file_size)} may take "
                f"up to {_size(self.limit)}. Is it a decompression bomb?")


def _inflate(f, cut: list[str] | None) -> Iterator[bytes]:
    """The JSON of gzip file ``f``, ``_OUT`` bytes at most at a time, member after
    member (zero padding after the last is allowed, as ``gzip`` does)."""
    inflate = zlib.decompressobj(wbits=31)
    data = b""
    while True:
        if not data:
            data = f.read(_IN)
            if not data:
                break
        chunk = inflate.decompress(data, _OUT)
        data = inflate.unconsumed_tail
        if chunk:
            yield chunk
        if inflate.eof:  # a member ended: another may follow
            data = (inflate.unused_data + data).lstrip(b"\0")
            while len(data) < 2 and (more := f.read(_IN)):
                data = (data + more).lstrip(b"\0")
            if not data:
                return
            if data[:2] != _GZIP_MAGIC:
                raise gzip.BadGzipFile(f"Not a gzipped file ({data[:2]!r})")
            inflate = zlib.decompressobj(wbits=31)
    if cut is None:
        raise EOFError("Compressed file ended before the end-of-stream marker was reached")
    cut.append("the gzip stream ends early (the file was cut): what it held is shown")


def _size(n: float) -> str:
    if n < 1024:
        return f"{n} bytes"
    for unit in ("KB", "MB", "GB"):
        n /= 1024
        if n < 1024 or unit == "GB":
            break
    return f"{n:.1f} {unit}"
