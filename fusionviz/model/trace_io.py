"""Read and write traces: JSON (optionally gzip), versioned, atomic, never pickle.

``load_trace`` checks the format name and version, upgrades old versions through
``migrations``, and builds the frozen dataclasses of ``trace`` field by field, so a
malformed file fails with a message that names the file and the bad field.
"""

from __future__ import annotations

import dataclasses
import gc
import gzip
import itertools
import json
import os
import tempfile
import types
import typing
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from fusionviz.model import migrations
from fusionviz.model.trace import FORMAT, VERSION, Trace

try:  # optional: a faster parser (see _parse)
    import orjson as _orjson
except ImportError:  # pragma: no cover (installed in the dev environment)
    _orjson = None

MAX_BYTES = 512 * 1024 * 1024  # uncompressed JSON size cap
_GZIP_MAGIC = b"\x1f\x8b"


class TraceError(ValueError):
    """A trace file could not be read; the message says which file and why."""


@dataclass
class LoadReport:
    """What a lenient load ignored (unknown fields) on the way."""

    ignored: list[str] = dataclasses.field(default_factory=list)


def save_trace(trace: Trace, path: str | os.PathLike) -> None:
    """Write ``trace`` atomically (temp file + rename); ``.gz`` paths are gzipped."""
    path = Path(path)
    data = json.dumps(to_dict(trace), separators=(",", ":")).encode()
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
) -> Trace:
    """Load a trace file; raise TraceError naming the file and the problem.

    Parameters
    ----------
    strict
        Also reject fields this version does not know (lenient loads ignore them
        and list them in ``report``).
    max_bytes
        Refuse files whose JSON is larger than this.
    """
    path = Path(path)
    # One pause for parse and build: a collection in between would walk the whole
    # parsed JSON (~0.2 s at 20k nodes) only to find no garbage.
    with _gc_paused():
        try:
            raw = _read_bytes(path, max_bytes)
            data = _parse(raw)
        except TraceError:
            raise
        except (OSError, EOFError, gzip.BadGzipFile) as e:
            raise TraceError(f"{path}: cannot read the file: {e}") from e
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise TraceError(f"{path}: not a fusionviz trace (invalid JSON: {e})") from e
        try:
            # The parsed JSON is ours: the fast builder may consume it in place (and
            # when it gives up half-way, the careful builder starts from a fresh parse).
            return _from_dict(data, strict, report, reparse=lambda: json.loads(raw))
        except TraceError as e:
            raise TraceError(f"{path}: {e}") from e


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


def _from_dict(data: object, strict: bool, report: LoadReport | None, reparse) -> Trace:
    """``trace_from_dict``; ``reparse`` (when given) returns a fresh copy of ``data``
    and lets the fast builder consume ``data`` in place."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise TraceError(f"not a fusionviz trace (expected format {FORMAT!r})")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise TraceError(f"bad trace version {version!r}")
    if version > VERSION:
        raise TraceError(
            f"trace version {version} is newer than this fusionviz understands "
            f"(up to {VERSION}); upgrade fusionviz to open it"
        )
    data = migrations.upgrade(data, version)
    with _gc_paused():
        try:
            return _converter(Trace, owned=reparse is not None)(data)
        except _Unusual:
            # Unknown fields, wrong types, missing fields: the field-by-field builder
            # names the bad field (or reports what it ignored).
            if reparse is not None:
                data = migrations.upgrade(reparse(), version)
            return _build(Trace, data, "trace", strict, report or LoadReport())
        finally:
            _SHARED.clear()


@contextmanager
def _gc_paused():
    """No cyclic GC while a trace's million objects are allocated (none are garbage).

    Collections triggered by the allocations would walk the growing trace over and
    over: ~60% of a large load's time.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _Unusual(Exception):
    """The fast builder met something it leaves to ``_build`` and its messages."""


_CONVERTERS: dict[tuple[object, bool], typing.Callable[[object], object]] = {}


def _converter(tp: object, owned: bool = False):
    """A function building ``tp`` from well-formed JSON, made once per type.

    The fast path of ``_build``: no field path strings and no type introspection per
    value; anything unusual raises ``_Unusual`` instead of a message. ``owned``: the
    JSON is ours to consume (just parsed), so its dicts become the objects' ``__dict__``
    in place instead of being copied.
    """
    conv = _CONVERTERS.get((tp, owned))
    if conv is None:
        conv = _CONVERTERS[tp, owned] = _make_converter(tp, owned)
    return conv


def _make_converter(tp: object, owned: bool):
    if dataclasses.is_dataclass(tp):
        return _dataclass_converter(tp, owned)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        inner = _converter(next(a for a in args if a is not type(None)), owned)
        if type(None) not in args:
            return inner
        return lambda v: None if v is None else inner(v)
    if origin is tuple:
        return _tuple_converter(args[0], owned)
    if tp is dict or tp is float or tp is int or isinstance(tp, type):
        return _scalar_converter(tp)
    raise _Unusual  # a type _build rejects as well


def _tuple_converter(item: object, owned: bool):
    if item is str:
        return _strings
    if item == tuple[str, ...]:
        return _groups
    inner = _converter(item, owned)

    def items(v):
        if type(v) is not list:
            raise _Unusual
        return tuple(map(inner, v))

    return items


# Equal tuples of names met during one load, shared: a round's groups reappear as the
# next round's and in its candidates, so a big trace holds a fifth as many tuples (less
# memory, and fewer objects for every later garbage collection to walk).
_SHARED: dict[tuple[str, ...], tuple[str, ...]] = {}


def _strings(v):
    if type(v) is not list:
        raise _Unusual
    try:
        "".join(v)  # type-checks every item at C speed
    except TypeError:
        raise _Unusual from None
    t = tuple(v)
    return _SHARED.setdefault(t, t)


def _groups(v):
    """A tuple of groups (tuples of node names): the most common tuples of a trace."""
    if type(v) is not list or (v and set(map(type, v)) != {list}):
        raise _Unusual
    try:
        "".join(itertools.chain.from_iterable(v))
    except TypeError:
        raise _Unusual from None
    groups = tuple(map(tuple, v))
    return tuple(map(_SHARED.setdefault, groups, groups))


def _scalar_converter(tp: type):
    def convert(v):
        if type(v) is tp:
            return v
        if tp is float and isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, tp) and not (tp is int and isinstance(v, bool)):
            return v
        raise _Unusual

    return convert


def _dataclass_converter(cls: type, owned: bool):
    """Generated code (like dataclasses' own ``__init__``): one check or call per field.

    A dict with exactly the class's fields is converted in place and becomes the new
    object's ``__dict__`` (a copy of it unless ``owned``), which is what the generated
    frozen ``__init__`` would store, without one ``object.__setattr__`` per field (the
    model classes have no ``__post_init__``). Dicts that rely on defaults take
    ``_with_defaults``.
    """
    hints, fields = _hints(cls), dataclasses.fields(cls)
    env = {"cls": cls, "new": object.__new__, "set_attr": object.__setattr__,
           "_Unusual": _Unusual, "slow": _with_defaults(cls, hints, fields, owned)}
    body = []
    for i, f in enumerate(fields):
        body.append(f"x = v[{f.name!r}]")
        body += _field_code(hints[f.name], f"v[{f.name!r}]", f"c{i}", env, owned)
    src = "\n        ".join(body)
    code = f"""
def build(v):
    if type(v) is not dict or len(v) != {len(fields)}:
        return slow(v)
    {"" if owned else "v = dict(v)"}
    try:
        {src}
    except KeyError:
        raise _Unusual from None
    obj = new(cls)
    set_attr(obj, "__dict__", v)  # the class's own __setattr__ refuses (frozen)
    return obj
"""
    exec(code, env)  # noqa: S102 (generated from the model's own field list)
    return env["build"]


def _field_code(tp: object, target: str, conv: str, env: dict, owned: bool) -> list[str]:
    """Lines checking or converting a field's JSON value ``x`` into ``target``.

    Scalars are checked inline and empty lists become ``()`` without a call, the
    common cases of a trace's ~1M values. (Nested converters are made now: the model's
    types do not refer back to each other.)
    """
    env[conv] = _converter(tp, owned)
    scalar, optional = _scalar_of(tp)
    if scalar is not None:
        env[f"t_{conv}"] = scalar
        test = f"type(x) is not t_{conv}"
        return [f"if {'x is not None and ' if optional else ''}{test}: {target} = {conv}(x)"]
    if typing.get_origin(tp) is tuple:
        return [f"{target} = {conv}(x) if x or type(x) is not list else ()"]
    return [f"{target} = {conv}(x)"]


def _scalar_of(tp: object) -> tuple[type | None, bool]:
    """(the plain type checked inline, whether None is allowed) or (None, _)."""
    optional = False
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        if len(args) != 1:
            return None, False
        tp = args[0]
    if tp in (str, int, float, bool, dict):
        return tp, optional
    return None, False


def _with_defaults(cls: type, hints: dict, fields, owned: bool):
    """The builder of dicts that leave fields out (their defaults fill in)."""
    known = frozenset(hints)
    missing = dataclasses.MISSING
    defaults = {f.name: f.default for f in fields if f.default is not missing}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not missing}
    convs: list[tuple[str, object]] = []
    new = object.__new__

    def build(v):
        if not isinstance(v, dict) or not known.issuperset(v):
            raise _Unusual
        if not convs:
            convs.extend((f.name, _converter(hints[f.name], owned)) for f in fields)
        state = {}
        for name, conv in convs:
            if name in v:
                state[name] = conv(v[name])
            elif name in defaults:
                state[name] = defaults[name]
            elif name in factories:
                state[name] = factories[name]()
            else:
                raise _Unusual
        obj = new(cls)
        obj.__dict__.update(state)
        return obj

    return build


def _read_bytes(path: Path, max_bytes: int) -> bytes:
    if path.stat().st_size > max_bytes:
        raise TraceError(f"{path}: file larger than {max_bytes} bytes")
    with open(path, "rb") as f:
        head = f.read(2)
    opener = gzip.open if head == _GZIP_MAGIC else open
    with opener(path, "rb") as f:
        raw = f.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise TraceError(f"{path}: trace larger than {max_bytes} bytes uncompressed")
    return raw


_HINTS: dict[type, dict[str, object]] = {}


def _hints(cls: type) -> dict[str, object]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _build(tp: object, value: object, where: str, strict: bool, report: LoadReport):
    """Convert JSON ``value`` to type ``tp`` or raise TraceError at ``where``."""
    if dataclasses.is_dataclass(tp):
        return _build_dataclass(tp, value, where, strict, report)
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        inner = [a for a in args if a is not type(None)]
        return _build(inner[0], value, where, strict, report)
    if origin is tuple:
        if not isinstance(value, list):
            raise TraceError(f"{where}: expected a list, got {type(value).__name__}")
        item = args[0]
        return tuple(
            _build(item, v, f"{where}[{i}]", strict, report) for i, v in enumerate(value)
        )
    if tp is dict:
        if not isinstance(value, dict):
            raise TraceError(f"{where}: expected an object, got {type(value).__name__}")
        return value
    return _build_scalar(tp, value, where)


def _build_scalar(tp: object, value: object, where: str):
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if tp is int and isinstance(value, bool):
        raise TraceError(f"{where}: expected int, got bool")
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    name = getattr(tp, "__name__", str(tp))
    raise TraceError(f"{where}: expected {name}, got {type(value).__name__}")


def _build_dataclass(cls, value, where: str, strict: bool, report: LoadReport):
    if not isinstance(value, dict):
        raise TraceError(f"{where}: expected an object, got {type(value).__name__}")
    hints = _hints(cls)
    unknown = [k for k in value if k not in hints]
    if unknown:
        if strict:
            raise TraceError(f"{where}: unknown field(s) {', '.join(map(str, unknown))}")
        report.ignored.extend(f"{where}.{k}" for k in unknown)
    kwargs = {}
    for f in dataclasses.fields(cls):
        if f.name in value:
            kwargs[f.name] = _build(
                hints[f.name], value[f.name], f"{where}.{f.name}", strict, report
            )
        elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            raise TraceError(f"{where}: missing field {f.name!r}")
    return cls(**kwargs)
