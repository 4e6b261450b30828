"""The capture child's environment."""

from __future__ import annotations

from fusionviz.model.run.runner import capture_env


def test_the_capture_child_finalizes_cupti_after_profiling_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("TEARDOWN_CUPTI", raising=False)
    env = capture_env("/tmp/fusionviz-cache")
    assert env["TEARDOWN_CUPTI"] == "1"
    assert env["TORCHINDUCTOR_CACHE_DIR"].startswith("/tmp/fusionviz-cache")
    monkeypatch.setenv("TEARDOWN_CUPTI", "0")
    assert capture_env("/tmp/fusionviz-cache")["TEARDOWN_CUPTI"] == "0"
