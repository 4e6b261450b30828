"""Build the trace dataclasses from parsed JSON: a fast path and a careful one.

The fast path (``build_trace``) runs code generated once per model class: one check
or call per field, the parsed JSON's dicts reused as the objects' ``__dict__``, no
field path strings. Anything unusual (a wrong type, a missing or unknown field) makes
it give up, and the careful builder starts over on the same JSON, field by field, to
name the bad field in its message or report what it ignored. With ``lazy`` the
model's lazy fields stay JSON until first read (``fusionviz.model.lazy``).
"""

from __future__ import annotations

import dataclasses
import itertools
import types
import typing
from contextlib import contextmanager
from dataclasses import dataclass

from fusionviz.model.errors import TraceError
from fusionviz.model.gc_pause import gc_paused
from fusionviz.model.lazy import Part, Pending
from fusionviz.model.trace import Trace


@dataclass
class LoadReport:
    """What a lenient load ignored (unknown fields) on the way."""

    ignored: list[str] = dataclasses.field(default_factory=list)


def build_trace(data: dict, *, owned: bool, lazy: bool, strict: bool,
                report: LoadReport | None, reparse=None,
                shared: dict | None = None) -> Trace:
    """A Trace from upgraded JSON ``data``; TraceError names a bad field.

    ``owned``: ``data`` may be consumed in place; then ``reparse`` returns a fresh copy
    for the careful builder when the fast one gives up half-way. ``shared``: the table
    of equal name tuples to share, kept for the lazily built parts of the same file.
    """
    with gc_paused(), _interning({} if shared is None else shared):
        try:
            return _converter(Trace, owned, lazy)(data)
        except _Unusual:
            if reparse is not None:
                data = reparse()
            return _build(Trace, data, "trace", strict, report or LoadReport())


class _Unusual(Exception):
    """The fast builder met something it leaves to ``_build`` and its messages."""


_CONVERTERS: dict[tuple[object, bool, bool], typing.Callable[[object], object]] = {}


def _converter(tp: object, owned: bool = False, lazy: bool = False):
    """A function building ``tp`` from well-formed JSON, made once per type.

    The fast path of ``_build``: no field path strings and no type introspection per
    value; anything unusual raises ``_Unusual`` instead of a message. ``owned``: the
    JSON is ours to consume (just parsed), so its dicts become the objects' ``__dict__``
    in place instead of being copied. ``lazy``: fields the model marks lazy (see
    ``fusionviz.model.lazy``) are left as ``Pending`` JSON, built when first read.
    """
    conv = _CONVERTERS.get((tp, owned, lazy))
    if conv is None:
        conv = _CONVERTERS[tp, owned, lazy] = _make_converter(tp, owned, lazy)
    return conv


def _make_converter(tp: object, owned: bool, lazy: bool):
    if dataclasses.is_dataclass(tp):
        return _dataclass_converter(tp, owned, lazy)
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (types.UnionType, typing.Union):
        inner = _converter(next(a for a in args if a is not type(None)), owned, lazy)
        if type(None) not in args:
            return inner
        return lambda v: None if v is None else inner(v)
    if origin is tuple:
        return _tuple_converter(args[0], owned, lazy)
    if tp is dict:
        return _free_form
    if tp is float or tp is int or isinstance(tp, type):
        return _scalar_converter(tp)
    raise _Unusual  # a type _build rejects as well


def _tuple_converter(item: object, owned: bool, lazy: bool):
    if item is str:
        return _strings
    if item == tuple[str, ...]:
        return _groups
    inner = _converter(item, owned, lazy)

    def items(v):
        if type(v) is not list:
            raise _Unusual
        return tuple(map(inner, v))

    return items


# Equal tuples of names met during one load, shared: a round's groups reappear as the
# next round's and in its candidates, so a big trace holds a fifth as many tuples (less
# memory, and fewer objects for every later garbage collection to walk).
_SHARED: dict[tuple[str, ...], tuple[str, ...]] = {}


@contextmanager
def _interning(table: dict):
    """Share equal tuples through ``table`` while building (``_SHARED`` is it)."""
    global _SHARED
    saved, _SHARED = _SHARED, table
    try:
        yield
    finally:
        _SHARED = saved


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


# A field typed ``dict`` (a score, a launch config, the environment, the Inductor
# config) holds JSON of any shape; deeper than this (inside the field) it is refused at
# load, so nothing that walks the trace later (saving it, comparing, showing it)
# recurses past Python's limit: a 1,000-deep list in ``config`` loaded, then saving
# the trace raised RecursionError (#19).
MAX_FREE_DEPTH = 64
_FLAT = frozenset({str, int, float, bool, type(None)})


def _free_form(v):
    """A ``dict`` field's JSON, as it is: a dict, nested at most ``MAX_FREE_DEPTH``."""
    if type(v) is not dict:
        raise _Unusual
    if not _FLAT.issuperset(map(type, v.values())) and _depth(v) > MAX_FREE_DEPTH:
        raise _Unusual
    return v


def _depth(value: object) -> int:
    """How deeply JSON ``value`` nests lists and objects (a scalar: 0; ``[]``: 1),
    counted without recursing, and only until it passes ``MAX_FREE_DEPTH``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if type(v) is dict:
            v = v.values()
        elif type(v) is not list:
            continue
        deepest = max(deepest, depth)
        if depth > MAX_FREE_DEPTH:
            break
        stack.extend((x, depth + 1) for x in v if type(x) is dict or type(x) is list)
    return deepest


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


def _dataclass_converter(cls: type, owned: bool, lazy: bool):
    """Generated code (like dataclasses' own ``__init__``): one check or call per field.

    A dict with exactly the class's fields is converted in place and becomes the new
    object's ``__dict__`` (a copy of it unless ``owned``), which is what the generated
    frozen ``__init__`` would store, without one ``object.__setattr__`` per field (the
    model classes have no ``__post_init__``). Dicts that rely on defaults take
    ``_with_defaults``.
    """
    hints, fields = _hints(cls), dataclasses.fields(cls)
    env = {"cls": cls, "new": object.__new__, "set_attr": object.__setattr__,
           "_Unusual": _Unusual, "slow": _with_defaults(cls, hints, fields, owned, lazy)}
    body = []
    for i, f in enumerate(fields):
        body.append(f"x = v[{f.name!r}]")
        if lazy and f.name in getattr(cls, "__lazy_fields__", ()):
            body += _pending_code(hints[f.name], f"v[{f.name!r}]", f"c{i}", env)
        else:
            body += _field_code(hints[f.name], f"v[{f.name!r}]", f"c{i}", env, owned, lazy)
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


def _field_code(tp: object, target: str, conv: str, env: dict, owned: bool,
                lazy: bool) -> list[str]:
    """Lines checking or converting a field's JSON value ``x`` into ``target``.

    Scalars are checked inline and empty lists become ``()`` without a call, the
    common cases of a trace's ~1M values. (Nested converters are made now: the model's
    types do not refer back to each other.)
    """
    env[conv] = _converter(tp, owned, lazy)
    scalar, optional = _scalar_of(tp)
    if scalar is not None:
        env[f"t_{conv}"] = scalar
        test = f"type(x) is not t_{conv}"
        return [f"if {'x is not None and ' if optional else ''}{test}: {target} = {conv}(x)"]
    if typing.get_origin(tp) is tuple:
        return [f"{target} = {conv}(x) if x or type(x) is not list else ()"]
    return [f"{target} = {conv}(x)"]


def _pending_code(tp: object, target: str, conv: str, env: dict) -> list[str]:
    """Lines leaving a lazy field's JSON list ``x`` unbuilt (empty lists become ``()``)."""
    env[conv] = _lazy_builder(tp)
    env["Pending"], env["Part"] = Pending, Part
    return ["if type(x) is Part: " + f"{target} = Pending(x, {conv})",
            "elif type(x) is not list: raise _Unusual",
            f"else: {target} = Pending(x, {conv}) if x else ()"]


def _pending_converter(tp: object):
    """A lazy field's JSON (a list, or a part line) left unbuilt, as ``_pending_code``."""
    builder = _lazy_builder(tp)

    def pending(x):
        if type(x) is Part:
            return Pending(x, builder)
        if type(x) is not list:
            raise _Unusual
        return Pending(x, builder) if x else ()

    return pending


def _lazy_builder(tp: object):
    """Builds a ``Pending`` field when it is first read (see ``fusionviz.model.lazy``).

    The fast converter copies the JSON's dicts (not ``owned``) so that, when it gives
    up, the careful builder reads the JSON as it was and names the bad field.
    """
    fast = _converter(tp, owned=False)

    def build(raw, owner, name):
        table, part = {}, None
        if raw.__class__ is Part:  # still in the file's part lines: parse that line
            part, table = raw, raw.store.shared  # and share tuples with the rest of the file
            raw = part.value()
        with _interning(table):
            try:
                value = fast(raw)
            except _Unusual:  # as an eager load does: json's reading, built with care
                where = f"{type(owner).__name__} {_label(owner)}.{name}"
                value = _build(tp, part.reference() if part else raw, where, False,
                               LoadReport())
        if part is not None:
            part.done()
        return value

    return build


def _label(owner: object) -> str:
    name = owner.__dict__.get("name")
    return repr(name) if isinstance(name, str) else f"#{owner.__dict__.get('index', '?')}"


def _scalar_of(tp: object) -> tuple[type | None, bool]:
    """(the plain type checked inline, whether None is allowed) or (None, _)."""
    optional = False
    if typing.get_origin(tp) in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        optional = len(args) < len(typing.get_args(tp))
        if len(args) != 1:
            return None, False
        tp = args[0]
    if tp in (str, int, float, bool):  # not dict: its depth is checked (_free_form)
        return tp, optional
    return None, False


def _with_defaults(cls: type, hints: dict, fields, owned: bool, lazy: bool = False):
    """The builder of dicts that leave fields out (their defaults fill in): a trace
    written before a field was added. With ``lazy``, lazy fields stay ``Pending``."""
    known = frozenset(hints)
    missing = dataclasses.MISSING
    defaults = {f.name: f.default for f in fields if f.default is not missing}
    factories = {f.name: f.default_factory for f in fields if f.default_factory is not missing}
    lazy_names = getattr(cls, "__lazy_fields__", ()) if lazy else ()
    convs: list[tuple[str, object]] = []
    new = object.__new__

    def build(v):
        if not isinstance(v, dict) or not known.issuperset(v):
            raise _Unusual
        if not convs:
            convs.extend((f.name, _pending_converter(hints[f.name]) if f.name in lazy_names
                          else _converter(hints[f.name], owned, lazy)) for f in fields)
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
        if _depth(value) > MAX_FREE_DEPTH:
            raise TraceError(f"{where}: nested too deeply (more than {MAX_FREE_DEPTH} "
                             "levels of lists and objects)")
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
