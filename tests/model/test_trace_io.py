"""Trace files: round trip, atomic gzip writes, clear errors, old versions keep loading."""

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from fusionviz.model.errors import TraceError
from fusionviz.model.trace import VERSION, Graph, Node, Script, Trace
from fusionviz.model.tracefile import io as trace_io
from fusionviz.model.tracefile.io import LoadReport, load_trace, save_trace

DATA = Path(__file__).parents[1] / "data"
REAL = sorted(DATA.glob("*.json.gz"))


def _small() -> Trace:
    node = Node(name="op0", type="SchedulerNode", category="pointwise")
    return Trace(script=Script(path="x.py", status="ok"), graphs=(Graph(index=0, nodes=(node,)),))


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_round_trip(tmp_path, suffix):
    path = tmp_path / f"t{suffix}"
    save_trace(_small(), path)
    assert load_trace(path, strict=True) == _small()
    assert (path.read_bytes()[:2] == b"\x1f\x8b") == (suffix == ".json.gz")
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temp file left


@pytest.mark.parametrize("path", REAL, ids=[p.name for p in REAL])
def test_every_committed_trace_loads_and_round_trips(path, tmp_path):
    """The same trace, but for times rounded to the nanosecond (format 4), once."""
    trace = load_trace(path, strict=True)
    assert trace.version <= VERSION and trace.graphs
    save_trace(trace, tmp_path / "again.json.gz")
    again = load_trace(tmp_path / "again.json.gz")
    assert again == _to_the_nanosecond(trace)
    save_trace(again, tmp_path / "again.json.gz")
    assert load_trace(tmp_path / "again.json.gz") == again
    save_trace(trace, tmp_path / "v3.json.gz", version=3)  # format 3: times as they are
    assert load_trace(tmp_path / "v3.json.gz") == trace


def _ns(ms):
    if isinstance(ms, tuple):
        return tuple(map(_ns, ms))
    return None if ms is None else round(ms * 1e6) / 1e6


def _to_the_nanosecond(trace: Trace) -> Trace:
    """``trace`` with its kernels' and eager kernels' times rounded to the nanosecond."""
    def kernel(k):
        return dataclasses.replace(k, ms=_ns(k.ms), ms_spread=_ns(k.ms_spread),
                                   start_ms=_ns(k.start_ms), end_ms=_ns(k.end_ms),
                                   launches=_ns(k.launches))

    graphs = tuple(dataclasses.replace(g, kernels=tuple(map(kernel, g.kernels)))
                   for g in trace.graphs)
    entries = tuple(dataclasses.replace(e, kernels=tuple(
        dataclasses.replace(k, ms=_ns(k.ms)) for k in e.kernels)) for e in trace.entries)
    return dataclasses.replace(trace, graphs=graphs, entries=entries)


def test_version_1_fixture_still_loads():
    trace = load_trace(DATA / "v1_cpu_mlp_block.json.gz", strict=True)
    assert trace.version == VERSION == 4 and [g.kind for g in trace.graphs] == ["forward", "backward"]


@pytest.mark.parametrize("lazy", [False, True])
def test_version_2_fixture_still_loads_and_holds_the_same_trace_as_version_1(lazy):
    """A frozen file in format 2 (JSON Lines: the core, then part lines): never rewrite it."""
    path = DATA / "v2_cpu_mlp_block.json.gz"
    lines = gzip.decompress(path.read_bytes()).splitlines()
    core = json.loads(lines[0])
    assert core["version"] == 2 and core["parts"]["lines"] == len(lines) - 1 > 0
    trace = load_trace(path, lazy=lazy)
    assert trace == load_trace(DATA / "v1_cpu_mlp_block.json.gz", strict=True)
    assert sum(len(r.candidates) for g in trace.graphs for r in g.rounds) > 0


@pytest.mark.parametrize("lazy", [False, True])
def test_version_3_fixture_still_loads_and_holds_the_same_trace_as_version_1(lazy):
    """A frozen file in format 3 (the lines in columns, one table of strings)."""
    path = DATA / "v3_cpu_mlp_block.json.gz"
    lines = gzip.decompress(path.read_bytes()).splitlines()
    core = json.loads(lines[0])
    assert core["version"] == 3 and core["parts"]["columns"] == 1 and core["strings"]
    assert load_trace(path, lazy=lazy) == load_trace(DATA / "v1_cpu_mlp_block.json.gz",
                                                     strict=True)


@pytest.mark.parametrize("lazy", [False, True])
def test_version_4_fixture_still_loads_and_holds_the_same_trace_as_version_1(lazy):
    """A frozen file in format 4 (times in whole nanoseconds, eager kernels grouped)."""
    path = DATA / "v4_cpu_mlp_block.json.gz"
    core = json.loads(gzip.decompress(path.read_bytes()).splitlines()[0])
    assert core["version"] == 4 and core["parts"]["columns"] == 2 and core["strings"]
    assert load_trace(path, lazy=lazy) == _to_the_nanosecond(
        load_trace(DATA / "v1_cpu_mlp_block.json.gz", strict=True))


def _write(tmp_path, data, name="bad.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def test_newer_version_is_refused_with_a_clear_message(tmp_path):
    data = trace_io.to_dict(_small())
    data["version"] = VERSION + 1
    with pytest.raises(TraceError, match=r"bad\.json: trace version \d+ is newer.*upgrade"):
        load_trace(_write(tmp_path, data))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ("{not json", "invalid JSON"),
        ({"format": "something-else", "version": 1}, "not a fusionviz trace"),
        ({"format": "fusionviz-trace", "version": "one"}, "bad trace version"),
        ({"format": "fusionviz-trace", "version": 1, "graphs": [{"index": "zero"}]},
         r"trace\.graphs\[0\]\.index: expected int, got str"),
        ({"format": "fusionviz-trace", "version": 1, "graphs": [{}]},
         r"trace\.graphs\[0\]: missing field 'index'"),
        ({"format": "fusionviz-trace", "version": 1, "script": []},
         r"trace\.script: expected an object"),
    ],
)
def test_malformed_files_name_the_problem(tmp_path, data, message):
    with pytest.raises(TraceError, match=message):
        load_trace(_write(tmp_path, data))


def test_truncated_gzip_is_an_error_not_a_crash(tmp_path):
    blob = gzip.compress(json.dumps(trace_io.to_dict(_small())).encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(TraceError, match="cut.json.gz: cannot read"):
        load_trace(path)


def test_size_cap(tmp_path):
    path = tmp_path / "t.json"
    save_trace(_small(), path)
    with pytest.raises(TraceError, match="larger than 10 bytes"):
        load_trace(path, max_bytes=10)


def test_unknown_fields_lenient_or_strict(tmp_path):
    data = trace_io.to_dict(_small())
    data["graphs"][0]["future_field"] = 1
    path = _write(tmp_path, data)
    report = LoadReport()
    assert load_trace(path, report=report).graphs[0].index == 0
    assert report.ignored == ["trace.graphs[0].future_field"]
    with pytest.raises(TraceError, match="unknown field"):
        load_trace(path, strict=True)


def test_no_pickle_or_code_execution(tmp_path):
    payload = {"format": "fusionviz-trace", "version": 1, "env": {"__reduce__": "os.system"}}
    trace = load_trace(_write(tmp_path, payload))
    assert trace.env == {"__reduce__": "os.system"}  # data stays data
