"""What Dynamo met while tracing: graph breaks and skipped frames, with where in the
user's code they were reached from.

A graph break's innermost frame, or a skipped frame, is often torch's or the standard
library's (DDP's forward, ``contextlib``, a ``typing`` generator expression): the
user's line is then the innermost frame outside those, first in Dynamo's user stack,
else in the Python stack the compile runs on (the frames that called the code Dynamo
was about to run). Read when no graph reached Inductor (``no_graph``).
"""

from __future__ import annotations

import functools
import os
import site
import sys
import sysconfig
from dataclasses import dataclass

Where = tuple[str, int, str]  # file, line, function ("", 0, "": not known)
NOWHERE: Where = ("", 0, "")
GRAPH_BREAK, FRAME_SKIPPED = "graph break", "frame skipped"


@dataclass(frozen=True)
class DynamoEvent:
    """A graph break or a frame Dynamo gave up on (it runs eagerly)."""

    kind: str  # GRAPH_BREAK | FRAME_SKIPPED
    text: str  # Dynamo's reason
    at: Where = NOWHERE  # the break's innermost frame, or the skipped frame's code
    caller: Where = NOWHERE  # the user's frame it was reached from, when ``at`` is not one


@functools.cache
def _roots() -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(torch's and fusionviz's folders, site-packages folders, the standard library's)."""
    import torch

    import fusionviz

    paths = sysconfig.get_paths()
    sites = {paths.get("purelib"), paths.get("platlib")}
    try:
        sites.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass

    def folders(found) -> tuple[str, ...]:
        return tuple(os.path.realpath(p) + os.sep for p in found if p)

    return (folders((os.path.dirname(torch.__file__), os.path.dirname(fusionviz.__file__))),
            folders(sites), folders((paths.get("stdlib"), paths.get("platstdlib"))))


@functools.cache
def is_library(filename: str) -> bool:
    """Whether ``filename`` is torch's, fusionviz's or the standard library's (or has
    no file: ``<frozen ...>``). Other site-packages (a model library) are the user's."""
    if not filename or filename.startswith("<"):
        return True
    path = os.path.realpath(filename)
    ours, sites, stdlib = _roots()
    if path.startswith(ours):
        return True
    return not path.startswith(sites) and path.startswith(stdlib)


def caller(stack=()) -> Where:
    """The innermost frame of the user's code: in ``stack`` (Dynamo's user stack,
    ``traceback.FrameSummary`` list, outermost first), else on the Python stack."""
    for f in reversed(list(stack or ())):
        name = str(getattr(f, "filename", "") or "")
        if not is_library(name):
            return name, int(getattr(f, "lineno", 0) or 0), str(getattr(f, "name", "") or "")
    frame = sys._getframe(1)
    while frame is not None:
        if not is_library(frame.f_code.co_filename):
            return frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back
    return NOWHERE


def event(kind: str, text: str, at: Where, stack=()) -> DynamoEvent:
    """An event at ``at``; where the user's code reached it when ``at`` is a library's."""
    return DynamoEvent(kind, text, at, caller(stack) if is_library(at[0]) else NOWHERE)
