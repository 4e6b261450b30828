"""Settling how a capture child ended: no rewrite of a trace the child finished itself."""

from __future__ import annotations

import dataclasses
import gzip

from fusionviz.model.run.runner import finalize_trace
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Script
from fusionviz.model.tracefile.io import load_trace, read_script, save_trace


def _saved(tmp_path, status: str):
    trace = synthetic_trace(300, seed=5, rounds=3)
    trace = dataclasses.replace(trace, script=Script("s.py", status=status, exit_code=0))
    path = tmp_path / "t.json.gz"
    save_trace(trace, path)
    return trace, path


def test_a_trace_whose_child_wrote_its_final_status_is_not_rewritten(tmp_path):
    trace, path = _saved(tmp_path, "ok")
    before = path.read_bytes()
    stat = path.stat()
    script = finalize_trace(str(path), exit_code=0)
    assert script == trace.script
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stat.st_mtime_ns


def test_a_crashed_child_gets_its_status_written_into_the_core_line_only(tmp_path):
    trace, path = _saved(tmp_path, "running")
    parts_before = gzip.decompress(path.read_bytes()).split(b"\n", 1)[1]
    script = finalize_trace(str(path), exit_code=-6, stderr_tail="Fatal Python error")
    assert script.status == "crashed" and "SIGABRT" in script.message
    assert read_script(path) == script
    assert gzip.decompress(path.read_bytes()).split(b"\n", 1)[1] == parts_before
    assert load_trace(path) == dataclasses.replace(trace, script=script)


def test_a_cancel_overrides_the_status_the_child_wrote(tmp_path):
    _trace, path = _saved(tmp_path, "ok")
    assert finalize_trace(str(path), exit_code=None, status="cancelled").status == "cancelled"
    assert load_trace(path, lazy=True).script.status == "cancelled"


def test_a_child_that_wrote_nothing_still_leaves_a_trace_that_says_why(tmp_path):
    path = tmp_path / "never.json.gz"
    script = finalize_trace(str(path), exit_code=3, stderr_tail="ImportError: x", script="s.py")
    assert script.status == "error" and script.traceback == "ImportError: x"
    assert load_trace(path).script == script and load_trace(path).graphs == ()


SETTLE = """
import resource, signal, sys
from fusionviz.model.run.runner import finalize_trace, write_failure
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
limit = int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
script = finalize_trace(sys.argv[1], exit_code=3, stderr_tail="boom", script="s.py")
print(script.status, write_failure(script), sep="|")
"""


def _settle_limited(path, limit: int) -> str:
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).parents[2]
    done = subprocess.run([sys.executable, "-c", SETTLE, str(path), str(limit)],
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_settling_on_a_full_disk_keeps_the_last_file_and_says_so(tmp_path):
    trace, path = _saved(tmp_path, "running")
    assert len(trace.graphs) == 1
    before = path.read_bytes()
    said = _settle_limited(path, len(before) + 8)  # the rewrite is larger: EFBIG
    assert said == "error|could not write the trace: file too large; graph 0 kept"
    assert path.read_bytes() == before
    assert not [p for p in tmp_path.iterdir() if p.name != path.name]  # no temp left


def test_settling_with_nothing_written_on_a_full_disk_says_so(tmp_path):
    path = tmp_path / "never.json.gz"
    said = _settle_limited(path, 16)
    assert said == "error|could not write the trace: file too large; no graph kept"
    assert not path.exists()
