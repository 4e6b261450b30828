"""Save a trace file under another name, byte for byte (or un/compressed by suffix)."""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
import zlib
from pathlib import Path
from typing import BinaryIO

from fusionviz.model.errors import TraceError
from fusionviz.model.tracefile.bounded import open_regular
from fusionviz.model.tracefile.io import _umask


def _gz(path: Path) -> bool:
    return path.name.endswith(".gz")


def _source(src: Path) -> BinaryIO:
    """``src`` opened as it was loaded: a regular file (``tracefile.bounded``); OSError
    for one swapped for a FIFO or a device since (the window shows OSErrors)."""
    try:
        return open_regular(src)[0]
    except TraceError as e:
        raise OSError(str(e)) from e


def save_trace_as(source: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Copy the trace at ``source`` to ``target``: the same bytes when both or neither
    end in ``.gz``, else compressed or decompressed to match ``target``. The copy is
    written beside ``target`` and renamed over it, so a failed save leaves no half file."""
    src, dst = Path(source), Path(target)
    if src.resolve() == dst.resolve():
        return dst
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", dir=dst.parent)
    try:
        with os.fdopen(fd, "wb") as out, _source(src) as f:
            if _gz(src) == _gz(dst):
                shutil.copyfileobj(f, out)
            elif _gz(dst):
                with gzip.GzipFile(fileobj=out, mode="wb", filename="", mtime=0) as z:
                    shutil.copyfileobj(f, z)
            else:
                with gzip.GzipFile(fileobj=f, mode="rb") as z:
                    shutil.copyfileobj(z, out)
        os.chmod(tmp, 0o666 & ~_umask())  # an ordinary file, as the user's umask says
        os.replace(tmp, dst)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:  # a cut or corrupt gzip source
        Path(tmp).unlink(missing_ok=True)
        raise OSError(f"{src} cannot be read to the end ({e}); save it as .json.gz to "
                      "keep its bytes as they are") from e
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dst
