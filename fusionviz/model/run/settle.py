"""Settle how a capture child ended in its trace: its status, its message, and a trace
that could not be written (a full disk): no torch, no Qt here. ``runner.run_capture``
and the GUI's run controller call ``finalize_trace`` once the child is gone."""

from __future__ import annotations

import dataclasses
import os
import signal

from fusionviz.model.errors import TraceError
from fusionviz.model.trace import Script, Trace
from fusionviz.model.tracefile import io as tracefile


def finalize_trace(
    out: str,
    *,
    exit_code: int | None,
    status: str | None = None,
    stderr_tail: str = "",
    script: str = "",
    ended: dict | None = None,
    lingered: bool = False,
) -> Script:
    """Settle the script's status in the trace after the child ended; return it.

    A child that ran to its end wrote the final status itself: the file is left as it
    is (only its core line is read). Otherwise (a crash, a timeout, a cancel, a final
    write that failed) the status is written into the core line: after a failed write
    the one the child's ``done`` message (``ended``) gave, else one from its exit code. A child that died
    before writing anything still gets a trace, holding its exit status and the end
    of its stderr. A trace that could not be written (by the child or here) keeps its
    last good file, and the returned script's message says so (``write_failure``).
    ``lingered``: the child wrote its final trace but did not exit, and was ended: its
    status stands, and its message says so.
    """
    ended = ended or {}
    try:
        recorded = tracefile.read_script(out)
    except TraceError:
        recorded = None
    child_failed = ended.get("write_error", "")
    if recorded is not None and status is None and recorded.status != "running" \
            and not child_failed:
        if lingered and LINGERED not in recorded.message:
            recorded = dataclasses.replace(recorded, message="; ".join(
                m for m in (recorded.message, LINGERED) if m))
            try:
                tracefile.replace_script(out, recorded)
            except (TraceError, OSError):
                pass  # the note is lost, the trace is whole
        return recorded
    s = recorded or Script(path=script)
    if status is None:
        said = ended.get("status") if child_failed else None  # the file could not say it
        status = s.status if s.status != "running" else (
            said if said in STATUSES else _status_from_code(exit_code))
    settled = dataclasses.replace(
        s, status=status, exit_code=exit_code if s.exit_code is None else s.exit_code,
        message=s.message or _message(status, exit_code),
        traceback=s.traceback or (stderr_tail if status != "ok" else ""),
    )
    if child_failed:
        settled = _with_write_failure(settled, child_failed, ended.get("kept"))
    try:
        if recorded is not None:
            tracefile.replace_script(out, settled)
        elif not _holds_something(out):  # nothing was written: a trace of the ending
            tracefile.save_trace(Trace(script=settled), out)
    except (TraceError, OSError) as e:  # the last good file stays as it was
        if not child_failed:
            settled = _with_write_failure(settled, write_error_text(e), _graphs_in(out))
    return settled


STATUSES = ("ok", "error", "crashed", "timeout", "cancelled", "no_graphs")
LINGERED = ("the script's process did not exit after it finished (a thread or worker "
            "it left running blocked its exit); fusionviz ended it, nothing was lost")


def _holds_something(out: str) -> bool:
    """A file is there with bytes in it: never replaced by an empty trace (what it
    holds may still open, lazily, even where its core line could not be read here)."""
    try:
        return os.path.getsize(out) > 0
    except OSError:
        return False
WRITE_FAILED = "could not write the trace: "


def write_failure(script: Script) -> str:
    """What ``finalize_trace`` noted in ``script.message`` of a trace it could not
    write (``could not write the trace: no space left on device; graphs 0–3 kept``),
    or ""."""
    at = script.message.find(WRITE_FAILED)
    return script.message[at:] if at >= 0 else ""


def _with_write_failure(s: Script, why: str, kept: int | None) -> Script:
    if not kept:
        what = "no graph kept"
    else:
        what = "graph 0 kept" if kept == 1 else f"graphs 0–{kept - 1} kept"
    note = f"{WRITE_FAILED}{why}; {what}"
    return dataclasses.replace(s, message=f"{s.message}; {note}" if s.message else note)


def write_error_text(e: BaseException) -> str:
    """``no space left on device`` for an OSError, else the exception in a line."""
    if isinstance(e, OSError) and e.strerror:
        return e.strerror[:1].lower() + e.strerror[1:]
    return f"{type(e).__name__}: {e}"


def _graphs_in(out: str) -> int | None:
    try:
        return len(tracefile.load_trace(out, lazy=True).graphs)
    except (TraceError, OSError):
        return None


def _status_from_code(code: int | None) -> str:
    if code is None or code < 0:
        return "crashed"
    return "error" if code else "ok"


def _message(status: str, code: int | None) -> str:
    if status == "crashed":
        name = _signal_name(code)
        return f"the script's process died{f' ({name})' if name else ''}; graphs captured before are kept"
    if status == "timeout":
        return ("the script ran past the time limit (--timeout) and was stopped; graphs "
                "captured before are kept. Give a longer --timeout, or none, to let it finish")
    if status == "cancelled":
        return "the capture was cancelled; graphs captured before are kept"
    if status == "error":
        return f"the script failed (exit status {code})"
    return ""


def _signal_name(code: int | None) -> str:
    if code is None or code >= 0:
        return ""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"
