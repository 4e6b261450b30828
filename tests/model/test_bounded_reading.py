"""Every file the app reads goes through one bounded reader (#19): traces, their part
lines, an experiment folder's ``experiment.json``, its report and its variants' traces.
Special files (a FIFO, a symlink to ``/dev/zero``), huge sparse files, deep nesting,
counts a file cannot hold and paths out of the folder are refused with a TraceError
naming the file, in bounded time and memory, by the loader's API and by the command
line (one line, exit status 2, no traceback). Real files on disk, no Qt."""

from __future__ import annotations

import gzip
import json
import os
import resource
import shutil
import time
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.errors import TraceError
from fusionviz.model.experiment.ranks import rank_siblings
from fusionviz.model.experiment.runs import read_experiment
from fusionviz.model.queries import why_not_fused
from fusionviz.model.tracefile import bounded
from fusionviz.model.tracefile.build import MAX_FREE_DEPTH
from fusionviz.model.tracefile.io import load_trace, read_script, save_trace
from fusionviz.model.tracefile.save_as import save_trace_as

DATA = Path(__file__).resolve().parents[1] / "data"
EXPERIMENT = DATA / "experiments" / "cpu_ab_whatif_ops"  # experiment.json, a/b traces, report
MULTI_PART = DATA / "gpu_mlp_block.json.gz"  # 57 KB of JSON: a core line and 16 part lines
ROUNDS = DATA / "gpu_breaks.json.gz"  # graph 1: op0 and op2 rejected in rounds 1-3
HUGE = 3 * 1024**3  # a sparse file: costs no disk
SECONDS, MEMORY = 10, 1024**3  # what any refusal may take
needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KB on Linux


class _Bounded:
    """Asserts that its block ran in under 10 s and grew the peak memory by < 1 GB."""

    def __enter__(self):
        self.rss, self.start = _maxrss(), time.monotonic()
        return self

    def __exit__(self, *exc):
        took, grew = time.monotonic() - self.start, _maxrss() - self.rss
        assert took < SECONDS, f"took {took:.1f} s"
        assert grew < MEMORY, f"grew by {grew / 2**20:.0f} MB"
        return False


def refused(fn, name: str, match: str = "") -> str:
    """``fn()`` raises a one-line TraceError naming file ``name`` (and saying ``match``)
    within the time and memory bounds; its message."""
    with _Bounded(), pytest.raises(TraceError) as err:
        fn()
    message = str(err.value)
    assert name in message and match in message and "\n" not in message, message
    return message


def cli_refuses(capsys, name: str, *argv, match: str = "") -> str:
    """``fusionviz ARGV`` exits 2 with one line naming ``name``, and no traceback."""
    with _Bounded():
        code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert code == 2, (code, out, err)
    assert err.startswith("fusionviz: ") and err.count("\n") == 1, err
    assert name in err and match in err and "Traceback" not in out + err, err
    return err


def _lines(path: Path) -> list[bytes]:
    return gzip.decompress(path.read_bytes()).split(b"\n")


def _write(path: Path, core: dict, lines: list[bytes]) -> Path:
    path.write_bytes(gzip.compress(b"\n".join([json.dumps(core).encode(), *lines])))
    return path


def _special(kind: str, path: Path) -> Path:
    """A FIFO, a symlink to /dev/zero or a 3 GB sparse file at ``path``."""
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev_zero":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as f:
            f.truncate(HUGE)
    return path


SPECIAL = [pytest.param("fifo", marks=needs_fifo), "dev_zero", "sparse_3gb"]
SAYS = {"fifo": "not a regular file", "dev_zero": "not a regular file",
        "sparse_3gb": "larger than"}


# -- a trace file, by every reader of traces ------------------------------------------

READERS = {
    "eager": load_trace,
    "lazy": lambda p: load_trace(p, lazy=True),
    "read_script": read_script,
    "read_json": bounded.read_json,
    "read_text": bounded.read_text,
}


@pytest.mark.timeout(20)
@pytest.mark.parametrize("reader", list(READERS))
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_special_or_huge_file_is_refused_by_every_reader(tmp_path, kind, reader):
    path = _special(kind, tmp_path / "t.json.gz")
    refused(lambda: READERS[reader](path), "t.json.gz", SAYS[kind])


@pytest.mark.parametrize("reader", ["eager", "lazy", "read_script", "read_json"])
def test_json_nested_100000_deep_is_refused_by_every_json_reader(tmp_path, reader):
    path = tmp_path / "deep.json.gz"
    path.write_bytes(gzip.compress(b"[" * 100_000 + b"]" * 100_000))
    refused(lambda: READERS[reader](path), "deep.json.gz", "nested too deeply")


@pytest.mark.timeout(20)
@needs_fifo
def test_save_as_of_a_trace_swapped_for_a_fifo_says_so_instead_of_blocking(tmp_path):
    fifo = _special("fifo", tmp_path / "t.json.gz")
    with _Bounded(), pytest.raises(OSError, match=r"t\.json\.gz: not a regular file"):
        save_trace_as(fifo, tmp_path / "copy.json")
    assert [p.name for p in tmp_path.iterdir()] == ["t.json.gz"]  # no half file left


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", SPECIAL)
def test_the_command_line_refuses_special_trace_files(capsys, tmp_path, kind):
    path = _special(kind, tmp_path / "t.json.gz")
    for argv in (["summary", path], ["query", path], ["why", path, "op0", "op1"]):
        cli_refuses(capsys, "t.json.gz", *argv, match=SAYS[kind])


# -- counts a file cannot hold ---------------------------------------------------------

@pytest.fixture(params=[10**12, 4 * 10**8], ids=["1e12_lines", "4e8_lines"])
def claims(request, tmp_path) -> Path:
    """A 57 KB trace whose core line claims ``param`` part lines (it has 16)."""
    lines = _lines(MULTI_PART)
    core = json.loads(lines[0])
    assert core["parts"]["lines"] == 16
    core["parts"]["lines"] = request.param
    return _write(tmp_path / "claims.json.gz", core, lines[1:])


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_a_core_line_claiming_more_part_lines_than_the_file_holds_is_refused(claims, lazy):
    message = refused(lambda: load_trace(claims, lazy=lazy), "claims.json.gz")
    if lazy:  # refused before the missing lines are counted out
        assert "more than its" in message and "bytes can describe" in message


def test_the_command_line_refuses_such_counts_in_one_line(capsys, claims):
    for argv in (["query", claims], ["query", claims, "--json"], ["why", claims, "op0", "op1"],
                 ["summary", claims]):
        cli_refuses(capsys, "claims.json.gz", *argv, match="part lines")


def test_a_cut_file_still_opens_lazily_with_its_missing_lines_counted(tmp_path):
    lines = _lines(MULTI_PART)
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(gzip.compress(b"\n".join(lines[:5])))  # the core and 4 part lines
    trace = load_trace(cut, lazy=True)
    assert "its last 12 of 16 part lines are missing" in trace.warnings[-1]


# -- experiment folders ----------------------------------------------------------------

@pytest.fixture
def folder(tmp_path) -> Path:
    """A copy of a committed A/B experiment, to spoil."""
    return Path(shutil.copytree(EXPERIMENT, tmp_path / "exp"))


def _meta(folder: Path) -> dict:
    return json.loads((folder / "experiment.json").read_text())


def _set_meta(folder: Path, meta: dict) -> None:
    (folder / "experiment.json").write_text(json.dumps(meta))


def test_a_sound_experiment_folder_still_reads(folder):
    experiment = read_experiment(folder)
    assert [v.file for v in experiment.variants] == ["a.json.gz", "b.json.gz"]
    assert experiment.report == (folder / "report.md").read_text()


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind", SPECIAL)
def test_a_special_or_huge_experiment_json_is_refused(capsys, folder, kind):
    meta = folder / "experiment.json"
    meta.unlink()
    _special(kind, meta)
    refused(lambda: read_experiment(folder), "experiment.json", SAYS[kind])
    with _Bounded():
        assert rank_siblings(folder / "a.json.gz") == []  # what the window asks first
    for command in ("summary", "query"):
        cli_refuses(capsys, "experiment.json", command, folder, match=SAYS[kind])


def test_experiment_json_nested_100000_deep_is_refused(capsys, folder):
    (folder / "experiment.json").write_text("[" * 100_000 + "]" * 100_000)
    refused(lambda: read_experiment(folder), "experiment.json", "nested too deeply")
    assert rank_siblings(folder / "a.json.gz") == []
    cli_refuses(capsys, "experiment.json", "summary", folder, match="nested too deeply")
    cli_refuses(capsys, "experiment.json", "query", folder, match="nested too deeply")


@pytest.mark.parametrize("field, value, says", [
    ("kind", ["sweep"], "'kind' and 'script' must be strings"),
    ("script", {"a": 1}, "'kind' and 'script' must be strings"),
    ("variants", "a.json.gz", "'variants' must be a list"),
    ("variants", [{"label": "a"}, {"label": "b", "trace": "b.json.gz"}], "None is not a file"),
])
def test_experiment_json_fields_of_the_wrong_type_are_named(folder, field, value, says):
    _set_meta(folder, {**_meta(folder), field: value})
    refused(lambda: read_experiment(folder), "experiment.json", says)


@pytest.mark.parametrize("trace", ["../../etc/passwd", "/etc/passwd", "sub/../../a.json.gz",
                                   "link.json.gz", "."])
def test_a_variant_trace_outside_the_folder_is_refused(capsys, folder, trace):
    (folder / "link.json.gz").symlink_to("/etc/passwd")  # a symlink leading out
    meta = _meta(folder)
    meta["variants"][1]["trace"] = trace
    _set_meta(folder, meta)
    message = refused(lambda: read_experiment(folder), "experiment.json",
                      "outside the folder")
    assert repr(trace) in message
    cli_refuses(capsys, "experiment.json", "summary", folder, match="outside the folder")


def test_the_rank_selector_lists_no_rank_outside_the_folder(tmp_path):
    ranks = Path(shutil.copytree(DATA / "ranks" / "cpu_comm_overlap", tmp_path / "ranks"))
    siblings = rank_siblings(ranks / "rank0.json.gz")
    assert [p.name for _, p in siblings] == ["rank0.json.gz", "rank1.json.gz"]
    meta = _meta(ranks)
    meta["variants"][1]["trace"] = "../../../etc/passwd"
    _set_meta(ranks, meta)
    assert rank_siblings(ranks / "rank0.json.gz") == []


@pytest.mark.timeout(20)
@pytest.mark.parametrize("report", ["huge.md", "fifo.md", "../../etc/passwd"])
def test_the_report_an_experiment_names_is_read_within_bounds(capsys, folder, report):
    if report == "huge.md":
        _special("sparse_3gb", folder / report)
    elif report == "fifo.md":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        _special("fifo", folder / report)
    _set_meta(folder, {**_meta(folder), "report": report})
    if report == "fifo.md":  # not a regular file: no report, as when there is none
        with _Bounded():
            assert read_experiment(folder).report == ""
        return
    says = "larger than 16777216 bytes" if report == "huge.md" else "outside the folder"
    name = "huge.md" if report == "huge.md" else "experiment.json"
    refused(lambda: read_experiment(folder), name, says)
    cli_refuses(capsys, name, "summary", folder, match=says)


@pytest.mark.timeout(20)
@pytest.mark.parametrize("kind, says", [
    pytest.param("fifo", "not a regular file", marks=needs_fifo),
    ("dev_zero", "outside the folder"),  # the symlink leads out of it
    ("sparse_3gb", "larger than"),
])
def test_a_variant_trace_that_is_special_is_refused_naming_it(capsys, folder, kind, says):
    (folder / "b.json.gz").unlink()
    _special(kind, folder / "b.json.gz")
    refused(lambda: read_experiment(folder), "b.json.gz", says)
    cli_refuses(capsys, "b.json.gz", "summary", folder, match=says)
    cli_refuses(capsys, "b.json.gz", "query", folder, match=says)


# -- round indices no list should be built from ---------------------------------------

@pytest.fixture(params=[10**30, 10**9], ids=["1e30", "1e9"])
def far_round(request, tmp_path) -> tuple[Path, int]:
    """gpu_breaks with graph 1's last round numbered ``param`` (rounds 1, 2, param)."""
    lines = _lines(ROUNDS)
    core = json.loads(lines[0])
    rounds = core["graphs"][1]["rounds"]
    assert [r["index"] for r in rounds] == [1, 2, 3]
    rounds[-1]["index"] = request.param
    return _write(tmp_path / "far_round.json.gz", core, lines[1:]), request.param


@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_why_answers_across_a_round_index_of_any_size(far_round, lazy):
    path, index = far_round
    graph = load_trace(path, lazy=lazy).graphs[1]
    with _Bounded():
        why = why_not_fused(graph, "op0", "op2")
    assert f"rounds 1, 2, {index}: no shared data" in why.summary
    assert {e.round for e in why.entries} == {1, 2, index}


def test_the_why_command_answers_across_a_round_index_of_any_size(capsys, far_round):
    path, index = far_round
    with _Bounded():
        assert main(["why", str(path), "op0", "op2", "--graph", "1"]) == 0
        assert main(["why", str(path), "op0", "op2", "--graph", "1", "--json"]) == 0
    out, err = capsys.readouterr()
    assert f"rounds 1, 2, {index}" in out and not err


# -- free-form fields nested deeply ----------------------------------------------------

def _deep_config(tmp_path: Path, depth: int) -> Path:
    lines = _lines(MULTI_PART)
    core = json.loads(lines[0])
    core["config"] = {"deep": json.loads("[" * depth + "]" * depth)} if depth < 900 else {}
    text = json.dumps(core).encode()
    if depth >= 900:  # json.dumps itself would recurse too deeply
        text = text.replace(b'"config": {}', b'"config": {"deep": ' + b"[" * depth
                            + b"]" * depth + b"}", 1)
    path = tmp_path / f"deep{depth}.json.gz"
    path.write_bytes(gzip.compress(b"\n".join([text, *lines[1:]])))
    return path


@pytest.mark.parametrize("depth", [1000, MAX_FREE_DEPTH + 10])
@pytest.mark.parametrize("lazy", [True, False], ids=["lazy", "eager"])
def test_a_deeply_nested_config_is_refused_at_load(capsys, tmp_path, depth, lazy):
    path = _deep_config(tmp_path, depth)
    message = refused(lambda: load_trace(path, lazy=lazy), path.name, "nested too deeply")
    if depth < 900:  # under the parsers' own limit: the field is named
        assert "trace.config: nested too deeply" in message
    cli_refuses(capsys, path.name, "summary", path, match="nested too deeply")
    cli_refuses(capsys, path.name, "query", path, match="nested too deeply")


def test_a_config_nested_within_the_limit_loads_and_saves(tmp_path):
    path = _deep_config(tmp_path, MAX_FREE_DEPTH - 1)  # 'config' itself is one level
    trace = load_trace(path, lazy=True)
    with _Bounded():
        save_trace(trace, tmp_path / "saved.json.gz")
        save_trace_as(path, tmp_path / "copy.json")
    assert load_trace(tmp_path / "saved.json.gz").config == trace.config
    assert load_trace(tmp_path / "copy.json") == load_trace(path)
