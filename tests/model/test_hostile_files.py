"""Files crafted to break the loader are refused with a TraceError naming the file
(#11): deep nesting, huge integers, a boolean version, a FIFO, and a lazily read part
that fails, read twice, beside healthy ones."""

from __future__ import annotations

import json
import os
import threading

import pytest

from fusionviz.model.errors import TraceError
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import VERSION
from fusionviz.model.tracefile.io import load_trace, save_trace
from fusionviz.model.tracefile.parts import CHUNK

TRACE = synthetic_trace(CHUNK + 50, seed=3, rounds=2)


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    p = tmp_path_factory.mktemp("hostile") / "t.json"
    save_trace(TRACE, p)
    return p


def _lines(path) -> list[bytes]:
    return path.read_bytes().splitlines()


@pytest.mark.parametrize("lazy", [False, True])
def test_json_nested_deeper_than_python_recurses_is_refused(tmp_path, lazy):
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(TraceError, match=r"deep\.json: not a fusionviz trace"):
        load_trace(deep, lazy=lazy)


def test_deep_nesting_inside_a_part_line_is_a_trace_error_naming_the_file(saved, tmp_path):
    lines = _lines(saved)
    lines[1] = b"[" * 100_000 + b"]" * 100_000
    bad = tmp_path / "deep_part.json"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    trace = load_trace(bad, lazy=True)
    for _ in range(2):
        with pytest.raises(TraceError, match=r"deep_part\.json: "):
            trace.graphs[0].nodes[0].reads  # noqa: B018 (the read is the test)


def test_an_integer_of_thousands_of_digits_is_refused(saved, tmp_path):
    core = json.loads(_lines(saved)[0])
    huge = tmp_path / "huge.json"
    text = json.dumps(core).replace(f'"version": {VERSION}', '"version": ' + "9" * 5000, 1)
    huge.write_bytes(b"\n".join([text.encode(), *_lines(saved)[1:]]) + b"\n")
    with pytest.raises(TraceError, match=r"huge\.json: not a fusionviz trace \(invalid JSON"):
        load_trace(huge)


def test_a_boolean_version_is_not_version_one(saved, tmp_path):
    core = json.loads(_lines(saved)[0])
    core["version"] = True
    odd = tmp_path / "bool.json"
    odd.write_bytes(b"\n".join([json.dumps(core).encode(), *_lines(saved)[1:]]) + b"\n")
    with pytest.raises(TraceError, match=r"bool\.json: bad trace version True"):
        load_trace(odd)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_at_once_instead_of_blocking(tmp_path):
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    result = {}

    def load():
        try:
            load_trace(fifo)
        except TraceError as e:
            result["error"] = str(e)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "load_trace blocked on a FIFO"
    assert result["error"].endswith("pipe.json: not a regular file")


@pytest.fixture(scope="module")
def saved2(tmp_path_factory):
    p = tmp_path_factory.mktemp("hostile2") / "t.json"
    save_trace(TRACE, p, version=2)
    return p


def _node3_reads_of_wrong_types(lines: list[bytes], version: int) -> bytes:
    details = json.loads(lines[1])  # the first chunk of node details
    if version == 2:  # [reads, writes, origins] per node
        details[3][0] = [{"buffer": 5, "bytes": "many"}]  # node 3's reads: wrong types
    else:  # [reads, writes, origins], each a column: {"n": lengths, "v": the items}
        reads = details[0]
        assert reads["n"][3] > 0
        reads["v"]["bytes"][sum(reads["n"][:3])] = "many"  # node 3's first read
    return json.dumps(details).encode()


@pytest.mark.parametrize("version", [2, 4])
def test_a_failing_lazy_field_fails_the_same_way_again_and_spares_its_neighbours(
        saved, saved2, tmp_path, version):
    lines = _lines(saved if version == 4 else saved2)
    lines[1] = _node3_reads_of_wrong_types(lines, version)
    bad = tmp_path / "one_bad.json"
    bad.write_bytes(b"\n".join(lines) + b"\n")
    trace = load_trace(bad, lazy=True)
    nodes = trace.graphs[0].nodes
    messages = []
    for _ in range(3):
        with pytest.raises(TraceError) as err:
            nodes[3].reads  # noqa: B018 (the read is the test)
        messages.append(str(err.value))
    assert len(set(messages)) == 1 and messages[0].startswith(str(bad))
    # every other field of the chunk still reads, in any order, before and after
    expected = TRACE.graphs[0].nodes
    for i in (2, 4, 0, CHUNK - 1):
        assert nodes[i].reads == expected[i].reads and nodes[i].origins == expected[i].origins
    assert nodes[3].writes == expected[3].writes


def test_a_graph_that_does_not_hold_together_is_described_not_refused():
    from dataclasses import replace

    from fusionviz.model.trace import Edge
    from fusionviz.model.validate import graph_problems

    g = synthetic_trace(30, seed=1, rounds=1).graphs[0]
    assert graph_problems(g) == []
    nodes = (*g.nodes, replace(g.nodes[4], category="sideways"), replace(g.nodes[2], bytes=-8))
    edges = (*g.edges, Edge(src="op9", dst="op9", buffer="b"), Edge(src="ghost", dst="op1",
             buffer="b"), Edge(src="op20", dst="op3", buffer="b"), Edge(src="op3", dst="op20",
             buffer="b"))
    kernels = (replace(g.kernels[0], ms=float("nan")), *g.kernels[1:])
    bad = replace(g, nodes=nodes, edges=edges, kernels=kernels)
    found = "\n".join(graph_problems(bad))
    for what in ("node names used twice: op2, op4", "naming nodes that are not in the graph: "
                 "ghost → op1", "from a node to itself: op9", "form a cycle",
                 "unknown category: op4 (sideways)", "negative sizes: op2",
                 "not finite or are negative: " + g.kernels[0].name):
        assert what in found, (what, found)


def test_a_file_cut_right_after_its_core_line_is_never_taken_for_whole(saved, tmp_path):
    cut = tmp_path / "core_only.json"
    cut.write_bytes(_lines(saved)[0])  # not even the newline after it
    with pytest.raises(TraceError, match=r"core_only\.json: the file's parts are incomplete"):
        load_trace(cut)
    trace = load_trace(cut, lazy=True)  # opens, says so, and no detail reads as empty
    assert "the file is cut: its last" in trace.warnings[-1]
    with pytest.raises(TraceError, match="is missing: the file is cut"):
        trace.graphs[0].nodes[0].reads  # noqa: B018 (the read is the test)


def test_a_truncated_gzip_opens_as_far_as_it_goes(saved, tmp_path):
    import gzip

    data = gzip.compress(saved.read_bytes())
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(data[:-30])  # the end of the stream: the last part lines
    with pytest.raises(TraceError, match=r"cut\.json\.gz: cannot read the file"):
        load_trace(cut)
    trace = load_trace(cut, lazy=True)
    assert any("gzip stream ends early" in w for w in trace.warnings)
    assert trace.graphs[0].nodes[0].origins == TRACE.graphs[0].nodes[0].origins
    with pytest.raises(TraceError, match=r"cut\.json\.gz: part line"):
        trace.graphs[0].rounds[-1].verdicts  # noqa: B018 (cut: the last line is partial)


@pytest.mark.parametrize("version", [2, 4])
def test_numbers_beyond_64_bits_load_alike_eager_and_lazy_or_are_refused(saved, saved2,
                                                                        tmp_path, version):
    lines = _lines(saved if version == 4 else saved2)
    details = json.loads(lines[1])
    if version == 2:
        details[0][0] = [{"buffer": "b", "bytes": 2**70, "dep": "MemoryDep"}]
    else:
        assert details[0]["n"][0] > 0
        details[0]["v"]["bytes"][0] = 2**70  # node 0's first read
    big = tmp_path / "big_int.json"
    big.write_bytes(b"\n".join([lines[0], json.dumps(details).encode(), *lines[2:]]) + b"\n")
    eager = load_trace(big).graphs[0].nodes[0].reads
    lazy_reads = load_trace(big, lazy=True).graphs[0].nodes[0].reads
    assert eager == lazy_reads and lazy_reads[0].bytes == 2**70  # an int, both ways
    core = json.loads(lines[0])
    if version == 2:
        core["graphs"][0]["kernels"][0]["ms"] = 10**400  # no float holds it
    else:
        core["graphs"]["v"]["kernels"]["v"]["ms"][0] = 10**400
    huge = tmp_path / "huge_time.json"
    huge.write_bytes(b"\n".join([json.dumps(core).encode(), *lines[1:]]) + b"\n")
    for lazy in (False, True):
        with pytest.raises(TraceError, match=r"huge_time\.json: .*out of range"):
            load_trace(huge, lazy=lazy)


def test_an_empty_file_is_said_to_be_empty_not_bad_json(tmp_path):
    import gzip as _gzip

    empty = tmp_path / "empty.json.gz"
    empty.write_bytes(b"")
    with pytest.raises(TraceError, match=r"empty\.json\.gz: the file is empty \(0 bytes\)"):
        load_trace(empty)
    blank = tmp_path / "blank.json.gz"
    blank.write_bytes(_gzip.compress(b"\n \n"))
    for lazy in (False, True):
        with pytest.raises(TraceError, match=r"blank\.json\.gz: holds no text"):
            load_trace(blank, lazy=lazy)
