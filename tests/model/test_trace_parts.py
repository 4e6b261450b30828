"""The JSON Lines file layout: a core line, then the bulk in part lines parsed on use."""

from __future__ import annotations

import gzip
import itertools
import json
import math

import pytest

from fusionviz.model import lazy
from fusionviz.model.errors import TraceError
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import VERSION, Access, Node
from fusionviz.model.tracefile import columns
from fusionviz.model.tracefile.io import load_trace, save_trace, to_dict
from fusionviz.model.tracefile.parts import CHUNK, NODE_PARTS, ROUND_PARTS

TRACE = synthetic_trace(2 * CHUNK + 300, seed=6, rounds=3)


@pytest.fixture(scope="module")
def path(tmp_path_factory):
    p = tmp_path_factory.mktemp("parts") / "t.json"  # plain text, to edit lines
    save_trace(TRACE, p)
    return p


@pytest.fixture(scope="module")
def path2(tmp_path_factory):
    p = tmp_path_factory.mktemp("parts2") / "t.json"  # the version-2 layout, as records
    save_trace(TRACE, p, version=2)
    return p


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines()


def test_the_file_is_a_core_line_then_the_bulk_in_part_lines(path2):
    lines = _lines(path2)
    graph = TRACE.graphs[0]
    n_node_lines = math.ceil(len(graph.nodes) / CHUNK)
    assert len(lines) == 1 + n_node_lines + len(ROUND_PARTS) * len(graph.rounds)
    core = json.loads(lines[0])
    assert core["version"] == 2 and core["parts"] == {"chunk": CHUNK, "lines": len(lines) - 1}
    node = core["graphs"][0]["nodes"][0]
    assert node["name"] == graph.nodes[0].name and not set(NODE_PARTS) & set(node)
    assert not set(ROUND_PARTS) & set(core["graphs"][0]["rounds"][0])
    assert len(lines[0]) < sum(map(len, lines)) / 2  # the core is the small part
    details = json.loads(lines[1])
    assert len(details) == CHUNK and details[0][0] == to_dict(graph.nodes[0])["reads"]


def test_version_4_writes_the_same_lines_in_columns_with_one_table_of_strings(path, path2):
    lines, lines2 = _lines(path), _lines(path2)
    assert len(lines) == len(lines2)
    core = json.loads(lines[0])
    assert core["version"] == VERSION == 4 and core["parts"] == {
        "chunk": CHUNK, "columns": 2, "lines": len(lines) - 1, "code": [], "grouped": []}
    strings, graph = columns.table(core["strings"], coded=True), TRACE.graphs[0]
    assert ["op", 1] in core["strings"]  # numbered names: a prefix and a number
    nodes = core["graphs"]["v"]["nodes"]  # the graphs' nodes, field by field
    names = list(itertools.accumulate(nodes["v"]["name"]))  # indices, as differences
    assert [strings[i] for i in names] == [n.name for n in graph.nodes]
    assert not set(NODE_PARTS) & set(nodes["v"]) and len(strings) == len(set(strings))
    reads = json.loads(lines[1])[0]  # a details line: reads, writes, origins in columns
    assert reads["n"][:3] == [len(n.reads) for n in graph.nodes[:3]]
    assert [strings[i] for i in itertools.accumulate(reads["v"]["buffer"][:2])] == [
        a.buffer for n in graph.nodes for a in n.reads][:2]
    assert sum(map(len, lines)) < sum(map(len, lines2)) * 0.7  # smaller, before gzip too
    assert columns.decode(tuple[Node, ...], core["graphs"]["v"]["nodes"], 1, strings, True)[0][
        :CHUNK] == [{k: v for k, v in to_dict(n).items() if k not in NODE_PARTS}
                    for n in graph.nodes[:CHUNK]]


@pytest.mark.parametrize("lazy_load", [False, True])
def test_version_2_and_4_files_hold_the_same_trace(path, path2, lazy_load):
    assert load_trace(path2, lazy=lazy_load) == load_trace(path, lazy=lazy_load) == TRACE
    strings = columns.table(json.loads(_lines(path)[0])["strings"], coded=True)
    for line, line2 in zip(_lines(path)[1:3], _lines(path2)[1:3], strict=True):
        reads, writes, origins = json.loads(line)  # details: the v2 rows, in columns
        rows = json.loads(line2)
        assert columns.decode(tuple[Access, ...], reads, len(rows), strings) == [
            r[0] for r in rows] and len(origins["n"]) == len(writes["n"]) == len(rows)


@pytest.mark.parametrize("damaged", [
    b"[[[],[]]]", b"null", b"{}", b'[{"n":[1],"v":[]},{"n":[],"v":[]},{"n":[],"v":[]}]',
    b'[{"n":[-1],"v":{}},{},{}]'])
def test_a_version_3_details_line_of_the_wrong_shape_is_a_trace_error(path, tmp_path,
                                                                       damaged):
    lines = _lines(path)
    lines[1] = damaged
    bad = tmp_path / "shape3.json"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(TraceError, match=r"shape3\.json: part line 2 of the file: "):
        load_trace(bad)
    trace = load_trace(bad, lazy=True)
    for _ in range(2):
        with pytest.raises(TraceError, match="part line 2 of the file: "):
            trace.graphs[0].nodes[1].origins  # noqa: B018 (the read is the test)
    assert trace.graphs[0].nodes[CHUNK].origins == TRACE.graphs[0].nodes[CHUNK].origins


def test_eager_and_lazy_loads_give_the_trace_that_was_saved(path):
    assert load_trace(path) == TRACE
    trace = load_trace(path, lazy=True)
    assert trace == TRACE and lazy.pending_fields(trace) == 0  # equality read them all


def test_a_lazy_load_parses_a_part_line_when_a_field_in_it_is_read(path):
    trace = load_trace(path, lazy=True)
    graph = trace.graphs[0]
    store = graph.nodes[0].__dict__["reads"].raw.store
    parsed = []
    parse = store._parse
    store._parse = lambda text: parsed.append(text) or parse(text)
    node = graph.nodes[CHUNK + 5]  # in the second line of details
    assert node.origins == TRACE.graphs[0].nodes[CHUNK + 5].origins
    assert len(parsed) == 1 and set(store._parsed) == {1}  # kept: its other fields
    assert graph.nodes[CHUNK + 6].reads and len(parsed) == 1  # same line, parsed once
    assert graph.rounds[1].candidates == TRACE.graphs[0].rounds[1].candidates
    assert len(parsed) == 2 and set(store._parsed) == {1}  # a round's line: used once
    fusion, first = graph.rounds[0].fusions[0], graph.rounds[1].candidates[0]
    assert any(c.a is fusion.a or c.b is fusion.a for r in graph.rounds
               for c in r.candidates if c.a == fusion.a or c.b == fusion.a)
    assert first.a is graph.rounds[1].groups_before[graph.rounds[1].groups_before.index(first.a)]
    list(lazy.complete(trace))
    assert store._parsed == {} and all(line is None for line in store.lines)


def test_single_json_documents_still_load(tmp_path):
    data = to_dict(TRACE)
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(data, indent=2))  # its first line is "{"
    compact = tmp_path / "compact.json.gz"
    compact.write_bytes(gzip.compress(json.dumps(data).encode()))
    for p in (pretty, compact):
        assert load_trace(p) == TRACE and load_trace(p, lazy=True) == TRACE


def test_a_file_cut_short_is_refused_whole_and_opened_as_far_as_it_goes(path, tmp_path):
    cut = tmp_path / "cut.json"
    cut.write_bytes(b"\n".join(_lines(path)[:-2]) + b"\n")
    with pytest.raises(TraceError, match=r"cut\.json: the file's parts are incomplete"):
        load_trace(cut)  # a whole load (summary, strict checks) needs the whole file
    trace = load_trace(cut, lazy=True)  # the window: what the file still holds
    assert "the file is cut: its last 2 of" in trace.warnings[-1]
    assert trace.graphs[0].nodes[0].reads == TRACE.graphs[0].nodes[0].reads
    last = trace.graphs[-1].rounds[-1]
    with pytest.raises(TraceError, match=r"cut\.json: part line \d+ of the file is missing"):
        last.verdicts  # noqa: B018 (the read is the test)


def test_a_broken_part_line_is_named_when_it_is_read(path, tmp_path):
    lines = _lines(path)
    lines[2] = lines[2][: len(lines[2]) // 2]  # the second half of details chunk 2 lost
    bad = tmp_path / "bad.json"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(TraceError, match=r"bad\.json: part line 3 of the file is not JSON"):
        load_trace(bad)
    trace = load_trace(bad, lazy=True)  # opens: the core is whole
    assert trace.graphs[0].nodes[0].reads  # the first chunk is fine
    with pytest.raises(TraceError, match="part line 3 of the file is not JSON"):
        trace.graphs[0].nodes[CHUNK].reads  # noqa: B018 (the read is the test)
    with pytest.raises(TraceError, match="part line 3"):
        list(lazy.complete(trace))


def test_parts_that_do_not_match_the_graphs_are_refused(path2, path, tmp_path):
    lines = _lines(path2)
    core = json.loads(lines[0])
    core["graphs"][0]["rounds"].pop()  # one round fewer than the part lines hold
    odd = tmp_path / "odd.json"
    odd.write_bytes(b"\n".join([json.dumps(core).encode(), *lines[1:]]) + b"\n")
    with pytest.raises(TraceError, match="parts do not match its graphs"):
        load_trace(odd)
    lines = _lines(path)  # version 3: a line more than its graphs have parts
    core = json.loads(lines[0])
    core["parts"]["lines"] += 1
    odd.write_bytes(b"\n".join([json.dumps(core).encode(), *lines[1:], lines[-1]]) + b"\n")
    with pytest.raises(TraceError, match=r"parts do not match its graphs: \d+ lines for"):
        load_trace(odd)


@pytest.mark.parametrize("damaged", [b"[[[],[]]]", b"null", b"{}"])
def test_a_part_line_of_the_wrong_shape_is_a_trace_error_every_time(path2, tmp_path, damaged):
    lines = _lines(path2)
    lines[1] = damaged  # the first chunk of node details
    bad = tmp_path / "shape.json"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    with pytest.raises(TraceError, match=r"shape\.json: the file's parts do not match"):
        load_trace(bad)
    trace = load_trace(bad, lazy=True)
    for _ in range(2):  # the same error on a second read, not another kind
        with pytest.raises(TraceError, match="part line 2 of the file does not have the shape"):
            trace.graphs[0].nodes[1].origins  # noqa: B018 (the read is the test)


def test_strict_or_reported_loads_read_the_whole_file(path):
    assert lazy.pending_fields(load_trace(path, lazy=True, strict=True)) == 0
    assert lazy.pending_fields(load_trace(path, lazy=True)) > 0
