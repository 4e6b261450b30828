"""Format 4: an entry's eager kernels written grouped by module, read back heaviest first.

``Entry.kernels`` are heaviest first (``capture.kernel_attribution``). In that order
the module, op and name change from each kernel to the next: at 320 layers, 84k
kernels whose columns gzip cannot pack (half of a 1.9 MB trace). So the writer writes
them grouped (by side, module, op, launcher, name: every layer the same run of
strings, a few kilobytes), and the reader sorts them back by time, heaviest first.
Python's sort is stable, so kernels of equal time come back in the order they were
written in: the writer writes each time's kernels in their own order (in the places
the grouping gives that time's kernels). Kernels that are not heaviest first (a
hand-written trace) are written as they are; the core's ``parts`` names the entries
written grouped. The reader (``columns``) takes the order from the times and makes
the records and their times in it, so they lie in memory in the order they are read
(records sorted once made were scattered: a pass over 84k kernels took 50 ms, not 8).
"""

from __future__ import annotations

import operator
import re
from collections import defaultdict

from fusionviz.model.errors import TraceError
from fusionviz.model.tracefile.times import NS

_KEY = ("side", "module", "op", "launcher", "name", "module_class")
_DIGITS = re.compile(r"([0-9]+)")


def group(entries: list) -> list[int]:
    """Each entry's kernels (JSON records, as ``to_dict`` gives them) put in grouped
    order, in place, where they are heaviest first; the indices of those entries."""
    grouped = []
    for i, entry in enumerate(entries):
        kernels = entry.get("kernels") if type(entry) is dict else None
        if type(kernels) is list and len(kernels) > 1 and _heaviest_first(kernels):
            kernels[:] = _grouped(kernels)
            grouped.append(i)
    return grouped


def check(grouped: object) -> list[int]:
    """``grouped`` (the core's ``parts``), checked: TraceError unless it is a list of
    distinct indices."""
    if type(grouped) is not list or (grouped and set(map(type, grouped)) != {int}) \
            or len(set(grouped)) != len(grouped):
        raise TraceError("its list of entries with grouped kernels is not a list of "
                         "distinct indices")
    return grouped


def heaviest_first(times: list, ends: list[int], grouped: list[int]) -> list[int]:
    """The order of a column of eager kernels (their ``times``; each entry's end in
    it, ``ends``) that puts the kernels of each entry of ``grouped`` heaviest first,
    stably (``columns`` makes them in it); TraceError when an entry is not there."""
    order = list(range(len(times)))
    for i in grouped:
        if not 0 <= i < len(ends):
            raise TraceError(f"entry {i} has no kernels to sort")
        start = ends[i - 1] if i else 0
        order[start:ends[i]] = sorted(range(start, ends[i]), key=times.__getitem__,
                                      reverse=True)  # (stable, reversed too)
    return order


def restore(entries: object, grouped: list[int]) -> None:
    """The kernels of the entries ``grouped`` sorted back heaviest first, in place,
    where ``columns`` did not (a file whose kernels' times are written as they are);
    TraceError when ``grouped`` does not name entries with kernels."""
    for i in grouped:
        entry = entries[i] if type(entries) is list and 0 <= i < len(entries) else None
        kernels = entry.get("kernels") if type(entry) is dict else None
        if type(kernels) is not list:
            raise TraceError(f"entry {i} has no kernels to sort")
        try:
            ms = list(map(operator.itemgetter("ms"), kernels))
            if not all(map(operator.ge, ms, ms[1:])):  # (as columns made them: done)
                kernels.sort(key=operator.itemgetter("ms"), reverse=True)  # stable
        except (TypeError, KeyError):
            raise TraceError(f"the kernels of entry {i} have no times to sort them "
                             "by") from None


def _heaviest_first(kernels: list) -> bool:
    """Whether ``kernels`` are records with string keys, each no lighter than the
    next (a finite time each)."""
    for k in kernels:
        if type(k) is not dict or not all(type(k.get(f)) is str for f in _KEY) \
                or type(k.get("ms")) not in (float, int) or not abs(k["ms"]) < 1e300:
            return False
    return all(a["ms"] >= b["ms"] for a, b in zip(kernels, kernels[1:], strict=False))


def _grouped(kernels: list) -> list:
    """``kernels`` (heaviest first) in grouped order, except that the kernels of each
    time (as written: whole nanoseconds) take the places the grouping gives that time
    in their own order, so a stable sort by time gives back ``kernels``."""
    times = [round(k["ms"] * NS) for k in kernels]
    order = sorted(range(len(kernels)), key=lambda i: _key(kernels[i]))
    places: dict[int, list[int]] = defaultdict(list)  # a time: its places, in order
    for place, i in enumerate(order):
        places[times[i]].append(place)
    out = [None] * len(kernels)
    taken: dict[int, int] = defaultdict(int)
    for i, t in enumerate(times):  # each time's kernels in their order: to its places
        out[places[t][taken[t]]] = kernels[i]
        taken[t] += 1
    return out


def _key(kernel: dict) -> tuple:
    """Where ``kernel`` goes in grouped order: the forward first, its modules in
    the order they run (``blocks.9`` before ``blocks.10``), then the backward, its
    modules the other way round, which is also, mostly, the order of the kernels of
    equal time (the order the profiler met them in)."""
    parts: list = _DIGITS.split(kernel["module"])
    backward = kernel["side"] != "forward"
    parts[1::2] = (-int(p) if backward else int(p) for p in parts[1::2])
    return (backward, kernel["side"], parts, *(kernel[f] for f in _KEY[2:]))
