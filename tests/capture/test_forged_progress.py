"""Progress travels on a private pipe: what the script prints is its output, even
lines shaped like progress messages; the capture neither crashes nor stays 'running'."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.run.runner import run_capture
from fusionviz.model.tracefile.io import load_trace

pytestmark = pytest.mark.torch

SCRIPT = str(Path(__file__).parents[1] / "data" / "scripts" / "forges_progress.py")


def test_forged_progress_lines_are_the_scripts_output(tmp_path):
    progress, output = [], []
    trace = run_capture(SCRIPT, str(tmp_path / "t.json.gz"), device="cpu", timing=False,
                        on_progress=progress.append, on_output=output.append)
    assert [m["event"] for m in progress] == ["start", "done"]
    assert progress[-1]["status"] == "no_graphs" and progress[-1]["graphs"] == 0
    assert 'FUSIONVIZ {"event":"round","graph":0,"round":"x"}' in output
    assert 'FUSIONVIZ {"event":"done","status":"ok","graphs":99}' in output
    assert "progress pipe in the environment: None" in output
    assert trace.script.status == "no_graphs"


def test_the_command_line_reports_the_script_status_not_a_forged_one(tmp_path, capsys):
    out = tmp_path / "t.json.gz"
    assert main(["capture", SCRIPT, "-o", str(out), "--device", "cpu", "--no-timing"]) == 1
    printed = capsys.readouterr()
    assert "FUSIONVIZ garbage" in printed.out and "status   no_graphs" in printed.out
    assert "fusion round x" not in printed.err and "99 graph" not in printed.err
    assert load_trace(out).script.status == "no_graphs"


def test_a_progress_callback_that_raises_leaves_a_settled_trace(tmp_path):
    def boom(msg):
        raise RuntimeError("callback failed")

    out = tmp_path / "t.json.gz"
    with pytest.raises(RuntimeError, match="callback failed"):
        run_capture(SCRIPT, str(out), device="cpu", timing=False, on_progress=boom)
    assert load_trace(out).script.status == "cancelled"
