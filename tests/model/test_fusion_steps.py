"""fusion_steps: one step per round, plus before and (when it differs) final."""

import gc
import weakref
from pathlib import Path

import pytest

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Fusion, Graph, Node, Round
from fusionviz.model.tracefile.io import load_trace

REAL_TRACES = sorted((Path(__file__).parents[1] / "data").glob("*.json.gz"))


def _nodes(*names):
    return tuple(Node(name=n, type="SchedulerNode", category="pointwise") for n in names)


def test_synthetic_steps_follow_rounds():
    graph = synthetic_trace(1000, seed=2, rounds=3).graphs[0]
    steps = fusion_steps(graph)
    assert [s.label for s in steps] == ["before fusion", "round 1", "round 2", "round 3"]
    assert steps[0].groups == tuple((n.name,) for n in graph.nodes)
    assert steps[0].changed == frozenset() and steps[0].round is None
    for step, rnd in zip(steps[1:], graph.rounds, strict=True):
        assert step.round is rnd
        assert step.groups == rnd.groups_after
        assert step.fused == tuple((f.a, f.b) for f in rnd.fusions)
        # exactly the members of the newly fused groups changed
        assert step.changed == {n for f in rnd.fusions for n in f.a + f.b}
        for name, i in step.group_of.items():
            assert name in step.groups[i]


def test_no_rounds_gives_one_step():
    graph = Graph(index=0, nodes=_nodes("op0", "op1"), final_groups=(("op0",), ("op1",)))
    steps = fusion_steps(graph)
    assert len(steps) == 1
    assert steps[0].groups == (("op0",), ("op1",))
    assert steps[0].group_of == {"op0": 0, "op1": 1}


def test_empty_graph():
    (step,) = fusion_steps(Graph(index=0))
    assert step.groups == () and step.label == "before fusion"


def test_final_step_only_when_post_fusion_pass_changes_groups():
    rnd = Round(
        index=1,
        reorder=True,
        groups_before=(("op0",), ("op1",), ("op2",)),
        groups_after=(("op0", "op1"), ("op2",)),
        fusions=(Fusion(("op0",), ("op1",)),),
    )
    same = Graph(
        index=0,
        nodes=_nodes("op0", "op1", "op2"),
        rounds=(rnd,),
        final_groups=(("op2",), ("op0", "op1")),
    )  # same groups, other order
    assert [s.label for s in fusion_steps(same)] == ["before fusion", "round 1 (reorder)"]
    combo = Graph(
        index=0, nodes=same.nodes, rounds=(rnd,), final_groups=(("op0", "op1", "op2"),)
    )
    steps = fusion_steps(combo)
    assert [s.label for s in steps] == ["before fusion", "round 1 (reorder)", "final"]
    assert steps[-1].changed == {"op0", "op1", "op2"}
    assert steps[-1].round is None and steps[-1].fused == ()


def test_foreach_grouping_before_fusion_is_step_zero():
    rnd = Round(
        index=1,
        groups_before=(("op0", "op1"), ("op2",)),
        groups_after=(("op0", "op1", "op2"),),
    )
    graph = Graph(index=0, nodes=_nodes("op0", "op1", "op2"), rounds=(rnd,))
    steps = fusion_steps(graph)
    assert steps[0].groups == (("op0", "op1"), ("op2",))
    assert steps[1].changed == {"op0", "op1", "op2"}


def test_unknown_names_are_kept():
    rnd = Round(
        index=1, groups_before=(("op0",), ("ghost",)), groups_after=(("op0", "ghost"),)
    )
    graph = Graph(index=0, nodes=_nodes("op0"), rounds=(rnd,))
    steps = fusion_steps(graph)
    assert steps[0].group_of["ghost"] == 1
    assert steps[1].group_of == {"op0": 0, "ghost": 0}


def test_round_without_recorded_result_is_derived_from_fusions():
    rnd = Round(index=1, fusions=(Fusion(("op1",), ("op2",)),))
    graph = Graph(index=0, nodes=_nodes("op0", "op1", "op2"), rounds=(rnd,))
    assert fusion_steps(graph)[1].groups == (("op0",), ("op1", "op2"))


def test_chained_fusions_of_one_round_are_derived_in_order():
    fusions = (Fusion(("op1",), ("op2",)), Fusion(("op1", "op2"), ("op0",)))
    graph = Graph(
        index=0,
        nodes=_nodes("op0", "op1", "op2", "op3"),
        rounds=(Round(index=1, fusions=fusions),),
    )
    assert fusion_steps(graph)[1].groups == (("op1", "op2", "op0"), ("op3",))


def test_reordered_members_are_not_a_change():
    rnd = Round(index=1, groups_after=(("op1", "op0"), ("op2",)))
    again = Round(index=2, groups_after=(("op2",), ("op0", "op1")))
    graph = Graph(index=0, nodes=_nodes("op0", "op1", "op2"), rounds=(rnd, again))
    steps = fusion_steps(graph)
    assert steps[1].changed == {"op0", "op1"}
    assert steps[2].changed == frozenset()


def test_removed_node_counts_as_changed():
    rnd = Round(index=1, groups_after=(("op0",),))
    graph = Graph(index=0, nodes=_nodes("op0", "op1"), rounds=(rnd,))
    assert fusion_steps(graph)[1].changed == {"op1"}


def test_steps_of_a_big_graph_are_computed_when_used_and_end_at_its_final_groups():
    # (how fast: benchmarks/bench_model.py)
    graph = synthetic_trace(5000, rounds=10).graphs[0]
    steps = fusion_steps(graph)
    assert steps._done == []  # opening a graph computes no step
    assert len(steps) >= 11
    assert steps._done == []  # nor does counting them
    first = steps[0]
    assert len(steps._done) == 1 and len(first.groups) == 5000
    last = steps[len(steps) - 1]
    assert len(steps._done) == len(steps)  # step k derives from step k-1
    assert sorted(map(sorted, last.groups)) == sorted(map(sorted, graph.final_groups))


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_real_traces_groups_only_merge(path):
    for graph in load_trace(path).graphs:
        steps = fusion_steps(graph)
        assert len(steps) >= 1 + len(graph.rounds)
        assert {n.name for n in graph.nodes} <= set(steps[0].group_of)
        for prev, step in zip(steps, steps[1 : 1 + len(graph.rounds)], strict=False):
            for members in step.groups:
                # a group after a round is a union of whole groups from before it
                parts = {prev.group_of[n] for n in members}
                assert sorted(n for i in parts for n in prev.groups[i]) == sorted(members)


def test_steps_are_computed_once_per_graph_object_and_dropped_with_it(monkeypatch):
    from fusionviz.model import fusion_steps as module

    calls = []
    compute = module._compute_steps
    monkeypatch.setattr(module, "_compute_steps", lambda g: calls.append(g) or compute(g))
    graph = synthetic_trace(200, seed=4, rounds=3).graphs[0]
    steps = fusion_steps(graph)
    assert fusion_steps(graph) is steps and len(calls) == 1
    twin = synthetic_trace(200, seed=4, rounds=3).graphs[0]  # equal, but another object
    assert fusion_steps(twin) == steps and len(calls) == 2
    kept, gone = len(module._MEMO), weakref.ref(graph)
    del graph, steps, calls[:]
    gc.collect()
    assert gone() is None  # the memo does not keep a closed trace alive
    assert len(module._MEMO) < kept  # nor its entry
