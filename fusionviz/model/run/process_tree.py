"""Start a child in a session of its own and kill it with everything it started.

Inductor compiles in worker subprocesses that would outlive a plain kill, so the
child leads its own process group; an experiment's captures go further and start
sessions of their own (``runner.run_capture``), so cancelling finds them through
/proc first. The GUI's run controller calls these around its QProcess, and
``runner.run_capture`` around its subprocess.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
from pathlib import Path

SESSIONS = hasattr(os, "setsid") and hasattr(os, "killpg")
_TRAMPOLINE = "import os, sys; os.setsid(); os.execv(sys.argv[1], sys.argv[1:])"


def in_own_session(argv: list[str]) -> list[str]:
    """``argv`` wrapped so the program starts as the leader of a new session."""
    # A program that cannot start is left to QProcess, which reports FailedToStart.
    if not SESSIONS or shutil.which(argv[0]) is None:
        return argv
    return [sys.executable, "-c", _TRAMPOLINE, shutil.which(argv[0]), *argv[1:]]


def kill_tree(pid: int) -> None:
    """SIGKILL the process group of ``pid`` and every group led by one of its descendants."""
    if not SESSIONS or pid <= 0:
        return
    leaders = [p for p in descendants(pid) if _is_group_leader(p)]  # before they are orphaned
    for group in (pid, *leaders):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (Linux /proc; empty elsewhere)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").glob("[0-9]*/stat"):
        try:
            # "pid (comm) state ppid …": comm may hold spaces, so split after its ")".
            ppid = int(entry.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry.parent.name))
    out, todo = [], [pid]
    while todo:
        kids = children.get(todo.pop(), [])
        out += kids
        todo += kids
    return out


def _is_group_leader(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False
