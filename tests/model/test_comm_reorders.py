"""Post-fusion reordering passes (#13): what a pass moved, how much work sits between
a collective and its wait, and the passes as steps after the fusion rounds. Real data:
tests/data/ranks/cpu_comm_overlap (2 ranks, gloo on the CPU, comm_overlap.py with
Inductor's sink_waits_iterative and raise_comms passes)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fusionviz.model.comms.reorders import collective_pairs, moves, overlaps
from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.report.chart_data import round_series
from fusionviz.model.report.reorder_table import reorder_rows, reorder_summary
from fusionviz.model.trace import Reorder
from fusionviz.model.tracefile.io import load_trace

OVERLAP = Path(__file__).resolve().parents[1] / "data" / "ranks" / "cpu_comm_overlap"


def _graph():
    (graph,) = load_trace(OVERLAP / "rank0.json.gz").graphs
    return graph


def test_moves_name_only_what_the_pass_moved():
    order = (("a",), ("b",), ("c",), ("d",), ("e",))
    sink = Reorder(1, "sink", order, (("a",), ("c",), ("d",), ("b",), ("e",)))
    assert [(m.group, m.before, m.after) for m in moves(sink)] == [(("b",), 1, 3)]
    swap = Reorder(1, "swap", order, (("e",), ("a",), ("b",), ("c",), ("d",)))
    assert [m.group for m in moves(swap)] == [("e",)]
    assert moves(Reorder(1, "same", order, order)) == []
    # a group listed with its members in another order is the same group
    assert moves(Reorder(1, "x", (("a", "b"), ("c",)), (("b", "a"), ("c",)))) == []


def test_of_two_swapped_neighbours_the_collective_is_the_one_that_moved():
    order = (("a",), ("k",), ("C",), ("z",))
    raised = Reorder(1, "raise_comms", order, (("a",), ("C",), ("k",), ("z",)))
    assert [(m.group, m.before, m.after) for m in moves(raised, {"C"})] == [(("C",), 2, 1)]
    sunk = Reorder(1, "sink_waits", order, (("a",), ("C",), ("z",), ("k",)))
    assert [m.group for m in moves(sunk, {"k"})] == [("k",)]
    # more kept nodes always win over keeping compute: C moves past two, not two past C
    far = Reorder(1, "x", order + (("y",),), (("C",), ("a",), ("k",), ("z",), ("y",)))
    assert [m.group for m in moves(far, {"C"})] == [("C",)]
    assert [m.group for m in moves(far, {"a", "k"})] == [("C",)]


def test_the_wait_sinks_past_the_independent_matmul():
    graph = _graph()
    (coll, wait), = collective_pairs(graph)
    kinds = {n.name: n.collective.kind for n in graph.nodes if n.collective}
    assert (kinds[coll], kinds[wait]) == ("all_reduce", "wait_tensor")
    sink, rise = graph.reorders
    assert (sink.name, rise.name) == ("sink_waits_iterative", "raise_comms")
    assert not sink.error and not rise.error
    assert [m.group for m in moves(sink)] == [(wait,)]
    (o,) = overlaps(graph, sink)
    assert (o.collective, o.wait, o.between_before) == (coll, wait, 0)
    assert o.between_after >= 1  # the matmul's kernels now run while the all-reduce flies
    assert moves(rise) == [] and rise.order_before == sink.order_after
    # what Inductor went on with is the last pass's order
    assert graph.final_groups == rise.order_after


def test_each_pass_is_a_step_after_the_fusion_rounds():
    graph = _graph()
    steps = fusion_steps(graph)
    assert [s.label for s in steps[-2:]] == ["pass 1: sink_waits_iterative",
                                             "pass 2: raise_comms"]
    sink_step = steps[-2]
    (_coll, wait), = collective_pairs(graph)
    assert sink_step.round is None and sink_step.reorder is graph.reorders[0]
    assert sink_step.changed == {wait}
    assert {frozenset(g) for g in sink_step.groups} == {frozenset(g) for g in steps[-3].groups}
    assert steps[-1].changed == frozenset()
    series = round_series(graph)
    assert series["label"][-2:] == ["p1", "p2"] and len(series["label"]) == len(steps)


def test_the_table_of_a_pass_lists_the_new_order():
    graph = _graph()
    sink = graph.reorders[0]
    rows = reorder_rows(graph, sink)
    assert [r["position"] for r in rows] == list(range(1, len(sink.order_after) + 1))
    moved = [r for r in rows if r["moved"]]
    assert len(moved) == 1 and moved[0]["kind"] == "wait_tensor"
    assert moved[0]["moved"] == f"↓{moved[0]['position'] - moved[0]['was']}"
    (coll_row,) = [r for r in rows if r["kind"] == "all_reduce"]
    assert coll_row["between issue and wait"].startswith("0 → ")
    assert coll_row["group_b"] == moved[0]["group_a"]  # the row highlights both
    text = reorder_summary(graph, sink)
    assert text.startswith(f"moved 1 of {len(rows)} fused nodes (")
    assert "all_reduce" in text and "before its wait" in text
    assert reorder_summary(graph, graph.reorders[1]).startswith("kept the order")


def test_ranks_that_reorder_otherwise_disagree():
    import dataclasses

    from fusionviz.model.experiment import ranks

    traces = [load_trace(OVERLAP / f"rank{r}.json.gz") for r in (0, 1)]
    assert ranks.agree(traces)
    graph = traces[1].graphs[0]
    sink = graph.reorders[0]
    unsunk = dataclasses.replace(sink, order_after=sink.order_before)
    other = dataclasses.replace(traces[1], graphs=(
        dataclasses.replace(graph, reorders=(unsunk, graph.reorders[1])),))
    (found,) = ranks.differences(traces[0], other)
    assert found.startswith("graph 0: pass 1 (sink_waits_iterative) left another order")
    fewer = dataclasses.replace(traces[1], graphs=(dataclasses.replace(graph, reorders=()),))
    assert ranks.differences(traces[0], fewer) == [
        "graph 0: reordering passes sink_waits_iterative, raise_comms vs none"]


def test_the_ranks_report_gives_each_collective_on_every_rank():
    from fusionviz.model.comms.collective_times import collective_times
    from fusionviz.model.experiment import ranks

    traces = [load_trace(OVERLAP / f"rank{r}.json.gz") for r in (0, 1)]
    lines = ranks.collective_section(traces)
    assert "### collectives on each rank" in lines
    (row,) = [x for x in lines[-1].splitlines() if x.startswith("| 0 |")]
    cells = [c.strip() for c in row.strip("|").split("|")]
    for rank, trace in enumerate(traces):
        (t,) = collective_times(trace.graphs[0])
        assert cells[2 + rank] == f"{t.time_ms:.3f} ms (wait {t.wait_ms:.3f})"
    waits = [collective_times(t.graphs[0])[0].wait_ms for t in traces]
    low, high = sorted(waits)
    expected = (f"rank {waits.index(low)}" if ranks._apart(low, high)
                else "none (within noise)")
    assert cells[-1] == expected
    # and the rule itself on known waits: the rank that waited least, beyond noise
    (c,) = collective_times(traces[0].graphs[0])
    assert ranks._waited_for([replace(c, wait_ms=2.0), replace(c, wait_ms=0.5)]) == "rank 1"
    assert ranks._waited_for([replace(c, wait_ms=1.0), replace(c, wait_ms=1.1)]) \
        == "none (within noise)"
    assert ranks._waited_for([replace(c, wait_ms=1.0), None]) == "—"
    assert ranks.collective_section([load_trace(
        Path(__file__).resolve().parents[1] / "data" / "cpu_mlp_block.json.gz")] * 2) == []
