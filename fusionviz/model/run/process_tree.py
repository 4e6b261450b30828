"""Start a child in a session of its own and kill it with everything it started.

Inductor compiles in worker subprocesses that would outlive a plain kill, so the
child leads its own process group; an experiment's captures go further and start
sessions of their own (``runner.run_capture``), and a script may start a daemon
(``setsid``, a double fork) that leaves both the group and the tree. So every run
carries a cookie in its environment (``RUN_ID_ENV``, inherited by whatever the
script starts), and ``kill_tree`` ends the child's process group, every group led
by a descendant, every descendant, and every process whose environment holds the
cookie (Linux /proc). The GUI's run controller calls these around its QProcess,
and ``runner.run_capture`` around its subprocess.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import uuid
from pathlib import Path

SESSIONS = hasattr(os, "setsid") and hasattr(os, "killpg")
RUN_ID_ENV = "FUSIONVIZ_RUN_ID"
# The signals that ask fusionviz to cancel its run (Ctrl+C, kill/timeout, the terminal
# closed): ``cli.job_signals`` and the window's ``ui.run.quit_signals`` take them.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))
_TRAMPOLINE = "import os, sys; os.setsid(); os.execv(sys.argv[1], sys.argv[1:])"


def new_run_id() -> str:
    """A cookie for one run's environment (``tag_env``)."""
    return uuid.uuid4().hex


def tag_env(env: dict[str, str], run_id: str) -> dict[str, str]:
    """``env`` carrying ``run_id`` after the cookies it inherited: a capture that an
    experiment runs is found by the experiment's cookie as well as by its own."""
    inherited = env.get(RUN_ID_ENV, "")
    return {**env, RUN_ID_ENV: f"{inherited}:{run_id}" if inherited else run_id}


def in_own_session(argv: list[str]) -> list[str]:
    """``argv`` wrapped so the program starts as the leader of a new session (the
    trampoline keeps the file descriptors it inherited, as ``execv`` does)."""
    # A program that cannot start is left to QProcess, which reports FailedToStart.
    if not SESSIONS or shutil.which(argv[0]) is None:
        return argv
    return [sys.executable, "-c", _TRAMPOLINE, shutil.which(argv[0]), *argv[1:]]


def kill_tree(pid: int, run_id: str = "") -> None:
    """SIGKILL the process group of ``pid``, every group led by one of its
    descendants, every descendant, and every process carrying ``run_id`` (a process
    may fork while this runs, so the cookie's holders are searched until none is left)."""
    if not SESSIONS or pid <= 0:
        return
    below = descendants(pid)  # before they are orphaned
    leaders = [p for p in below if _is_group_leader(p)]
    for group in (pid, *leaders):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    _kill(below)
    for _ in range(10):
        holders = carrying(run_id)
        if not holders:
            break
        _kill(holders)


def carrying(run_id: str) -> list[int]:
    """Live processes (not this one) whose environment carries ``run_id`` (``tag_env``)."""
    if not run_id:
        return []
    key, cookie = f"{RUN_ID_ENV}=".encode(), run_id.encode()
    found = []
    for entry in Path("/proc").glob("[0-9]*/environ"):
        try:
            pid = int(entry.parent.name)
            env = entry.read_bytes()  # a zombie's reads empty; another user's is refused
        except (OSError, ValueError):
            continue
        ids = next((v[len(key):] for v in env.split(b"\0") if v.startswith(key)), b"")
        if pid != os.getpid() and cookie in ids.split(b":"):
            found.append(pid)
    return found


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


def _kill(pids: list[int]) -> None:
    for p in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(p, signal.SIGKILL)


def _is_group_leader(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False
