"""Format 3 (``tracefile.columns``): the bulk in columns with one table of strings,
read back to the same trace, and every malformed column, index or table refused with a
TraceError naming the file, eager and lazy; blind damage to version-3 files of the
committed traces (the fuzzing of ``test_fuzz_traces``) ends in a TraceError or a trace."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest
from test_fuzz_traces import SOURCES, fuzz

from fusionviz.model.errors import TraceError
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Origin
from fusionviz.model.tracefile import columns
from fusionviz.model.tracefile.io import load_trace, save_trace, to_dict
from fusionviz.model.tracefile.parts import CHUNK

TRACE = synthetic_trace(CHUNK + 40, seed=11, rounds=2)


@pytest.fixture(scope="module")
def lines(tmp_path_factory) -> list[bytes]:
    p = tmp_path_factory.mktemp("columns") / "t.json"
    save_trace(TRACE, p)
    return p.read_bytes().splitlines()


def _write(tmp_path: Path, lines: list[bytes], name="bad.json") -> Path:
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_columns_give_back_the_records_they_were_given():
    origins = [to_dict(o) for n in TRACE.graphs[0].nodes for o in n.origins]
    strings = columns.Strings()
    column = columns.encode(Origin, origins, strings)
    table = columns.table(json.loads(json.dumps(strings.table())))
    assert set(column) == {"name", "target", "file", "line", "code", "module", "module_class"}
    assert len(set(table)) == len(table) and all(type(i) is int for i in column["file"])
    assert set(column["file"][1:]) == {0}  # the same file: index differences of 0
    assert set(column["name"][1:]) == {1}  # a new name each: the next index
    assert columns.decode(Origin, json.loads(json.dumps(column)), len(origins), table) \
        == origins
    odd = [{"name": 5}]  # not what the model writes: kept as it is, read back alike
    assert columns.decode(Origin, columns.encode(Origin, odd, strings), 1, table) == odd


def test_the_table_writes_numbered_names_as_a_prefix_and_a_number():
    names = ["add_0", "add_1", "buf7", "add_2", "x_01", "op", "0", "", "a\nb_3", "add_12",
             "n" + "9" * 30, "buf8", "mul_" + "1" * 18, "mul_" + "1" * 19, "é_5"]
    strings = columns.Strings()
    for name in names:
        strings(name)
    written = strings.table()
    assert written[:4] == [["add_", 1], ["add_", 1], ["buf", 8], ["add_", 1]]
    assert written[4] == ["x_0", 2] and written[5] == "op"  # no leading zeros: "x_0" + "1"
    assert columns.table(json.loads(json.dumps(written))) == names


def test_code_is_written_with_its_numbered_names_as_differences():
    code = ("def forward(self, primals_1, primals_2):\n"
            "    add_0 = torch.ops.aten.add.Tensor(primals_1, primals_2);  primals_1 = None\n"
            "    add_1 = torch.ops.aten.add.Tensor(add_0, x_05);  a_1_5 = é_3 = _0\n"
            "    return (add_1, buf" + "9" * 25 + ", op_" + "1" * 18 + ")\n")
    written = columns.encode_code(code)
    assert written.count("$add_1 = ") == 2  # add_0 and add_1: each 1 more than the last
    assert "x_05" in written and "é_3" in written  # leading zeros, not ASCII: as they are
    assert columns.decode_code(written) == code
    layer = "    mul_{0} = torch.ops.aten.mul.Tensor(mul_{1}, view_{0});  view_{0} = None\n"
    deep = "".join(layer.format(i, i - 1) for i in range(1, 3000))
    written = columns.encode_code(deep)
    assert len(set(written.splitlines()[1:])) == 1  # every layer: the same line
    assert columns.decode_code(written) == deep
    assert columns.encode_code("a$b") is None  # holds the marker: kept as it is


@pytest.mark.parametrize(("text", "message"), [
    ("$add_" + "9" * 18 + " $add_" + "9" * 18, "out of range"),
    ("$add_-5", "out of range"),
    ("$a_" + "9" * 17 + "\n" + "$a_0\n" * 200_000, "grow past twice"),
])
def test_code_that_the_writer_cannot_have_written_is_refused(text, message):
    with pytest.raises(TraceError, match=message):
        columns.decode_code(text)


@pytest.mark.parametrize(("coded", "message"), [
    ([5], "graph 5 has no replay code"), ([-1], "graph -1 has no replay code"),
    ([0, 0], "not a list of distinct indices"), ([True], "not a list of distinct"),
    ("0", "not a list of distinct indices"), ([0], "graph 0 has no replay code"),
])
def test_a_bad_list_of_coded_graphs_is_refused_at_open(lines, tmp_path, coded, message):
    core = json.loads(lines[0])
    core["parts"]["code"] = coded
    bad = _write(tmp_path, [json.dumps(core).encode(), *lines[1:]])
    for lazy in (False, True):
        with pytest.raises(TraceError, match=rf"bad\.json: the core line's columns: .*{message}"):
            load_trace(bad, lazy=lazy)


def test_replay_code_round_trips_through_a_file(tmp_path):
    code = "def forward(self, x_1):\n    add_3 = x_1 + 1;  x_1 = None\n    return (add_3,)\n"
    graph = dataclasses.replace(TRACE.graphs[0], replay={"code": code, "inputs": []})
    trace = dataclasses.replace(TRACE, graphs=(graph,))
    save_trace(trace, tmp_path / "r.json.gz")
    core = json.loads(gzip.decompress((tmp_path / "r.json.gz").read_bytes()).split(b"\n")[0])
    assert core["parts"]["code"] == [0] and core["graphs"]["v"]["replay"][0]["code"] == (
        "def forward(self, $x_2):\n    $add_4 = $x_0 + 1;  $x_0 = None\n    return ($add_0,)\n")
    assert load_trace(tmp_path / "r.json.gz").graphs[0].replay["code"] == code


@pytest.mark.parametrize(("change", "message"), [
    (lambda reads: reads["v"]["buffer"].__setitem__(0, 10**6), "index is out of range"),
    (lambda reads: reads["v"]["buffer"].__setitem__(0, -1), "a negative index"),
    (lambda reads: reads["v"]["buffer"].__setitem__(0, 1.5), "else than integers"),
    (lambda reads: reads["v"]["buffer"].__setitem__(0, True), "else than integers"),
    (lambda reads: reads["v"]["buffer"].append(0), r"holds [\d,]+ for [\d,]+ records"),
    (lambda reads: reads["n"].__setitem__(0, 10**12),
     r"holds [\d,]+ for 1,000,000,[\d,]+ records"),
    (lambda reads: reads["n"].__setitem__(0, -3), "something else than lengths"),
    (lambda reads: reads["v"].pop("dep"), "does not have its fields"),
    (lambda reads: reads.pop("n"), r"not \{n, v\}"),
])
def test_a_bad_column_in_a_part_line_is_a_trace_error_eager_and_lazy(lines, tmp_path,
                                                                     change, message):
    details = json.loads(lines[1])
    change(details[0])  # the reads of the first chunk's nodes
    bad = _write(tmp_path, [lines[0], json.dumps(details).encode(), *lines[2:]])
    with pytest.raises(TraceError, match=rf"bad\.json: part line 2 of the file: .*{message}"):
        load_trace(bad)
    trace = load_trace(bad, lazy=True)  # opens: the core is whole
    for _ in range(2):
        with pytest.raises(TraceError, match=rf"bad\.json: part line 2 .*{message}"):
            trace.graphs[0].nodes[0].reads  # noqa: B018 (the read is the test)
    assert trace.graphs[0].nodes[CHUNK].reads == TRACE.graphs[0].nodes[CHUNK].reads
    assert trace.graphs[0].rounds[0].verdicts == TRACE.graphs[0].rounds[0].verdicts


@pytest.mark.parametrize(("change", "message"), [
    (lambda core: core.__setitem__("strings", ["a", 5]), "not a list of strings"),
    (lambda core: core.__setitem__("strings", [[5]]), "not a list of strings"),
    (lambda core: core.__setitem__("strings", [["a", "b"]]), "not a list of strings"),
    (lambda core: core.__setitem__("strings", [["a", True]]), "not a list of strings"),
    (lambda core: core.__setitem__("strings", [[5, 1]]), "not a list of strings"),
    (lambda core: core.__setitem__("strings", [["a", 2 * 10**18]]), "number out of range"),
    (lambda core: core.__setitem__("strings", [["a", -5]]), "number out of range"),
    (lambda core: core.__setitem__("strings", {"0": "a"}), "not a list of strings"),
    (lambda core: core.pop("strings"), "not a list of strings"),
    (lambda core: core.__setitem__("strings", core["strings"][:3]), "out of range"),
    (lambda core: core["graphs"]["v"]["nodes"]["v"]["name"].append(0), "core line's columns"),
    (lambda core: core["graphs"].__setitem__("n", [10**9]), "core line's columns"),
    (lambda core: core.__setitem__("entries", [{}]), "core line's columns"),
])
def test_a_bad_table_or_core_column_is_refused_at_open(lines, tmp_path, change, message):
    core = json.loads(lines[0])
    change(core)
    bad = _write(tmp_path, [json.dumps(core).encode(), *lines[1:]])
    for lazy in (False, True):
        with pytest.raises(TraceError, match=rf"bad\.json: .*{message}"):
            load_trace(bad, lazy=lazy)


def test_a_huge_table_of_strings_is_refused_by_the_memory_bound(lines, tmp_path):
    """A table is JSON text like any other: a gzip bomb of strings is refused before
    it is parsed (``bounded``), the table no exception."""
    core = json.loads(lines[0])
    core["strings"] = []
    head, tail = json.dumps(core).encode().split(b'"strings": []')
    text = head + b'"strings": [' + b'"",' * 6_000_000 + b'""]' + tail
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b"\n".join([text, *lines[1:]]) + b"\n", 9))
    assert bomb.stat().st_size < 100_000
    for lazy in (False, True):
        with pytest.raises(TraceError, match=r"bomb\.json\.gz: reading this trace would take"):
            load_trace(bomb, lazy=lazy)


@pytest.fixture(scope="module", params=[3, 4])
def column_sources(request, tmp_path_factory) -> tuple[int, list[Path]]:
    folder = tmp_path_factory.mktemp(f"v{request.param}")
    out = []
    for source in SOURCES:
        out.append(folder / source.name)
        save_trace(load_trace(source), out[-1], version=request.param)
    return request.param, out


def test_damaged_version_3_and_4_files_load_or_are_refused_with_a_trace_error(
        column_sources, tmp_path):
    version, sources = column_sources
    outcomes: dict[str, int] = {}
    for source in sources:
        core = json.loads(gzip.decompress(source.read_bytes()).split(b"\n")[0])
        assert core["version"] == version and core["parts"]["columns"] == version - 2
        fuzz(source, 60, tmp_path, outcomes)
    assert outcomes.get("refused", 0) > 60 * len(sources) // 10, outcomes
