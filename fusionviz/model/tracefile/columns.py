"""The compact encoding of a trace's bulk (format 3): columns and a table of strings.

A list of records of one model class (a node's origins, a round's verdicts) is
written field by field, one column per field, instead of record by record; every
string becomes its index in the file's table of strings, written once. The same FX
name, module path, source line, file or reason text, repeated on thousands of records
kilobytes apart (beyond gzip's 32 KB window), then costs a few bytes each. The
encoding follows the field types of ``fusionviz.model.trace``:

- ``str``: the string's index in the table, each written as the difference from the
  index before it in the column (new strings take the next index: 1, 1, 1); the
  table writes numbered names (``add_253``) as a prefix and a number (``Strings.table``);
- a dataclass: ``{field: column}`` for each field, each column as long as the list;
- ``tuple[X, ...]``: ``{"n": [length of each], "v": column of all items, in order}``;
- anything else (numbers, booleans, ``None``, free-form dicts, optional records):
  the values as they are.

``decode`` gives back exactly the JSON ``encode`` was given (the dicts of ``to_dict``),
so the builders of ``build`` read a format-3 file as they read a format-2 one. It
checks what it reads: a column of the wrong length or type, a string index out of
range, a length that is negative, all raise ``TraceError``. A decoded record holds a
pointer per field, and every field takes an item (a comma) of its column in the text,
which ``bounded.estimate_memory`` counts; lengths must add up to the columns they
divide, so a short text cannot claim many records. Nothing refers to anything but the
table, which holds strings and numbered names (a prefix and a number, counted from the
last number of that prefix): there is no chain of references to follow, no cycle.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import typing

from fusionviz.model.errors import TraceError

_HINTS: dict[type, tuple[tuple[str, object], ...]] = {}
_MAX_DIGITS = 18  # a numbered name's number: at most this many digits ...
_NUMBERED = re.compile(rf"(.*?)(0|[1-9][0-9]{{0,{_MAX_DIGITS - 1}}})", re.DOTALL)
_MAX_NUMBERED = 200  # ... in a name of at most this many characters


def _fields(cls: type) -> tuple[tuple[str, object], ...]:
    fields = _HINTS.get(cls)
    if fields is None:
        hints = typing.get_type_hints(cls)
        lazy = getattr(cls, "__lazy_fields__", ())  # on part lines of their own
        fields = _HINTS[cls] = tuple((f.name, hints[f.name])
                                     for f in dataclasses.fields(cls) if f.name not in lazy)
    return fields


def _kind(tp: object) -> tuple[str, object]:
    """How values of type ``tp`` are written: ("str"|"record"|"tuple"|"plain", inner)."""
    if tp is str:
        return "str", None
    if dataclasses.is_dataclass(tp):
        return "record", tp
    if typing.get_origin(tp) is tuple and len(typing.get_args(tp)) == 2 \
            and typing.get_args(tp)[1] is Ellipsis:
        return "tuple", typing.get_args(tp)[0]
    return "plain", None


class Strings:
    """The table of strings a writer fills: each string's index, first met first."""

    def __init__(self) -> None:
        self.index: dict[str, int] = {}

    def __call__(self, s: str) -> int:
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.index)
        return i

    def table(self) -> list[object]:
        """The table as written: a numbered name (``add_253``, ``buf12``: a prefix and a
        number without leading zeros) as ``[prefix, difference from the number of the
        name before it with that prefix]`` (the first: from -1), other strings as they
        are. FX and buffer names count up: ``["add_", 1]`` again and again, which gzip
        packs to almost nothing, where the names themselves cost it ~3 bytes each."""
        last: dict[str, int] = {}
        out: list[object] = []
        for s in self.index:
            m = _NUMBERED.fullmatch(s) if len(s) <= _MAX_NUMBERED else None
            if m is None:
                out.append(s)
                continue
            prefix, n = m.group(1), int(m.group(2))
            out.append([prefix, n - last.get(prefix, -1)])
            last[prefix] = n
        return out


def encode(tp: object, values: list, strings: Strings) -> object:
    """The column of ``values``, each the JSON of a ``tp`` (as ``to_dict`` gives it)."""
    kind, inner = _kind(tp)
    if kind == "str":
        if all(type(v) is str for v in values):
            indices = list(map(strings, values))
            # each the difference from the one before: a string first met gets the next
            # index, so a column of new names is a column of 1s
            return [b - a for a, b in zip([0, *indices], indices, strict=False)]
        return {"plain": values}  # not what the model writes: kept as it is
    if kind == "record":
        names = [name for name, _ in _fields(inner)]
        if not all(type(v) is dict and len(v) == len(names) and all(n in v for n in names)
                   for v in values):
            return {"plain": values}
        return {name: encode(hint, [v[name] for v in values], strings)
                for name, hint in _fields(inner)}
    if kind == "tuple":
        if not all(type(v) is list for v in values):
            return {"plain": values}
        return {"n": [len(v) for v in values],
                "v": encode(inner, [x for v in values for x in v], strings)}
    return values


def decode(tp: object, column: object, count: int, table: list[str]) -> list:
    """The ``count`` JSON values of ``column`` (written by ``encode``); TraceError
    when it is not such a column."""
    if type(column) is dict and len(column) == 1 and "plain" in column:
        return _sized(column["plain"], count, "values")
    kind, inner = _kind(tp)
    if kind == "str":
        column = _sized(column, count, "string indices")
        if column:
            if set(map(type, column)) != {int}:
                raise TraceError("a column of string indices holds something else than "
                                 "integers")
            column = list(itertools.accumulate(column))  # written as differences
            if min(column) < 0:
                raise TraceError("a column of string indices holds a negative index")
        try:
            return list(map(table.__getitem__, column))
        except IndexError:
            raise TraceError(f"a string index is out of range: {max(column):,} in a table "
                             f"of {len(table):,} strings") from None
    if kind == "record":
        fields = _fields(inner)
        if type(column) is not dict or len(column) != len(fields) \
                or not all(name in column for name, _ in fields):
            raise TraceError(f"a column of {inner.__name__} records does not have its "
                             f"fields: {_keys(column)}")
        names = [name for name, _ in fields]
        cols = [decode(hint, column[name], count, table) for name, hint in fields]
        # (every column was checked to hold ``count`` values)
        return [dict(zip(names, row)) for row in zip(*cols)] if cols \
            else [{} for _ in range(count)]
    if kind == "tuple":
        if type(column) is not dict or set(column) != {"n", "v"}:
            raise TraceError(f"a column of lists is not {{n, v}}: {_keys(column)}")
        lengths = _sized(column["n"], count, "lengths")
        if lengths and (set(map(type, lengths)) != {int} or min(lengths) < 0):
            raise TraceError("a column of lengths holds something else than lengths")
        ends = list(itertools.accumulate(lengths))
        items = decode(inner, column["v"], ends[-1] if ends else 0, table)
        # each value's slice of the items, at C speed (a round's groups: ~50k lists)
        return list(map(items.__getitem__, map(slice, [0, *ends[:-1]], ends)))
    return _sized(column, count, "values")


def _sized(column: object, count: int, what: str) -> list:
    if type(column) is not list:
        raise TraceError(f"a column of {what} is not a list: {type(column).__name__}")
    if len(column) != count:
        raise TraceError(f"a column of {what} holds {len(column):,} for {count:,} records")
    return column


def _keys(column: object) -> str:
    if type(column) is not dict:
        return type(column).__name__
    return ", ".join(sorted(map(str, column)))[:200]


def table(value: object) -> list[str]:
    """The table of strings of a file (written by ``Strings.table``), read back;
    TraceError unless it is a list of strings and ``[prefix, difference]`` pairs."""
    if type(value) is not list:
        raise TraceError("the file's table of strings is not a list of strings")
    if set(map(type, value)) <= {str}:
        return value
    last: dict[str, int] = {}
    out = []
    for item in value:
        if type(item) is str:
            out.append(item)
            continue
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str \
                or type(item[1]) is not int or len(item[0]) > _MAX_NUMBERED:
            raise TraceError("the file's table of strings is not a list of strings "
                             "and [prefix, number] pairs")
        prefix, n = item[0], last.get(item[0], -1) + item[1]
        if not 0 <= n < 10**_MAX_DIGITS:  # (what the writer writes: no huge numbers)
            raise TraceError("a numbered name of the file's table of strings has a "
                             f"number out of range (prefix {prefix[:40]!r})")
        last[prefix] = n
        out.append(prefix + str(n))
    return out


# Code (a graph's replay source, FX Python) with its numbered names (``add_253``) written
# as a marker, the prefix and the difference from the prefix's last number: each layer
# of a deep model is then the same text, which gzip packs (HF Llama's 64 layers:
# 200 KB of gzip -> 43 KB). Only code without the marker is written so.
_MARK = "$"  # not Python outside a string; JSON writes it as it is (not "\u007f")
_CODE_NAME = re.compile(rf"\b([A-Za-z_][A-Za-z0-9_]*?_)(0|[1-9][0-9]{{0,{_MAX_DIGITS - 1}}})\b")
# (a name written so: the marker, its prefix and the difference; the search for the
# marker, a literal, is fast; the prefix is the longest run that ends in "_" before
# digits, which is the shortest one ``_CODE_NAME`` found: the rest of the name is digits)
_CODE_REF = re.compile(rf"{re.escape(_MARK)}([A-Za-z_][A-Za-z0-9_]*_)(-?[0-9]{{1,{_MAX_DIGITS}}})")
# a decoded text: at most this many times its written length (1.1 for real code), plus
_MAX_GROWTH, _MAX_EXTRA = 2, 1 << 20  # ... this: a short or hostile one cannot balloon
_PIECE = 1 << 16  # characters decoded at a time (the split's strings: a few MB at most)


def encode_code(text: str) -> str | None:
    """``text`` with its numbered names as differences, or None (it holds the marker)."""
    if _MARK in text:
        return None
    last: dict[str, int] = {}

    def ref(m: re.Match) -> str:
        prefix, n = m.group(1), int(m.group(2))
        d, last[prefix] = n - last.get(prefix, -1), n
        return f"{_MARK}{prefix}{d}"

    return _CODE_NAME.sub(ref, text)


def decode_code(text: str) -> str:
    """The code ``encode_code`` was given; TraceError for a text it cannot have written
    (a number out of range, or a text that would grow past ``_MAX_GROWTH`` times).

    A piece of about ``_PIECE`` characters at a time (names never span lines), each
    split by one regular expression and put back together at C speed: ~40 ms for HF
    Llama's 1.5 MB of code, where one Python call per name took 170 ms."""
    limit = _MAX_GROWTH * len(text) + _MAX_EXTRA
    out: list[str] = []
    size, start = 0, 0
    last: dict[str, int] = {}
    while start < len(text):
        end = text.find("\n", start + _PIECE)
        end = len(text) if end < 0 else end + 1
        pieces = _CODE_REF.split(text, 0) if start == 0 and end == len(text) \
            else _CODE_REF.split(text[start:end])
        start = end
        numbers = []  # [text, prefix, difference, text, prefix, difference, ..., text]
        for prefix, d in zip(pieces[1::3], map(int, pieces[2::3]), strict=True):
            n = last[prefix] = last.get(prefix, -1) + d
            numbers.append(n)
        if numbers and not (0 <= min(numbers) and max(numbers) < 10**_MAX_DIGITS):
            raise TraceError("a numbered name of a graph's code has a number out of range")
        pieces[2::3] = map(str, numbers)
        out.append("".join(pieces))
        size += len(out[-1])
        if size > limit:
            raise TraceError("a graph's code would grow past twice its written size")
    return "".join(out)
