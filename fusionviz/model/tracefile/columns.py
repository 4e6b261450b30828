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
  the values as they are;
- format 4 (``ns``): the times of ``times.NANOS`` (a kernel's time, spread, start, end
  and launches; an eager kernel's time) as whole nanoseconds (``times``), and the
  table's strings with their numbered names as differences (``Strings.table``).

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
import operator
import re
import typing
from collections import deque

from fusionviz.model.errors import TraceError
from fusionviz.model.trace import EagerKernel
from fusionviz.model.tracefile import kernel_order
from fusionviz.model.tracefile.times import (
    NANOS,
    decode_times,
    encode_times,
    keys_of,
    lists,
    milliseconds,
    nanoseconds,
    sized,
)

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

    def table(self, coded: bool = False) -> list[object]:
        """The table as written: a numbered name (``add_253``, ``buf12``: a prefix and a
        number without leading zeros) as ``[prefix, difference from the number of the
        name before it with that prefix]`` (the first: from -1), other strings as they
        are. FX and buffer names count up: ``["add_", 1]`` again and again, which gzip
        packs to almost nothing, where the names themselves cost it ~3 bytes each.
        ``coded`` (format 4): the other strings with their numbered names as
        differences too (as code is: ``encode_code``), one string after the other; one
        that holds the marker as ``[string]``."""
        last: dict[str, int] = {}
        out: list[object] = []
        writer = _CodeWriter(_TABLE_NAME, RECENT) if coded else None
        for s in self.index:
            m = _NUMBERED.fullmatch(s) if len(s) <= _MAX_NUMBERED else None
            if m is None:
                out.append(s if writer is None else [s] if _MARK in s else writer(s))
                continue
            prefix, n = m.group(1), int(m.group(2))
            out.append([prefix, n - last.get(prefix, -1)])
            last[prefix] = n
        return out


def encode(tp: object, values: list, strings: Strings, ns: bool = False) -> object:
    """The column of ``values``, each the JSON of a ``tp`` (as ``to_dict`` gives it);
    ``ns``: the times of ``NANOS`` in whole nanoseconds (format 4)."""
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
        times = NANOS.get(inner, {}) if ns else {}
        return {name: encode_times([v[name] for v in values], times[name]) if name in times
                else encode(hint, [v[name] for v in values], strings, ns)
                for name, hint in _fields(inner)}
    if kind == "tuple":
        if not all(type(v) is list for v in values):
            return {"plain": values}
        return {"n": [len(v) for v in values],
                "v": encode(inner, [x for v in values for x in v], strings, ns)}
    return values


def decode(tp: object, column: object, count: int, table: list[str],
           ns: bool = False, grouped: list[int] | tuple = ()) -> list:
    """The ``count`` JSON values of ``column`` (written by ``encode``, with ``ns`` as
    given there); TraceError when it is not such a column. ``grouped`` (format 4): the
    entries whose eager kernels are written grouped (``kernel_order``), read back
    heaviest first."""
    if _is_plain(column):
        return sized(column["plain"], count, "values")
    kind, inner = _kind(tp)
    if kind == "str":
        column = sized(column, count, "string indices")
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
                             f"fields: {keys_of(column)}")
        names = [name for name, _ in fields]
        times = NANOS.get(inner, {}) if ns else {}
        cols = [decode_times(column[name], count, times[name])
                if name in times and not _is_plain(column[name])
                else decode(hint, column[name], count, table, ns, grouped)
                for name, hint in fields]
        # (every column was checked to hold ``count`` values)
        return [dict(zip(names, row)) for row in zip(*cols)] if cols \
            else [{} for _ in range(count)]
    if kind == "tuple":
        if grouped and ns and inner is EagerKernel:
            return lists(column, count,
                         lambda v, ends: _heaviest_first(v, ends, grouped, table))
        return lists(column, count, lambda v, ends: decode(
            inner, v, ends[-1] if ends else 0, table, ns, grouped))
    return sized(column, count, "values")


def _heaviest_first(column: object, ends: list[int], grouped: list[int],
                    table: list[str]) -> list[dict]:
    """The eager kernels of a column (each entry's ending at ``ends``), those of each
    entry of ``grouped`` heaviest first, stably (``kernel_order``). The order comes
    from the times before any record or value is made, and then each is made in it:
    they lie in memory in the order they are read (sorted once made, they were
    scattered, and every pass over 84k kernels took 50 ms instead of 13)."""
    count = ends[-1] if ends else 0
    fields = _fields(EagerKernel)
    if type(column) is not dict or set(column) != {name for name, _ in fields} \
            or _is_plain(column["ms"]):  # (a file not written so: refused, or sorted
        return decode(EagerKernel, column, count, table, True)  # by kernel_order.restore)
    ns = nanoseconds(column["ms"], count, NANOS[EagerKernel]["ms"])
    order = kernel_order.heaviest_first(ns, ends, grouped)
    cols = []
    for name, hint in fields:
        if name == "ms":
            cols.append(milliseconds(list(map(ns.__getitem__, order))))
            continue
        col = decode(hint, column[name], count, table)  # (strings: the table's own)
        col = list(map(col.__getitem__, order))
        if hint is float and col and set(map(type, col)) == {float}:  # made anew, in order
            col = list(map(operator.mul, col, itertools.repeat(1.0, len(col))))
        cols.append(col)
    names = [name for name, _ in fields]
    return [dict(zip(names, row)) for row in zip(*cols)]


def _is_plain(column: object) -> bool:
    return type(column) is dict and len(column) == 1 and "plain" in column


def table(value: object, coded: bool = False) -> list[str]:
    """The table of strings of a file (written by ``Strings.table``), read back;
    TraceError unless it is a list of strings and ``[prefix, difference]`` pairs (and,
    ``coded``, ``[string]``s)."""
    if type(value) is not list:
        raise TraceError("the file's table of strings is not a list of strings")
    if not coded and set(map(type, value)) <= {str}:
        return value
    last: dict[str, int] = {}
    out = []
    for item in value:
        if type(item) is str:
            out.append(item)
            continue
        if type(item) is not list or len(item) != 2 or type(item[0]) is not str \
                or type(item[1]) is not int or len(item[0]) > _MAX_NUMBERED:
            if coded and type(item) is list and len(item) == 1 and type(item[0]) is str:
                out.append(item[0])  # a string that holds the marker, as it is
                continue
            raise TraceError("the file's table of strings is not a list of strings "
                             "and [prefix, number] pairs")
        prefix, n = item[0], last.get(item[0], -1) + item[1]
        if not 0 <= n < 10**_MAX_DIGITS:  # (what the writer writes: no huge numbers)
            raise TraceError("a numbered name of the file's table of strings has a "
                             f"number out of range (prefix {prefix[:40]!r})")
        last[prefix] = n
        out.append(prefix + str(n))
    if coded:
        for i, s in _decode_strings(value).items():
            out[i] = s
    return out


def _decode_strings(value: list) -> dict[int, str]:
    """The coded strings of a table (``Strings.table``), read back: {index: string}.
    All in one text, joined by NULs, when none holds one (one split and one loop for
    ~7k extern calls instead of one each: 10 ms, not 30)."""
    coded = [(i, s) for i, s in enumerate(value) if type(s) is str and _MARK in s]
    reader = _CodeReader(_TABLE_REF, sum(len(s) for _, s in coded))
    text = "\0".join(s for _, s in coded)
    if text.count("\0") == len(coded) - 1 > 0:
        return dict(zip((i for i, _ in coded), reader(text).split("\0"), strict=True))
    return {i: reader(s) for i, s in coded}


# Code (a graph's replay source, FX Python) with its numbered names (``add_253``) written
# as a marker, the prefix and the difference from the prefix's last number: each layer
# of a deep model is then the same text, which gzip packs (HF Llama's 64 layers:
# 200 KB of gzip -> 43 KB). Only code without the marker is written so. Format 4: the
# difference from the nearest of the prefix's last ``RECENT`` numbers (each other than
# the one before it), named by a digit after the marker (none: the last). A backward
# reads the forward's saved values (``add_2686``) between its own new names
# (``add_5377``), two counters of one prefix: 156 KB of gzip -> 49 KB at 320 layers.
# The table's strings (format 4) are written so too, with names whose prefix ends in a
# letter (``buf12``) as well: the extern kernels' calls, ``extern_kernels.mm(buf3,
# primals_6, out=buf4)``: 96 KB -> 25 KB at 320 layers.
_MARK = "$"  # not Python outside a string; JSON writes it as it is (not "\u007f")
RECENT = 8  # format 4: the last numbers of a prefix a name may be counted from
# (at most 17 digits: a difference, from -1 on, then takes at most 18)
_NUMBER = rf"(0|[1-9][0-9]{{0,{_MAX_DIGITS - 2}}})\b"
_CODE_NAME = re.compile(rf"\b([A-Za-z_][A-Za-z0-9_]*?_){_NUMBER}")
_TABLE_NAME = re.compile(rf"\b([A-Za-z_](?:[A-Za-z0-9_]*?[A-Za-z_])?){_NUMBER}")
# (a name written so: the marker, its slot, its prefix and the difference; the search
# for the marker, a literal, is fast; the prefix is the longest run that ends in "_"
# (a letter too, in the table) before digits, which is the shortest one the name
# pattern found: the rest of the name is digits)
_DIFFERENCE = rf"(-?[0-9]{{1,{_MAX_DIGITS}}})"
_CODE_REF = re.compile(rf"{re.escape(_MARK)}([1-9]?)([A-Za-z_][A-Za-z0-9_]*_){_DIFFERENCE}")
_TABLE_REF = re.compile(rf"{re.escape(_MARK)}([1-9]?)([A-Za-z_](?:[A-Za-z0-9_]*[A-Za-z_])?)"
                        rf"{_DIFFERENCE}")
# a decoded text: at most this many times its written length (1.1 for real code), plus
_MAX_GROWTH, _MAX_EXTRA = 2, 1 << 20  # ... this: a short or hostile one cannot balloon
_PIECE = 1 << 16  # characters decoded at a time (the split's strings: a few MB at most)


def encode_code(text: str, recent: int = 1) -> str | None:
    """``text`` with its numbered names as differences, each from the nearest of its
    prefix's last ``recent`` numbers (1: format 3), or None (it holds the marker)."""
    return None if _MARK in text else _CodeWriter(_CODE_NAME, recent)(text)


def decode_code(text: str) -> str:
    """The code ``encode_code`` was given; TraceError for a text it cannot have written
    (a number out of range, a slot the prefix has no number in, or a text that would
    grow past ``_MAX_GROWTH`` times)."""
    return _CodeReader(_CODE_REF, len(text))(text)


class _CodeWriter:
    """Writes texts one after the other, numbers counted on from one to the next."""

    def __init__(self, names: re.Pattern, recent: int) -> None:
        self.names, self.recent = names, recent
        self.last: dict[str, deque[int]] = {}  # a prefix: its last numbers, latest first

    def __call__(self, text: str) -> str:
        return self.names.sub(self._ref, text)

    def _ref(self, m: re.Match) -> str:
        prefix, n = m.group(1), int(m.group(2))
        seen = self.last.get(prefix)
        if seen is None:
            seen = self.last[prefix] = deque((-1,), self.recent)
        slot, d = 0, n - seen[0]
        if d:  # the nearest of the last numbers (the first of equals)
            for j in range(1, len(seen)):
                if abs(n - seen[j]) < abs(d):
                    slot, d = j, n - seen[j]
            seen.appendleft(n)  # a number other than the last: the most recent now
        return f"{_MARK}{slot or ''}{prefix}{d}"


class _CodeReader:
    """Reads what a ``_CodeWriter`` wrote, text after text, within one budget: their
    decoded size stays under ``_MAX_GROWTH`` times ``written`` (their written size)."""

    def __init__(self, refs: re.Pattern, written: int) -> None:
        self.refs = refs
        self.limit, self.size = _MAX_GROWTH * written + _MAX_EXTRA, 0
        self.last: dict[str, deque[int]] = {}

    def __call__(self, text: str) -> str:
        """A piece of about ``_PIECE`` characters at a time (names never span lines),
        each split by one regular expression and put back together at C speed: ~40 ms
        for HF Llama's 1.5 MB of code, where one Python call per name took 170 ms."""
        if len(text) <= _PIECE:
            return self._piece(text)
        out: list[str] = []
        start = 0
        while start < len(text):
            end = text.find("\n", start + _PIECE)
            end = len(text) if end < 0 else end + 1
            out.append(self._piece(text[start:end]))
            start = end
        return "".join(out)

    def _piece(self, text: str) -> str:
        pieces = self.refs.split(text)  # [text, slot, prefix, difference, text, ..., text]
        last, numbers = self.last, []
        for slot, prefix, d in zip(pieces[1::4], pieces[2::4], map(int, pieces[3::4]),
                                   strict=True):
            seen = last.get(prefix)
            if seen is None:
                seen = last[prefix] = deque((-1,), RECENT)
            if slot:
                if int(slot) >= len(seen):
                    raise TraceError("a numbered name is counted from a number its "
                                     "prefix does not have")
                n = seen[int(slot)] + d
            elif d:
                n = seen[0] + d
            else:  # the last number again (most names of a statement's "x = None")
                numbers.append(seen[0])
                continue
            seen.appendleft(n)
            numbers.append(n)
        if numbers and not (0 <= min(numbers) and max(numbers) < 10**_MAX_DIGITS):
            raise TraceError("a numbered name has a number out of range")
        pieces[3::4] = map(str, numbers)
        pieces[1::4] = [""] * len(numbers)  # (the slots; the marker is not in pieces)
        text = "".join(pieces)
        self.size += len(text)
        if self.size > self.limit:
            raise TraceError("coded text would grow past twice its written size")
        return text
