"""Upgrade older trace dicts to the current version, one step per version bump.

Each entry of ``STEPS`` maps version N to a pure function taking the dict of a
version-N trace and returning the dict of a version-(N+1) trace. Every released
version keeps a fixture under ``tests/data/`` that must still load.
"""

from __future__ import annotations

from collections.abc import Callable

from fusionviz.model.trace import VERSION


def _same_data(data: dict) -> dict:
    """1 -> 2: the file became JSON Lines (``tracefile.parts``); the data is unchanged."""
    return data


def _same_records(data: dict) -> dict:
    """2 -> 3: the lines are written in columns with a table of strings
    (``tracefile.columns``), decoded as they are read; the data is unchanged."""
    return data


def _same_trace(data: dict) -> dict:
    """3 -> 4: times in whole nanoseconds, an entry's eager kernels written grouped
    (``tracefile.kernel_order``), both read back as before; the data is unchanged."""
    return data


STEPS: dict[int, Callable[[dict], dict]] = {1: _same_data, 2: _same_records, 3: _same_trace}


def upgrade(data: dict, version: int) -> dict:
    """Apply every step from ``version`` up to the current VERSION."""
    while version < VERSION:
        data = STEPS[version](data)
        version += 1
        data["version"] = version
    return data
