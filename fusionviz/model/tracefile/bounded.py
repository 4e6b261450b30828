"""A trace file's bytes, read within bounds before any of it is parsed (#11).

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
"""

from __future__ import annotations

import gzip
import stat
import zlib
from collections.abc import Iterator
from pathlib import Path

from fusionviz.model.errors import TraceError

MAX_BYTES = 512 * 1024 * 1024  # uncompressed JSON size cap
MAX_MEMORY = 4 * 1024**3  # what a trace may take once read, however big its file
MEMORY_FLOOR = 256 * 1024**2  # what any file may take
# ... and between the two, this much per byte of the file: a gzipped trace holds about
# 10 bytes of JSON a byte, which read into about 8 bytes of memory a byte (estimated).
MEMORY_PER_FILE_BYTE = 1000

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


def read_bytes(path: Path, max_bytes: int = MAX_BYTES, cut: list[str] | None = None,
               *, first_line: bool = False) -> bytes:
    """The JSON text of trace file ``path`` (gunzipped), within bounds; TraceError for
    a special file, more than ``max_bytes`` of JSON or a text over its memory budget;
    OSError, EOFError, zlib.error or gzip.BadGzipFile for a file that cannot be read.

    A gzip stream that ends early is an EOFError, or (``cut`` given) what it held,
    noted in ``cut``. ``first_line``: stop once the first line is in (it is the start
    of the text returned).
    """
    info = path.stat()
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device would block or never end
        raise TraceError(f"{path}: not a regular file")
    if info.st_size > max_bytes and not first_line:
        raise TraceError(f"{path}: file larger than {max_bytes} bytes")
    if info.st_size == 0:
        raise TraceError(f"{path}: the file is empty (0 bytes), not a trace: was the "
                         "capture that writes it stopped before its first write?")
    budget = _Budget(path, info.st_size)
    with open(path, "rb") as f:
        gzipped = f.read(2) == _GZIP_MAGIC
        f.seek(0)
        if not gzipped:  # no bigger than the file: one read, then one look
            raw = f.readline(max_bytes + 1) if first_line else f.read(max_bytes + 1)
            budget.check([raw], len(raw))
            return raw
        chunks: list[bytes] = []
        total = 0
        for chunk in _inflate(f, cut):
            chunks.append(chunk)
            total += len(chunk)
            if total > max_bytes:
                raise TraceError(f"{path}: trace larger than {max_bytes} bytes uncompressed")
            budget.check(chunks, total)
            if first_line and b"\n" in chunk:
                break
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


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
