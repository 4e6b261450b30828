"""Progress messages from the capture child to its parent, one JSON object per line.

The child prints them on stdout among the script's own output, each line starting
with ``PREFIX``; the GUI and the CLI decode them with ``parse_progress``.
"""

from __future__ import annotations

import json

PREFIX = "FUSIONVIZ "
EVENTS = ("start", "graph_start", "round", "graph_done", "timing", "done", "variant")


def encode_progress(event: str, **fields) -> str:
    """One progress line (without newline) for ``event`` with ``fields``."""
    return PREFIX + json.dumps({"event": event, **fields}, separators=(",", ":"))


def parse_progress(line: str) -> dict | None:
    """The message of a progress line, or None for the script's own output."""
    if not line.startswith(PREFIX):
        return None
    try:
        msg = json.loads(line[len(PREFIX):])
    except json.JSONDecodeError:
        return None
    return msg if isinstance(msg, dict) and msg.get("event") in EVENTS else None


def describe_progress(msg: dict) -> str:
    """One line for a progress message, the same on the command line and in the
    window's status bar; fields a message lacks are left out."""
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
