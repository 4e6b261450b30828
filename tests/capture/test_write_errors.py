"""A trace that cannot be written (a full disk; here a file-size limit, so writes fail
with EFBIG) is reported as such: the last good file is kept, the script's status is
its own, and `fusionviz capture` exits non-zero saying what happened."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.model.tracefile.io import load_trace

pytestmark = pytest.mark.torch

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "tests" / "data" / "scripts" / "fills_the_disk.py"
# The trace of the script's first graph takes about 7.3 KB, of both about 9.5 KB (each
# graph keeps its replay source too; format 3, not gzipped: its columns cost a small
# trace more characters than format 2's records)
LIMIT = 8400


def _limited(limit: int):
    def preexec() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past it fails (EFBIG)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return preexec


def test_a_full_disk_keeps_the_graphs_written_and_the_scripts_status(tmp_path):
    out = tmp_path / "t.json"  # not gzipped: the sizes above
    done = subprocess.run(
        [sys.executable, "-m", "fusionviz", "capture", str(SCRIPT), "-o", str(out),
         "--device", "cpu", "--no-timing"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, preexec_fn=_limited(LIMIT))
    assert done.returncode == 1, done.stderr
    assert ("fusionviz capture: could not write the trace: file too large; graph 0 kept"
            in done.stderr)
    assert "Traceback" not in done.stderr.split("script done")[-1]  # no crash of ours
    trace = load_trace(out)
    assert len(trace.graphs) == 1
    assert trace.script.status == "ok"  # the script did succeed
    assert "could not write the trace: file too large" in trace.script.message
