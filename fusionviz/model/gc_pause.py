"""Cyclic GC paused while a trace's objects are built, and frozen after.

A trace is a million acyclic objects: collections triggered while they are
allocated walk the growing trace over and over (about 60% of a large load's
time) and find no garbage. After an open they are frozen (``gc.freeze``) so that
later collections never re-scan them (each scan costs 0.2-0.8 s at 20k nodes).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


class GcPause:
    """A pause that may span several calls (the window's idle-time work)."""

    def __init__(self) -> None:
        self._paused = False
        self._resume = False  # GC was on when paused: it is ours to turn back on

    def pause(self) -> None:
        if not self._paused:
            self._resume, self._paused = gc.isenabled(), True
            gc.disable()

    def resume(self, *, freeze: bool = False) -> None:
        """GC as it was before ``pause``; ``freeze``: the objects built meanwhile are
        long-lived, so move them out of every later collection's way first."""
        if not self._paused:
            return
        if freeze:
            gc.freeze()
        self._paused = False
        if self._resume:
            gc.enable()


@contextmanager
def gc_paused(*, freeze: bool = False) -> Iterator[None]:
    """No cyclic GC inside; with ``freeze``, what was built is frozen when the block
    ends without an error."""
    pause = GcPause()
    pause.pause()
    try:
        yield
    except BaseException:
        pause.resume()
        raise
    pause.resume(freeze=freeze)
