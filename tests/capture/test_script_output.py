"""The script's stderr is kept as a bounded tail, recorded in the trace's Script and
shown by `fusionviz capture` and `fusionviz summary` when the script failed."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.tracefile.io import load_trace

pytestmark = pytest.mark.torch

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"


def test_a_flood_on_stderr_is_kept_as_a_tail_and_shown_on_failure(tmp_path, capsys):
    out = tmp_path / "t.json.gz"
    assert main(["capture", str(SCRIPTS / "floods_stderr.py"), "-o", str(out),
                 "--device", "cpu", "--no-timing"]) == 1
    shown = capsys.readouterr().out
    assert "status   error: the script failed (exit status 3)" in shown
    assert "script's traceback / stderr" in shown and "  last words" in shown
    assert "earlier lines not kept" in shown and "noise 0\n" not in shown
    script = load_trace(out).script
    assert script.traceback.endswith("last words")
    assert len(script.traceback) <= 20000  # not the 1.1 MB the script wrote

    assert main(["summary", str(out)]) == 0
    summary = capsys.readouterr().out
    assert "  last words" in summary and "script's traceback / stderr" in summary
