"""Text for a terminal: what a trace holds is shown, never obeyed.

A trace is a file from anyone. Its names, paths, messages and labels reach the
terminal through ``summary``, ``query``, ``why`` and the experiment reports; raw, an
escape sequence in them could retitle or recolour the terminal, move the cursor over
earlier lines, or (OSC 52) write to the clipboard. Every control character but tab and
newline is shown instead, in caret notation (ESC as ``^[``, CR as ``^M``); C1 controls
and the bidirectional overrides that reorder what is displayed (Trojan Source) as
``<U+009B>``. JSON output needs none of this: ``json.dumps`` writes them as ``\\u``
escapes.
"""

from __future__ import annotations

import os
import re
import sys

_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def _shown(m: re.Match) -> str:
    code = ord(m.group())
    if code < 0x20:
        return "^" + chr(code + 0x40)
    return "^?" if code == 0x7F else f"<U+{code:04X}>"


def visible(text: str) -> str:
    """``text`` with every control character but tab and newline made visible."""
    return _HIDDEN.sub(_shown, text)


def emit(text: str, *, err: bool = False) -> None:
    """Print ``text`` made visible, on stdout (or stderr); a reader that stops early
    (``| head``) is not an error."""
    stream = sys.stderr if err else sys.stdout
    try:
        print(visible(text), file=stream, flush=True)
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())  # no error at exit
