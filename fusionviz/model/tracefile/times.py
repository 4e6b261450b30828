"""Format 4: times in ms written as whole nanoseconds (``columns`` writes the fields of
``NANOS`` so).

A kernel's time comes from ``time.perf_counter`` (nanoseconds) through float
arithmetic: ``12.35704300006546`` ms carries digits of noise past the nanosecond, which
gzip cannot pack (350 KB of a 20k-node CPU trace). Written as ``12357043`` (``None``
kept; spreads and launches' starts and ends as lists of them), starts, ends and launches
each the difference from the number before it in the column (they grow through the
graph's call), and read back as ``12357043 / 1e6``: a time is rounded to the
nanosecond once, and a re-save writes the same numbers.
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Callable

from fusionviz.model.errors import TraceError
from fusionviz.model.trace import EagerKernel, Kernel

# Format 4: the fields holding times in ms (a float or None, or lists of them one or two
# deep), written as whole nanoseconds; True: each the difference from the number before
# it in the column (kernels' starts and ends grow through the graph's call)
NANOS: dict[type, dict[str, bool]] = {
    Kernel: {"ms": False, "ms_spread": False, "start_ms": True, "end_ms": True,
             "launches": True},
    EagerKernel: {"ms": False},
}
NS = 1e6  # nanoseconds a millisecond
_MAX_NS = 2**53  # a time of more than this (~104 days) is written as it is
_DEPTH = 2  # lists in lists at most (a kernel's launches: (start, end) pairs)


class _Plain(Exception):
    """A column of times holds something else than times: written as it is."""


def encode_times(values: list, delta: bool) -> object:
    """A column of times in ms (each None or a number; or each a list of them, or of
    lists of them) as whole nanoseconds, each the difference from the number before it
    with ``delta``; a column of lists (spreads, launches) as ``{"n": their lengths,
    "v": the column of their items}``, as ``columns`` writes tuples; ``{"plain":
    values}`` when something in it is not such a time."""
    try:
        return _encoded(values, delta, _DEPTH)
    except _Plain:
        return {"plain": values}


def _encoded(values: list, delta: bool, depth: int) -> object:
    if values and all(type(v) is list for v in values):
        if not depth:
            raise _Plain
        return {"n": [len(v) for v in values],
                "v": _encoded([x for v in values for x in v], delta, depth - 1)}
    out: list[int | None] = []
    last = 0
    for x in values:
        if x is None:
            out.append(None)
            continue
        if type(x) is not float and type(x) is not int:  # (a list among numbers, too)
            raise _Plain
        try:
            n = round(x * NS)
        except (OverflowError, ValueError):  # infinite, NaN
            raise _Plain from None
        if not -_MAX_NS < n < _MAX_NS:
            raise _Plain
        if delta:
            n, last = n - last, n
        out.append(n)
    return out


def decode_times(column: object, count: int, delta: bool, depth: int = _DEPTH) -> list:
    """The ``count`` times in ms of a column ``encode_times`` wrote; TraceError when it
    holds something else than whole nanoseconds (and None; lists of them)."""
    if type(column) is dict and depth:  # lists: their lengths, then all their items
        return lists(column, count, lambda v, ends: decode_times(
            v, ends[-1] if ends else 0, delta, depth - 1))
    column = sized(column, count)
    kinds = set(map(type, column))
    if not kinds <= {int, type(None)}:
        raise TraceError("a column of times holds something else than whole nanoseconds")
    numbers = [n for n in column if n is not None] if type(None) in kinds else column
    ms = _milliseconds(numbers, delta)
    if len(numbers) == len(column):
        return ms
    it = iter(ms)
    return [None if n is None else next(it) for n in column]


def nanoseconds(column: object, count: int, delta: bool) -> list[int]:
    """The ``count`` whole nanoseconds of a column of times without None or lists (an
    eager kernel's), added up with ``delta``; TraceError as ``decode_times``."""
    column = sized(column, count)
    if column and set(map(type, column)) != {int}:
        raise TraceError("a column of times holds something else than whole nanoseconds")
    return _checked(list(itertools.accumulate(column)) if delta else column)


def milliseconds(numbers: list[int]) -> list[float]:
    """Whole nanoseconds as milliseconds, at C speed."""
    return list(map(operator.truediv, numbers, itertools.repeat(NS, len(numbers))))


def _milliseconds(numbers: list, delta: bool) -> list[float]:
    """Whole nanoseconds (each the difference from the one before it, with ``delta``)
    as milliseconds; TraceError for a time out of range."""
    return milliseconds(_checked(list(itertools.accumulate(numbers)) if delta else numbers))


def _checked(numbers: list[int]) -> list[int]:
    if numbers and not (-_MAX_NS < min(numbers) and max(numbers) < _MAX_NS):
        raise TraceError("a column of times holds a time out of range")
    return numbers


def sized(column: object, count: int, what: str = "times") -> list:
    """``column`` if it is a list of ``count`` values; TraceError naming ``what`` else."""
    if type(column) is not list:
        raise TraceError(f"a column of {what} is not a list: {type(column).__name__}")
    if len(column) != count:
        raise TraceError(f"a column of {what} holds {len(column):,} for {count:,} records")
    return column


def lists(column: object, count: int, items: Callable[[object, list[int]], list]) -> list:
    """The ``count`` lists of a column written as ``{"n": their lengths, "v": the column
    of their items}``: ``items(v, ends)`` decodes the items (``ends``: where each list's
    end, accumulated), and each list is its slice of them; TraceError when it is not so."""
    if type(column) is not dict or set(column) != {"n", "v"}:
        raise TraceError(f"a column of lists is not {{n, v}}: {keys_of(column)}")
    lengths = sized(column["n"], count, "lengths")
    if lengths and (set(map(type, lengths)) != {int} or min(lengths) < 0):
        raise TraceError("a column of lengths holds something else than lengths")
    ends = list(itertools.accumulate(lengths))
    values = items(column["v"], ends)
    # each list's slice of the items, at C speed (a round's groups: ~50k lists)
    return list(map(values.__getitem__, map(slice, [0, *ends[:-1]], ends)))


def keys_of(column: object) -> str:
    """What a column that should be a dict holds, for an error: its keys, or its type."""
    if type(column) is not dict:
        return type(column).__name__
    return ", ".join(sorted(map(str, column)))[:200]
