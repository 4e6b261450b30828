"""The capture child's environment."""

from __future__ import annotations

from pathlib import Path

from fusionviz.model.run.kernel_cache import KERNEL_CACHE_ENV
from fusionviz.model.run.runner import capture_env


def test_the_capture_child_finalizes_cupti_after_profiling_unless_the_user_chose(monkeypatch):
    monkeypatch.delenv("TEARDOWN_CUPTI", raising=False)
    monkeypatch.delenv(KERNEL_CACHE_ENV, raising=False)
    env = capture_env("/tmp/fusionviz-cache")
    assert env["TEARDOWN_CUPTI"] == "1"
    assert env["TORCHINDUCTOR_CACHE_DIR"].startswith("/tmp/fusionviz-cache")
    assert env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] == "1"
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


def test_a_kept_kernel_folder_holds_the_caches_and_no_variable_forces_one_on(monkeypatch,
                                                                             tmp_path):
    monkeypatch.setenv(KERNEL_CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")  # would skip the scheduler
    monkeypatch.setenv("TORCHINDUCTOR_AUTOGRAD_CACHE", "1")
    env = capture_env("/tmp/fusionviz-cache")
    assert env["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "inductor")
    assert env["TRITON_CACHE_DIR"] == str(tmp_path / "triton")
    assert "TORCHINDUCTOR_FORCE_DISABLE_CACHES" not in env
    assert env["TORCHINDUCTOR_FX_GRAPH_CACHE"] == env["TORCHINDUCTOR_AUTOGRAD_CACHE"] == "0"
    other = tmp_path / "other"  # a caller's own folder (an experiment's) wins
    assert capture_env("/tmp/c", kernel_cache=str(other))["TORCHINDUCTOR_CACHE_DIR"] == \
        str(other / "inductor")


def test_an_experiments_kernel_folder_is_the_kept_one_or_its_own_deleted_after(monkeypatch,
                                                                               tmp_path):
    from fusionviz.model.run.kernel_cache import shared_kernels

    monkeypatch.setenv(KERNEL_CACHE_ENV, str(tmp_path))
    with shared_kernels() as folder:
        assert folder == str(tmp_path)
    assert tmp_path.is_dir()  # the user's: kept
    monkeypatch.delenv(KERNEL_CACHE_ENV)
    with shared_kernels() as folder:
        assert Path(folder).is_dir() and folder != str(tmp_path)
    assert not Path(folder).exists()
