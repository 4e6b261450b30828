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
