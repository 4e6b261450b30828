"""The fast trace loader (generated builders, optional orjson) builds exactly what the
careful field-by-field builder builds, and falls back to it with the same messages."""

import dataclasses
import gzip
import json
import math
from pathlib import Path

import pytest

from fusionviz.model.errors import TraceError
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Round, Trace
from fusionviz.model.tracefile import build as trace_build
from fusionviz.model.tracefile import io as trace_io
from fusionviz.model.tracefile import migrations
from fusionviz.model.tracefile.io import LoadReport, load_trace, save_trace, to_dict
from fusionviz.model.tracefile.parts import OPTIONAL_NODE_FIELDS

DATA = Path(__file__).parents[1] / "data"
TRACES = [*sorted(DATA.glob("*.json.gz")), "synthetic"]


def _file(tmp_path, item) -> Path:
    if item != "synthetic":
        return item
    path = tmp_path / "synthetic.json.gz"
    save_trace(synthetic_trace(400, seed=3, rounds=3), path)
    return path


def _whole(path: Path) -> dict:
    """The file as one JSON value (part lines in place), by the stdlib parser."""
    return trace_io._parse_all(gzip.decompress(path.read_bytes()))


def _careful(path: Path) -> Trace:
    data = _whole(path)
    data = migrations.upgrade(data, data["version"])
    return trace_build._build(Trace, data, "trace", True, LoadReport())


@pytest.mark.parametrize("item", TRACES, ids=lambda p: getattr(p, "name", p))
@pytest.mark.parametrize("parser", ["orjson", "stdlib"])
def test_fast_load_equals_the_careful_builder(tmp_path, monkeypatch, item, parser):
    path = _file(tmp_path, item)
    if parser == "stdlib":
        monkeypatch.setattr(trace_io, "_orjson", None)
    fast = load_trace(path)
    assert fast == _careful(path)
    graph = fast.graphs[0]
    assert type(graph.rounds) is tuple and all(type(r) is Round for r in graph.rounds)
    assert all(type(g) is tuple for r in graph.rounds for g in r.groups_before)
    if item == "synthetic":  # written by this save_trace: every field, floats as floats
        whole = _whole(path)  # (but a node's optional parts where it has none: None)
        for graph in whole["graphs"]:
            for node in graph["nodes"]:
                for key in OPTIONAL_NODE_FIELDS:
                    node.setdefault(key, None)
        assert to_dict(fast) == whole


def test_values_orjson_refuses_load_through_the_stdlib(tmp_path):
    graph = synthetic_trace(20, seed=1, rounds=1).graphs[0]
    rnd = graph.rounds[0]
    big = 2**70  # beyond orjson's 64-bit integers
    rnd = Round(index=rnd.index, wall_s=math.nan, groups_before=rnd.groups_before,
                candidates=rnd.candidates, fusions=rnd.fusions, verdicts_dropped=big)
    trace = Trace(env={"x": math.inf}, graphs=(dataclasses.replace(graph, rounds=(rnd,)),))
    save_trace(trace, tmp_path / "t.json")
    loaded = load_trace(tmp_path / "t.json", strict=True)
    assert math.isnan(loaded.graphs[0].rounds[0].wall_s)
    assert loaded.graphs[0].rounds[0].verdicts_dropped == big
    assert loaded.env == {"x": math.inf}
    assert loaded.graphs[0].nodes == graph.nodes


def test_ints_in_float_fields_and_left_out_fields_take_the_careful_meaning(tmp_path):
    data = to_dict(synthetic_trace(30, seed=2, rounds=2))
    data["graphs"][0]["rounds"][0]["wall_s"] = 2  # an int where a float belongs
    del data["graphs"][0]["nodes"][3]["debug"]  # a field left to its default
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    loaded = load_trace(path, strict=True)
    wall = loaded.graphs[0].rounds[0].wall_s
    assert wall == 2.0 and type(wall) is float
    assert loaded.graphs[0].nodes[3].debug == ""
    assert loaded == _careful_plain(path)


def _careful_plain(path: Path) -> Trace:
    return trace_build._build(Trace, json.loads(path.read_text()), "trace", True, LoadReport())


def test_a_bad_value_deep_inside_is_named_after_the_fast_builder_gave_up(tmp_path):
    data = to_dict(synthetic_trace(60, seed=1, rounds=2))
    data["graphs"][0]["rounds"][1]["candidates"][2]["rank"] = "first"
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    with pytest.raises(TraceError, match=r"graphs\[0\]\.rounds\[1\]\.candidates\[2\]\.rank: "
                                         r"expected int, got str"):
        load_trace(path)


def test_a_non_string_in_a_group_is_refused(tmp_path):
    data = to_dict(synthetic_trace(30, seed=1, rounds=1))
    data["graphs"][0]["rounds"][0]["groups_before"][4] = ["op4", 7]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data))
    with pytest.raises(TraceError, match=r"groups_before\[4\]\[1\]: expected str, got int"):
        load_trace(path)


def test_trace_from_dict_leaves_its_input_alone():
    trace = synthetic_trace(50, seed=1, rounds=2)
    data = to_dict(trace)
    before = json.dumps(data)
    assert trace_io.trace_from_dict(data) == trace
    assert json.dumps(data) == before
