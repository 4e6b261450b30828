"""Tests that capture carry the ``torch`` marker (tests/conftest.py), so that
``-m "not torch"`` is a fast loop: an unmarked test that starts a capture fails."""

from pathlib import Path

import pytest

from fusionviz.model.run.runner import run_capture

SCRIPT = Path(__file__).parent / "data" / "scripts" / "whatif_ops.py"


def test_an_unmarked_test_that_starts_a_capture_fails(request, tmp_path):
    with pytest.raises(pytest.fail.Exception, match="starts a capture: mark it"):
        run_capture(str(SCRIPT), str(tmp_path / "t.json.gz"), device="cpu")
    assert not (tmp_path / "t.json.gz").exists()  # no child started
    assert request.node.capture_refusals  # and the test fails at its end, were it caught
    request.node.capture_refusals.clear()  # (here it is on purpose)
