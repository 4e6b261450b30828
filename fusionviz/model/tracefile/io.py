"""Read and write traces: JSON Lines (optionally gzip), versioned, atomic, never pickle.

``save_trace`` writes the core of a trace on one line and its bulk on part lines
(``parts``), in columns with one table of strings (format 3, ``columns``), times in
whole nanoseconds and eager kernels grouped (format 4, ``kernel_order``).
``load_trace`` checks the format name and version, upgrades old versions through
``migrations``, and builds the frozen dataclasses of ``trace`` field by field
(``build``), so a malformed file fails with a message that names the file and the bad
field; with ``lazy`` it parses and builds the bulk only when read.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import tempfile
import zlib
from pathlib import Path

from fusionviz.model.errors import TraceError
from fusionviz.model.gc_pause import gc_paused
from fusionviz.model.lazy import sourced
from fusionviz.model.trace import FORMAT, VERSION, Script, Trace
from fusionviz.model.tracefile import migrations
from fusionviz.model.tracefile import parts as trace_parts
from fusionviz.model.tracefile.bounded import MAX_BYTES, read_bytes
from fusionviz.model.tracefile.bounded import read_bytes as _read_bytes  # whole-file reads
from fusionviz.model.tracefile.build import LoadReport, build_trace

try:  # optional: a faster parser (see _parse)
    import orjson as _orjson
except ImportError:  # pragma: no cover (installed in the dev environment)
    _orjson = None



def save_trace(trace: Trace, path: str | os.PathLike, *, version: int = VERSION) -> None:
    """Write ``trace`` atomically (temp file + rename); ``.gz`` paths are gzipped.

    ``version``: 4 (columns, ``tracefile.columns``, times in whole nanoseconds), 3
    (columns, times as they are) or 2 (records), for a reader that knows an older
    version only; the data is the same, but for times rounded to the nanosecond (4)."""
    if version not in (2, 3, 4):
        raise ValueError(f"cannot write trace version {version} (2, 3 or 4)")
    data = to_dict(trace)
    data["version"] = version
    _write(Path(path), trace_parts.encode(data, trace_parts.dumps_stdlib, version=version))


def read_script(path: str | os.PathLike) -> Script:
    """The script record of a trace file, read from its core line only (a cheap look
    at how the script ended); TraceError when that line is not a readable trace."""
    path = Path(path)
    try:
        text = read_bytes(path, first_line=True)
    except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
        raise TraceError(f"{path}: cannot read the file: {e}") from e
    try:
        core = json.loads(text[:text.find(b"\n")] if b"\n" in text else text)
        if not isinstance(core, dict) or "parts" not in core:
            raise TraceError("no core line")
        core = {k: v for k, v in core.items()  # (version 3: entries are in columns)
                if k not in ("parts", "graphs", "entries", "strings")}
        return trace_from_dict(core).script
    except (ValueError, TypeError, ArithmeticError) as e:
        raise TraceError(f"{path}: no readable core line: {e}") from e
    except RecursionError as e:
        raise TraceError(f"{path}: no readable core line: nested too deeply") from e


def replace_script(path: str | os.PathLike, script: Script) -> None:
    """Rewrite the script record of a trace file, in its core line only: the part
    lines are copied as they are, unparsed."""
    path = Path(path)
    raw = _read_bytes(path, MAX_BYTES)
    end = raw.find(b"\n")
    core = json.loads(raw[:end]) if end > 0 else None
    if not isinstance(core, dict) or "parts" not in core:
        raise TraceError(f"{path}: no core line to rewrite")
    core["script"] = to_dict(script)
    _write(path, trace_parts.dumps_stdlib(core) + raw[end:])


def _write(path: Path, data: bytes) -> None:
    """``data`` to ``path`` atomically (temp file + rename); ``.gz`` paths gzipped."""
    if path.suffix == ".gz":
        data = gzip.compress(data, compresslevel=6, mtime=0)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a trace is an ordinary file
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def json_value(v: object):
    """``v`` as a value a trace can hold: plain scalars as they are, numbers of other
    types (sympy, numpy) as float, anything else as its ``str``."""
    if isinstance(v, bool | int | float | str) or v is None:
        return v
    try:
        return float(v)
    except (TypeError, ValueError):
        return str(v)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def to_dict(obj) -> dict:
    """The JSON-ready dict of a trace (or of any part of it)."""
    return _plain(obj)


_FIELDS: dict[type, tuple[str, ...]] = {}


def _plain(obj):
    """Like ``dataclasses.asdict`` without its deep copies (several times faster)."""
    cls = type(obj)
    names = _FIELDS.get(cls)
    if names is None and dataclasses.is_dataclass(cls):
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    if names is not None:
        return {n: _plain(getattr(obj, n)) for n in names}
    if cls is tuple or cls is list:
        return [_plain(v) for v in obj]
    if cls is dict:
        return {k: _plain(v) for k, v in obj.items()}
    return obj


def load_trace(
    path: str | os.PathLike,
    *,
    strict: bool = False,
    max_bytes: int = MAX_BYTES,
    report: LoadReport | None = None,
    lazy: bool = False,
) -> Trace:
    """Load a trace file; raise TraceError naming the file and the problem.

    Parameters
    ----------
    strict
        Also reject fields this version does not know (lenient loads ignore them
        and list them in ``report``).
    max_bytes
        Refuse files whose JSON is larger than this.
    lazy
        Leave the bulk (nodes' reads, writes and origins; rounds' candidates and
        verdicts) unparsed and unbuilt until first read (``fusionviz.model.lazy``): a
        big trace opens in about half the time. A malformed part then raises
        TraceError when it is read, or from ``lazy.complete``. Ignored with ``strict``
        or ``report``, which are about the whole file.
    """
    path = Path(path)
    # A lazy look keeps what a cut file still holds (the graphs before the cut); a
    # strict or reported load is about the whole file.
    partial = lazy and not strict and report is None
    cut: list[str] = []
    # One pause for parse and build: a collection in between would walk the whole
    # parsed JSON (~0.2 s at 20k nodes) only to find no garbage.
    with gc_paused():
        try:
            raw = _read_bytes(path, max_bytes, cut if partial else None)
        except TraceError:
            raise
        except (OSError, EOFError, gzip.BadGzipFile, zlib.error) as e:
            raise TraceError(f"{path}: cannot read the file: {e}") from e
        if not raw.strip():
            raise TraceError(f"{path}: holds no text (an empty or blank file), not a trace")
        try:
            data, parts = trace_parts.split(raw, _parse, partial)
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise TraceError(f"{path}: not a fusionviz trace (invalid JSON: {e})") from e
        except TraceError as e:
            raise TraceError(f"{path}: {e}") from e
        except RecursionError as e:
            raise TraceError(f"{path}: not a fusionviz trace (JSON nested too deeply)") from e
        except ValueError as e:  # e.g. an integer of more than 4300 digits
            raise TraceError(f"{path}: not a fusionviz trace (invalid JSON: {e})") from e
        if parts is not None:
            parts.source = str(path)
        try:
            if strict or report is not None:
                lazy = False  # what is checked or reported is the whole file, now
            if parts is not None:
                parts.attach(data, lazy)
            # The parsed JSON is ours: the fast builder may consume it in place (and
            # when it gives up half-way, the careful builder starts from a fresh parse).
            with sourced(str(path)):
                trace = _from_dict(data, strict, report, reparse=lambda: _parse_all(raw),
                                   lazy=lazy, shared=parts.shared if parts and lazy else None)
            if parts is not None and parts.missing:
                cut.append(f"the file is cut: its last {parts.missing} of "
                           f"{parts.present + parts.missing} part lines are missing, so "
                           "the details and ledgers they held cannot be read")
            if cut:
                trace = dataclasses.replace(trace, warnings=(*trace.warnings, *cut))
            return trace
        except TraceError as e:
            raise TraceError(f"{path}: {e}") from e
        except RecursionError as e:
            raise TraceError(f"{path}: the trace is nested too deeply to read") from e
        except ArithmeticError as e:  # a number no field can hold (10**400 as a time)
            raise TraceError(f"{path}: a number in the trace is out of range: {e}") from e


def _parse_all(raw: bytes) -> object:
    """The whole trace as one JSON value, parts in place, by the reference parser."""
    data, parts = trace_parts.split(raw, json.loads)
    return data if parts is None else parts.attach(data, lazy=False)


def _parse(raw: bytes):
    """JSON of a trace file: orjson when installed (2x faster), else the stdlib.

    orjson is optional because ``fusionviz.model`` also runs where only torch is
    installed. It refuses what the stdlib accepts (NaN, integers beyond 64 bits,
    non-UTF-8 encodings): those files, and invalid ones, go to ``json.loads``, whose
    result or error message is the reference.
    """
    if _orjson is not None:
        try:
            return _orjson.loads(raw)
        except _orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def trace_from_dict(
    data: object, *, strict: bool = False, report: LoadReport | None = None
) -> Trace:
    """Build a Trace from parsed JSON, upgrading old versions first."""
    return _from_dict(data, strict, report, reparse=None)


def _from_dict(data: object, strict: bool, report: LoadReport | None, reparse,
               lazy: bool = False, shared: dict | None = None) -> Trace:
    """``trace_from_dict``; ``reparse`` (when given) returns a fresh copy of ``data``
    and lets the fast builder consume ``data`` in place."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TraceError(f"not a fusionviz trace (expected format {FORMAT!r})")
    version = data.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise TraceError(f"bad trace version {version!r}")
    if version > VERSION:
        raise TraceError(
            f"trace version {version} is newer than this fusionviz understands "
            f"(up to {VERSION}); upgrade fusionviz to open it"
        )
    data = migrations.upgrade(data, version)
    fresh = None if reparse is None else (lambda: migrations.upgrade(reparse(), version))
    return build_trace(data, owned=reparse is not None, lazy=lazy, strict=strict,
                       report=report, reparse=fresh, shared=shared)
