"""A script's daemon (a double fork into a session of its own, its output detached)
leaves the child's process group and tree; the capture still ends it, at a normal
exit and on timeout, and the command line returns promptly."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.torch

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "tests" / "data" / "scripts" / "starts_a_daemon.py"


def _capture(tmp_path, how: str, *options: str) -> tuple[subprocess.CompletedProcess, int, float]:
    pidfile = tmp_path / "daemon.pid"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "fusionviz", "capture", str(SCRIPT), str(pidfile), how,
         "-o", str(tmp_path / "t.json.gz"), "--device", "cpu", "--no-timing", *options],
        capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    took = time.monotonic() - t0
    assert pidfile.exists(), done.stdout + done.stderr
    return done, int(pidfile.read_text()), took


def _gone(alive, pid: int) -> bool:
    deadline = time.monotonic() + 2  # SIGKILL is sent; the kernel may take a moment
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not alive(pid)


def test_a_daemon_does_not_outlive_a_normal_exit(tmp_path, alive):
    done, daemon, took = _capture(tmp_path, "exit")
    assert done.returncode == 1 and "status   no_graphs" in done.stdout, done.stderr
    assert took < 30  # not the daemon's 120 s
    assert _gone(alive, daemon), "the script's daemon still runs after the capture"


def test_a_daemon_does_not_escape_the_timeout(tmp_path, alive):
    # 30 s: the script starts its daemon first (8 s were not enough for torch's import on
    # a loaded 2-core machine: the script was stopped before it started the daemon)
    done, daemon, took = _capture(tmp_path, "hang", "--timeout", "30")
    assert "status   timeout" in done.stdout, done.stderr
    assert took < 90  # not the daemon's 120 s, nor the script's hour
    assert _gone(alive, daemon), "the script's daemon still runs after the timeout"
