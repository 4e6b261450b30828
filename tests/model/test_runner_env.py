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


def test_an_output_path_that_cannot_be_written_is_named_before_the_script_runs(tmp_path):
    from fusionviz.model.run.runner import output_problem

    assert output_problem(str(tmp_path / "t.json.gz")) == ""
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    assert output_problem(str(a_file / "t.json.gz")) == f"{a_file} is not a folder"
    assert "does not exist" in output_problem(str(tmp_path / "missing" / "t.json.gz"))
    assert "is a folder" in output_problem(str(tmp_path))
