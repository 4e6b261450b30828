"""Save a trace file under another name, byte for byte (or un/compressed by suffix)."""

from __future__ import annotations

import gzip
import os
import shutil
import tempfile
from pathlib import Path


def _gz(path: Path) -> bool:
    return path.name.endswith(".gz")


def save_trace_as(source: str | os.PathLike, target: str | os.PathLike) -> Path:
    """Copy the trace at ``source`` to ``target``: the same bytes when both or neither
    end in ``.gz``, else compressed or decompressed to match ``target``. The copy is
    written beside ``target`` and renamed over it, so a failed save leaves no half file."""
    src, dst = Path(source), Path(target)
    if src.resolve() == dst.resolve():
        return dst
    fd, tmp = tempfile.mkstemp(prefix=f".{dst.name}.", dir=dst.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            if _gz(src) == _gz(dst):
                with open(src, "rb") as f:
                    shutil.copyfileobj(f, out)
            elif _gz(dst):
                with open(src, "rb") as f, gzip.GzipFile(fileobj=out, mode="wb",
                                                         filename="", mtime=0) as z:
                    shutil.copyfileobj(f, z)
            else:
                with gzip.open(src, "rb") as f:
                    shutil.copyfileobj(f, out)
        os.chmod(tmp, 0o644)
        os.replace(tmp, dst)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return dst
