"""Lazy loading: the bulk of a trace (node details, round ledgers) built on first read."""

from __future__ import annotations

import dataclasses
import gzip
import json
from pathlib import Path

import pytest

from fusionviz.model import lazy
from fusionviz.model.errors import TraceError
from fusionviz.model.fusion_steps import Steps, fusion_steps
from fusionviz.model.queries import graph_headline, graph_summary
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Node, Round
from fusionviz.model.tracefile.io import load_trace, save_trace, to_dict

DATA = Path(__file__).resolve().parents[1] / "data"
REAL_TRACES = sorted(DATA.glob("*.json.gz"))


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_a_lazy_load_equals_the_eager_one_once_read(path):
    eager, lazy_trace = load_trace(path), load_trace(path, lazy=True)
    pending = lazy.pending_fields(lazy_trace)
    assert pending > 0  # every recorded trace has node details and ledgers
    assert lazy.pending_fields(eager) == 0
    steps = list(lazy.complete(lazy_trace))
    assert steps[-1][0] == steps[-1][1] == len(steps)
    assert lazy.pending_fields(lazy_trace) == 0
    assert lazy_trace == eager and to_dict(lazy_trace) == to_dict(eager)


def test_a_field_is_built_once_on_first_read_and_the_objects_stay_frozen(tmp_path):
    path = tmp_path / "t.json.gz"
    save_trace(synthetic_trace(60, seed=2, rounds=2), path)
    trace = load_trace(path, lazy=True)
    node = trace.graphs[0].nodes[5]
    assert lazy.is_pending(node, "reads") and lazy.is_pending(node, "origins")
    reads = node.reads
    assert isinstance(reads, tuple) and reads and reads[0].buffer
    assert node.reads is reads and not lazy.is_pending(node, "reads")
    assert lazy.is_pending(node, "origins")  # only what was read is built
    with pytest.raises(dataclasses.FrozenInstanceError):
        node.reads = ()
    rnd = trace.graphs[0].rounds[0]
    copy = dataclasses.replace(rnd, index=99)  # reads every field, builds the ledger
    assert copy.candidates == rnd.candidates and not lazy.is_pending(rnd, "candidates")
    assert hash(node) == hash(load_trace(path).graphs[0].nodes[5])


def test_the_model_classes_declare_their_lazy_fields():
    assert Node.__lazy_fields__ == {"reads", "writes", "origins"}
    assert Round.__lazy_fields__ == {"candidates", "verdicts"}  # every step reads the groups
    # built directly (capture, tests), the classes behave as before
    node = Node(name="op0", type="SchedulerNode", category="pointwise")
    assert node.reads == () and Node(**{**node.__dict__}) == node


def _write(path: Path, data: dict) -> Path:
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    return path


def test_a_malformed_lazy_part_is_reported_when_read_naming_it(tmp_path):
    data = to_dict(synthetic_trace(40, seed=5, rounds=2))
    node = data["graphs"][0]["nodes"][7]
    node["reads"][0]["bytes"] = "many"
    path = _write(tmp_path / "bad.json.gz", data)
    with pytest.raises(TraceError, match=r"nodes\[7\]\.reads\[0\]\.bytes: expected int"):
        load_trace(path)  # an eager load refuses the file
    trace = load_trace(path, lazy=True)  # a lazy one opens it...
    assert trace.graphs[0].nodes[6].reads  # ...reads the good parts...
    with pytest.raises(TraceError, match=rf"Node '{node['name']}'\.reads\[0\]\.bytes: expected int"):
        trace.graphs[0].nodes[7].reads  # noqa: B018 (the read is the test)
    with pytest.raises(TraceError, match="expected int"):
        list(lazy.complete(trace))  # ...and finishing it meets the bad part


def test_unknown_fields_in_a_lazy_part_are_ignored_as_in_a_lenient_load(tmp_path):
    data = to_dict(synthetic_trace(40, seed=5, rounds=2))
    data["graphs"][0]["rounds"][0]["candidates"][0]["from_the_future"] = 1
    path = _write(tmp_path / "newer.json.gz", data)
    eager, lazy_trace = load_trace(path), load_trace(path, lazy=True)
    assert lazy_trace.graphs[0].rounds[0].candidates == eager.graphs[0].rounds[0].candidates


def test_a_lazy_list_of_the_wrong_type_fails_the_load_like_an_eager_one(tmp_path):
    data = to_dict(synthetic_trace(40, seed=5, rounds=2))
    data["graphs"][0]["nodes"][3]["writes"] = "buf3"
    path = _write(tmp_path / "bad.json.gz", data)
    for lazy_load in (False, True):
        with pytest.raises(TraceError, match=r"nodes\[3\]\.writes: expected a list"):
            load_trace(path, lazy=lazy_load)


def test_the_headline_of_a_graph_leaves_its_ledgers_unbuilt(tmp_path):
    path = tmp_path / "t.json.gz"
    save_trace(synthetic_trace(200, seed=1, rounds=3), path)
    graph = load_trace(path, lazy=True).graphs[0]
    headline = graph_headline(graph)
    assert all(lazy.is_pending(r, "candidates") for r in graph.rounds)
    summary = graph_summary(graph)
    assert {k: summary[k] for k in headline} == headline
    assert summary["benchmark_decisions"] > 0


def test_steps_are_computed_when_used():
    graph = synthetic_trace(300, seed=4, rounds=3).graphs[0]
    steps = fusion_steps(graph)
    assert isinstance(steps, Steps)
    assert steps[0].label == "before fusion" and len(steps._done) == 1
    assert len(steps) == 1 + len(graph.rounds)  # the synthetic final is the last round
    assert len(steps._done) == 1  # the count needs only the recorded last round
    last = steps[-1]
    assert len(steps._done) == len(steps) and last is steps[len(steps) - 1]
    assert steps[1:3] == (steps[1], steps[2]) and steps == tuple(steps)
    with pytest.raises(IndexError):
        steps[len(steps)]


def test_a_value_per_object_is_kept_while_the_object_lives_and_never_for_another():
    import gc
    import weakref

    memo: lazy.PerObject[str] = lazy.PerObject()
    graph = synthetic_trace(60, seed=5, rounds=2).graphs[0]
    assert memo.get(graph) is None and memo.put(graph, "steps") == "steps"
    assert memo.get(graph) == "steps" and len(memo) == 1
    twin = synthetic_trace(60, seed=5, rounds=2).graphs[0]  # equal, another object
    assert twin == graph and memo.get(twin) is None
    gone = weakref.ref(graph)
    del graph
    gc.collect()
    assert gone() is None and len(memo) == 0  # not kept alive, its entry dropped
    # a new object may get the freed one's id (CPython reuses it): never its value
    again = [synthetic_trace(60, seed=5, rounds=2).graphs[0] for _ in range(20)]
    assert all(memo.get(g) is None for g in again)
