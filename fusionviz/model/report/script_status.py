"""How a script that did not end well is reported, the same in the window and the CLI."""

from __future__ import annotations

import os

from fusionviz.model.trace import Script


def script_failure(script: Script, graphs: int) -> str:
    """A first paragraph that says what happened and what is shown, then the rest of a
    message of several lines and the traceback (or the end of stderr), after a blank
    line."""
    name = os.path.basename(script.path) or "the script"
    cause, _, more = (script.message or "").strip().partition("\n")
    cause = cause.strip().rstrip(".")
    kept = ("No graph was captured before that." if graphs == 0 else
            f"The {graphs} graph{'s' if graphs != 1 else ''} captured before that "
            f"{'are' if graphs != 1 else 'is'} shown.")
    head = f"{name} ended with status '{script.status}'" + (f": {cause}" if cause else "")
    detail = "\n\n".join(p for p in (more.strip(), (script.traceback or "").strip()) if p)
    stop = "" if cause.endswith(("?", "!")) else "."
    return f"{head}{stop} {kept}" + (f"\n\n{detail}" if detail else "")
