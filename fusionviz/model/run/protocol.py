"""Progress messages from a fusionviz child to its parent, one JSON object per line.

On POSIX the parent hands the child a private pipe (``open_channel``): the write end's
number comes in ``CHANNEL_ENV``, which the child takes out of its environment
(``progress_writer``) and marks close-on-exec, so neither the script's output nor its
subprocesses can speak on it. Where no pipe can be handed over, the child prints the
lines on stdout among the script's own output, each starting with ``PREFIX``. Either
way the parent decodes them with ``parse_progress``, which keeps only a known event
with fields of the types below: anything else is the script's output.
"""

from __future__ import annotations

import json
import math
import os
import select
import sys

PREFIX = "FUSIONVIZ "
CHANNEL_ENV = "FUSIONVIZ_PROGRESS_FD"
PRIVATE_CHANNEL = os.name == "posix"

# The fields each event may carry, by type; "variant" (an experiment's capture
# index) and "rank" (a multi-process capture's) may come with any of them. A field may be left out; None only where listed.
_COUNT, _NUMBER, _TEXT = "count", "number", "text"
FIELDS: dict[str, dict[str, str]] = {
    "start": {"script": _TEXT},
    "graph_start": {"graph": _COUNT, "compile_id": _TEXT, "kind": _TEXT},
    "round": {"graph": _COUNT, "round": _COUNT, "nodes": _COUNT},
    "graph_done": {"graph": _COUNT, "nodes": _COUNT, "kernels": _COUNT, "rounds": _COUNT,
                   "compile_s": _NUMBER},
    "timing": {"graph": _COUNT, "compiled_ms": _NUMBER, "eager_ms": _NUMBER},
    "done": {"status": _TEXT, "graphs": _COUNT, "write_error": _TEXT, "kept": _COUNT},
    "variant": {"index": _COUNT, "of": _COUNT, "label": _TEXT},
}
_NULLABLE = {"graph", "compiled_ms", "eager_ms", "of"}
_MAX_COUNT = 2**31 - 1  # fits a Qt int (a progress bar's range)


def encode_progress(event: str, **fields) -> str:
    """One progress line (without newline) for ``event`` with ``fields``."""
    return PREFIX + json.dumps({"event": event, **fields}, separators=(",", ":"))


def parse_progress(line: str) -> dict | None:
    """The message of a progress line, or None for anything else (the script's own
    output, a line of the wrong shape): a known event, its known fields checked and
    kept, others dropped."""
    if not line.startswith(PREFIX):
        return None
    try:
        msg = json.loads(line[len(PREFIX):])
    except (ValueError, RecursionError):
        return None
    if not isinstance(msg, dict) or msg.get("event") not in FIELDS:
        return None
    kinds = {**FIELDS[msg["event"]], "variant": _COUNT, "rank": _COUNT}
    out = {"event": msg["event"]}
    for key, kind in kinds.items():
        if key not in msg:
            continue
        value = msg[key]
        if not (_valid(kind, value) or (value is None and key in _NULLABLE)):
            return None
        out[key] = value
    return out


def _valid(kind: str, value) -> bool:
    if isinstance(value, bool):
        return False
    if kind == _COUNT:
        return isinstance(value, int) and 0 <= value <= _MAX_COUNT
    if kind == _NUMBER:
        return isinstance(value, int | float) and math.isfinite(value)
    return isinstance(value, str)


def open_channel() -> tuple[int, int] | None:
    """A pipe (read end, write end) for a child's progress, both ends close-on-exec
    (the caller hands the write end over: ``pass_fds``, or ``os.set_inheritable``);
    None where none can be handed over: the child then prints on stdout."""
    return os.pipe() if PRIVATE_CHANNEL else None


def progress_writer() -> ProgressWriter:
    """In the child: the writer of progress lines to the parent's private pipe, taken
    out of the environment now (call this before the script runs), else to stdout."""
    value = os.environ.pop(CHANNEL_ENV, "")
    fd = int(value) if value.isdecimal() else -1
    try:
        os.set_inheritable(fd, False)  # the script's subprocesses do not get it
    except (OSError, OverflowError):
        fd = -1
    return ProgressWriter(fd)


class ProgressWriter:
    """Writes a progress line (``writer(line)``) to the pipe ``fd``, else to stdout. A
    write that fails (the parent is gone) is dropped: progress never breaks the run."""

    def __init__(self, fd: int) -> None:
        self.fd, self._stream = fd, sys.__stdout__

    def __call__(self, line: str) -> None:
        try:
            if self.fd >= 0:
                data = (line + "\n").encode()
                while data:
                    data = data[os.write(self.fd, data):]
            elif self._stream is not None:
                self._stream.write(line + "\n")
                self._stream.flush()
        except (OSError, ValueError):
            pass

    def wait_closed(self) -> bool:
        """Block until the parent's end of the pipe is closed (the parent is gone:
        its last reader closes with it); False at once where there is no pipe."""
        if self.fd < 0 or not hasattr(select, "poll"):
            return False
        poller = select.poll()
        poller.register(self.fd, 0)  # no event asked: POLLERR, POLLHUP come anyway
        events = poller.poll()  # (POLLNVAL: the fd was closed here; nothing to tell)
        return any(e & (select.POLLERR | select.POLLHUP) for _fd, e in events)


def describe_progress(msg: dict) -> str:
    """One line for a progress message, the same on the command line and in the
    window's status bar; fields a message lacks are left out."""
    text = _describe(msg)
    return f"[rank {msg['rank']}] {text}" if msg.get("rank") is not None else text


def _describe(msg: dict) -> str:
    event = msg.get("event", "")
    where = f"graph {msg['graph']}" if msg.get("graph") is not None else "graph"
    if event == "start":
        return f"starting {msg.get('script', '')}".strip()
    if event == "graph_start":
        about = ", ".join(str(v) for v in (msg.get("kind"), _compile_id(msg)) if v)
        return f"{where}{f' ({about})' if about else ''}: compiling"
    if event == "round":
        nodes = msg.get("nodes")
        left = f" -> {nodes} nodes" if nodes is not None else ""
        return f"{where}: fusion round {msg.get('round', '?')}{left}"
    if event == "graph_done":
        counts = [f"{msg[k]} {k}" for k in ("nodes", "rounds", "kernels") if k in msg]
        took = f" in {msg['compile_s']} s" if msg.get("compile_s") is not None else ""
        return f"{where}: compiled" + (f", {', '.join(counts)}" if counts else "") + took
    if event == "timing":
        ms = msg.get("compiled_ms")
        return f"{where}: timed" + (f" (compiled {ms:.3f} ms)" if ms is not None else "")
    if event == "entry_timing":
        return f"{msg.get('name', '')}: timing eager vs compiled".lstrip(": ")
    if event == "entry_what_if":
        return (f"{msg.get('name', '')}: compiling again with CUDA graphs "
                f"({msg.get('what', 'what-if')}), then timing it").lstrip(": ")
    if event == "done":
        graphs = msg.get("graphs")
        count = f", {graphs} graph(s)" if graphs is not None else ""
        return f"capture finished: {msg.get('status', 'ok')}{count}"
    if event == "variant":
        return f"capture {variant_position(msg)}: {msg.get('label', '')}".rstrip(": ")
    return event


def variant_position(msg: dict) -> str:
    """``2/5`` for the second of five captures of an experiment (``2`` when open-ended)."""
    of = msg.get("of")
    return f"{msg.get('index', 0) + 1}" + (f"/{of}" if of else "")


def _compile_id(msg: dict) -> str:
    cid = msg.get("compile_id")
    return f"compile id {cid}" if cid else ""
