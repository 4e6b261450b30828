"""queries: lookups, why-not-fused explanations, ledger rows, exports, summaries."""

import csv
import io
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.model.queries import graph_summary, kernel_of_node, node_index, why_not_fused
from fusionviz.model.report.ledger_table import (
    filter_rows,
    ledger_rows,
    rows_to_csv,
    rows_to_markdown,
)
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import (
    Access,
    BenchKernel,
    Benchmark,
    Candidate,
    Edge,
    Fusion,
    Graph,
    Kernel,
    Node,
    Reason,
    Round,
    Timing,
    Verdict,
)
from fusionviz.model.tracefile.io import load_trace

REAL_TRACES = sorted((Path(__file__).parents[1] / "data").glob("*.json.gz"))


def _node(name, reads=(), writes=(), category="pointwise", **kw):
    return Node(
        name=name,
        type="SchedulerNode",
        category=category,
        reads=tuple(Access(b, 100) for b in reads),
        writes=tuple(Access(b, 100) for b in writes),
        bytes=100 * (len(reads) + len(writes)),
        **kw,
    )


NODES = (
    _node("op0", ["arg0"], ["buf0"]),
    _node("op1", ["buf0"], ["buf1"]),
    _node("op2", ["buf1"], ["buf2"], category="extern", extern_kernel="extern_kernels.mm"),
    _node("op3", ["arg1"], ["buf3"]),
    _node("op4", ["buf1"], ["buf4"]),
    _node("op5", ["buf4"], ["buf5"]),
)
SINGLES = tuple((n.name,) for n in NODES)
AFTER_R1 = (("op0", "op1"), ("op2",), ("op3",), ("op4",), ("op5",))
SLOWER = Benchmark(fuse=False, ms_a=0.4, ms_b=0.4, ms_fused=1.0, speedup=0.8)
SPILLED = Benchmark(
    fuse=False,
    spill="fused",
    kernels=(BenchKernel("a", 0.1, n_spills=0), BenchKernel("fused", None, n_spills=12)),
)
ROUND1 = Round(
    index=1,
    wall_s=0.01,
    groups_before=SINGLES,
    groups_after=AFTER_R1,
    candidates=(
        Candidate(
            0,
            ("op0",),
            ("op1",),
            {"memory": 200, "proximity": -1},
            "fused",
            bytes_saved=200,
        ),
        Candidate(1, ("op1",), ("op4",), {"memory": 100, "proximity": -3}, "stale"),
        Candidate(2, ("op3",), ("op5",), {"memory": 0}, "spill", benchmark=SPILLED),
    ),
    verdicts=(
        Verdict(("op0",), ("op1",), True),
        Verdict(("op4",), ("op5",), False, (Reason("numel/rnumel mismatch", "WhyNoFuse"),)),
    ),
    fusions=(Fusion(("op0",), ("op1",), 200, 200, 200),),
)
ROUND2 = Round(
    index=2,
    wall_s=0.02,
    groups_before=AFTER_R1,
    groups_after=AFTER_R1,
    candidates=(
        Candidate(
            0,
            ("op0", "op1"),
            ("op4",),
            {"memory": 100},
            "benchmark_slower",
            benchmark=SLOWER,
        ),
    ),
)
KERNELS = (
    Kernel("triton_poi_fused_0", "poi", "triton", nodes=("op0", "op1"), ms=0.5),
    Kernel("extern_kernels.mm", "extern", "extern", nodes=("op2",), ms=1.5),
    Kernel("triton_poi_1", "poi", "triton", nodes=("op3",)),
    Kernel("triton_poi_2", "poi", "triton", nodes=("op4",), ms=0.25),
    Kernel("triton_poi_3", "poi", "triton", nodes=("op5",), ms=0.25),
)
GRAPH = Graph(
    index=0,
    nodes=NODES,
    edges=(
        Edge("op0", "op1", "buf0"),
        Edge("op1", "op2", "buf1"),
        Edge("op1", "op4", "buf1"),
        Edge("op4", "op5", "buf4"),
    ),
    rounds=(ROUND1, ROUND2),
    final_groups=AFTER_R1,
    kernels=KERNELS,
    compile_s=1.5,
    timing=Timing(compiled_ms=2.5, eager_ms=5.0),
)


def test_lookups():
    assert node_index(GRAPH)["op2"].category == "extern"
    kernels = kernel_of_node(GRAPH)
    assert kernels["op0"] is kernels["op1"] is KERNELS[0]
    assert kernels["op5"].name == "triton_poi_3"


def test_fused_pair():
    why = why_not_fused(GRAPH, "op1", "op0")
    assert why.same_kernel and why.summary == "fused in round 1"
    assert why.fused and why.fused_round == 1
    assert [(e.phase, e.outcome) for e in why.entries] == [
        ("scan", "accepted"),
        ("candidate", "fused"),
    ]


def test_latest_decision_explains_a_pair_tried_twice():
    why = why_not_fused(GRAPH, "op4", "op0")  # via op0's group (op0, op1) in round 2
    assert not why.same_kernel and not why.fused and why.fused_round is None
    assert [(e.round, e.outcome) for e in why.entries] == [(2, "benchmark_slower")]
    why = why_not_fused(GRAPH, "op1", "op4")
    assert [(e.round, e.outcome, e.rank) for e in why.entries] == [
        (1, "stale", 1),
        (2, "benchmark_slower", 0),
    ]
    assert why.entries[1].benchmark is SLOWER
    assert "round 2" in why.summary and "slower (0.80x)" in why.summary
    assert why.summary.endswith("(and 1 other recorded decision)")


def test_same_verdict_in_several_rounds_is_reported_once():
    verdict = ROUND1.verdicts[1]  # op4 x op5: numel/rnumel mismatch
    rounds = tuple(Round(index=i, verdicts=(verdict,)) for i in (1, 2, 3, 5))
    why = why_not_fused(replace(GRAPH, rounds=rounds), "op4", "op5")
    assert len(why.entries) == 4
    assert why.summary == (
        "rejected while collecting candidates in rounds 1, 2, 3, 5: numel/rnumel mismatch"
    )
    why = why_not_fused(replace(GRAPH, rounds=rounds[:3]), "op4", "op5")
    assert "in rounds 1-3:" in why.summary


def test_scan_rejection_and_spill():
    why = why_not_fused(GRAPH, "op5", "op4")
    assert why.summary == (
        "rejected while collecting candidates in round 1: numel/rnumel mismatch"
    )
    assert why.entries[0].reasons[0].check == "WhyNoFuse"
    assert (
        "the fused kernel spilled registers" in why_not_fused(GRAPH, "op3", "op5").summary
    )


def test_never_candidates():
    extern = why_not_fused(GRAPH, "op1", "op2").summary
    assert extern == ("never a candidate: op2 is an extern kernel call (extern_kernels.mm)")
    apart = why_not_fused(GRAPH, "op0", "op5").summary
    assert apart.startswith("never a candidate: they share no buffer")
    assert "op0 reads arg0, writes buf0" in apart and "op5 reads buf4, writes buf5" in apart
    shared = why_not_fused(GRAPH, "op2", "op4")  # siblings reading buf1, op2 is extern
    assert "extern" in shared.summary
    siblings = why_not_fused(replace(GRAPH, rounds=()), "op4", "op1")
    assert "share buf1" in siblings.summary


def test_pairs_tried_as_grown_groups_and_skipped_pairs():
    grown = Candidate(
        0,
        ("op3",),
        ("op5",),
        outcome="rejected",
        reasons=(Reason("too large"),),
        tried=(("op3",), ("op4", "op5")),
    )
    skipped = Candidate(1, ("op0",), ("op3",), outcome="skipped")
    graph = replace(GRAPH, rounds=(Round(index=1, candidates=(grown, skipped)),))
    why = why_not_fused(graph, "op4", "op3")  # only the tried groups hold op4
    assert [e.tried for e in why.entries] == [(("op3",), ("op4", "op5"))]
    assert why.summary == "rejected in round 1: too large"
    assert "never tried" in why_not_fused(graph, "op0", "op3").summary
    rows = ledger_rows(graph.rounds[0])
    assert rows[0]["tried"] == "op3 × op4+op5" and rows[1]["tried"] is None
    assert rows[0]["reasons"] == "too large"
    assert rows[1]["reasons"].startswith("(never tried: Inductor's loop passed the pair over")


@pytest.mark.parametrize(
    ("outcome", "reasons", "expected"),
    [
        ("stale", (), "not fused in round 1: one side had already fused with another"),
        (
            "stale",
            (Reason("both sides are already one fused node"),),
            "not fused in round 1: both sides are already one fused node",
        ),
        ("cycle", (), "not fused in round 1: fusing would create a cycle"),
        ("pending", (), "not fused in round 1: a deferred decision never resolved"),
        ("rejected", (), "rejected in round 1: no reason recorded"),
    ],
)
def test_outcome_texts(outcome, reasons, expected):
    pair = Candidate(0, ("op3",), ("op4",), outcome=outcome, reasons=reasons)
    graph = replace(GRAPH, rounds=(Round(index=1, candidates=(pair,)),))
    assert why_not_fused(graph, "op3", "op4").summary.startswith(expected)


def test_unknown_and_same_node():
    assert why_not_fused(GRAPH, "op0", "ghost").summary.startswith("unknown node ghost")
    assert why_not_fused(GRAPH, "op3", "op3").summary == "the same node"


def test_grouped_before_fusion_combined_after_and_one_kernel():
    foreach = replace(
        GRAPH,
        rounds=(
            replace(ROUND1, groups_before=(("op3", "op5"),) + SINGLES[:3] + (("op4",),)),
        ),
    )
    assert why_not_fused(foreach, "op3", "op5").summary.startswith("already one group")
    assert why_not_fused(foreach, "op3", "op5").fused_round is None
    combo = replace(GRAPH, final_groups=AFTER_R1[:2] + (("op3", "op5"), ("op4",)))
    assert why_not_fused(combo, "op5", "op3").summary.startswith("combined after")
    cpu = replace(
        GRAPH, kernels=(Kernel("cpp_fused_0", "cpp", "cpp", nodes=("op3", "op5")),)
    )
    why = why_not_fused(cpu, "op3", "op5")
    assert why.same_kernel and "one kernel (cpp_fused_0)" in why.summary


def test_ledger_rows():
    rows = ledger_rows(ROUND1)
    assert [(r["phase"], r["rank"], r["outcome"]) for r in rows] == [
        ("candidate", 0, "fused"),
        ("candidate", 1, "stale"),
        ("candidate", 2, "spill"),
        ("scan", None, "rejected"),  # only the rejecting scan verdict
    ]
    assert all(list(r) == list(rows[0]) for r in rows)  # one set of columns
    assert rows[0]["a"] == ("op0",) and rows[0]["bytes_saved"] == 200
    assert rows[0]["score_memory"] == 200 and rows[2]["score_proximity"] is None
    assert rows[2]["spill"] == "fused" and rows[2]["n_spills"] == 12
    assert rows[3]["reasons"] == "numel/rnumel mismatch"
    slower = ledger_rows(ROUND2)[0]
    assert (slower["ms_a"], slower["ms_fused"], slower["speedup"]) == (0.4, 1.0, 0.8)


def test_filter_rows():
    rows = ledger_rows(ROUND1)
    assert [r["outcome"] for r in filter_rows(rows, outcome="fused")] == ["fused"]
    assert len(filter_rows(rows, outcome="rejected")) == 3  # everything not fused
    assert [r["outcome"] for r in filter_rows(rows, outcome="spill")] == ["spill"]
    assert [r["phase"] for r in filter_rows(rows, reason="NUMEL")] == ["scan"]
    assert filter_rows(rows, outcome="fused", reason="numel") == []
    assert filter_rows(rows) == rows


def test_csv_round_trip():
    rows = ledger_rows(ROUND1)
    parsed = list(csv.DictReader(io.StringIO(rows_to_csv(rows))))
    assert len(parsed) == 4
    assert parsed[0]["a"] == "op0" and parsed[0]["outcome"] == "fused"
    assert parsed[0]["bytes_saved"] == "200" and parsed[3]["rank"] == ""
    assert list(parsed[0]) == list(rows[0])


def test_markdown():
    rows = ledger_rows(ROUND2) + [{"phase": "x", "reasons": "a|b"}]
    lines = rows_to_markdown(rows).splitlines()
    assert lines[0].startswith("| phase | rank | a | b | tried | outcome | reasons |")
    assert set(lines[1]) <= set("|-")
    assert "| op0+op1 | op4 |  | benchmark_slower |" in lines[2]
    assert "a\\|b" in lines[3]
    assert rows_to_markdown([]) == ""


def test_graph_summary():
    s = graph_summary(GRAPH)
    assert s == {
        "nodes": 6,
        "kernels": 5,
        "rounds": 2,
        "fusions": 1,
        "compiled_ms": 2.5,
        "eager_ms": 5.0,
        "time_kind": "wall",  # no profiled calls: not device time
        "launches": 0,  # the kernels here say nothing of their launches
        "speedup_vs_eager": 2.0,
        "node_reduction": pytest.approx(6 / 5),
        "benchmark_decisions": 2,
        "spill_rejections": 1,
        "compile_s": 1.5,
    }
    empty = graph_summary(Graph(index=1))
    assert empty["speedup_vs_eager"] is None and empty["node_reduction"] is None


def test_every_synthetic_fusion_is_explained_as_fused():
    graph = synthetic_trace(400, seed=9).graphs[0]
    for rnd in graph.rounds:
        for f in rnd.fusions:
            why = why_not_fused(graph, f.a[-1], f.b[0])
            assert why.same_kernel and why.summary == f"fused in round {rnd.index}"
            assert why.fused and why.fused_round == rnd.index


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_real_traces(path):
    for graph in load_trace(path).graphs:
        assert graph_summary(graph)["nodes"] == len(graph.nodes)
        for rnd in graph.rounds:
            rows = ledger_rows(rnd)
            assert len(rows) == len(rnd.candidates) + sum(not v.ok for v in rnd.verdicts)
            for f in rnd.fusions[:3]:
                assert why_not_fused(graph, f.a[0], f.b[0]).summary.startswith("fused in")


def test_why_not_fused_reuses_the_fusion_steps_of_the_graph(monkeypatch):
    from fusionviz.model import fusion_steps as module

    calls = []
    compute = module._compute_steps
    monkeypatch.setattr(module, "_compute_steps", lambda g: calls.append(g) or compute(g))
    graph = synthetic_trace(300, seed=5, rounds=3).graphs[0]
    module.fusion_steps(graph)  # what the stepper computes when the graph is shown
    names = [n.name for n in graph.nodes]
    for a, b in zip(names[:20], names[1:21], strict=True):
        why_not_fused(graph, a, b)
    assert len(calls) == 1


def test_ledger_rows_are_independent_dicts_with_one_key_order():
    rows = [r for rnd in synthetic_trace(300, seed=5, rounds=3).graphs[0].rounds
            for r in ledger_rows(rnd)]
    assert {r["phase"] for r in rows} == {"candidate", "scan"}
    assert len({tuple(r) for r in rows}) <= 3  # one column order per round
    rows[0]["ms_a"] = rows[-1]["ms_a"] = 123.0  # a consumer editing a row edits that row only
    assert sum(r["ms_a"] == 123.0 for r in rows) == 2
