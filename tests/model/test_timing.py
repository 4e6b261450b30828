"""timing: kernel times, per-step series aligned with fusion_steps, benchmark points."""

from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.report.chart_data import benchmark_points, kernel_times, round_series
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import (
    BenchKernel,
    Benchmark,
    Candidate,
    Fusion,
    Graph,
    Kernel,
    Node,
    Round,
)
from fusionviz.model.tracefile.io import load_trace

REAL_TRACES = sorted((Path(__file__).parents[1] / "data").glob("*.json.gz"))


SINGLES = (("op0",), ("op1",), ("op2",))
SLOWER = Benchmark(fuse=False, ms_a=0.4, ms_b=0.4, ms_fused=1.0, speedup=0.8)
SPILLED = Benchmark(fuse=False, spill="fused", kernels=(BenchKernel("fused", n_spills=12),))
GRAPH = Graph(
    index=0,
    nodes=tuple(
        Node(name=f"op{i}", type="SchedulerNode", category="pointwise", bytes=400)
        for i in range(3)
    ),
    rounds=(
        Round(
            index=1,
            wall_s=0.01,
            groups_before=SINGLES,
            groups_after=(("op0", "op1"), ("op2",)),
            candidates=(
                Candidate(0, ("op0",), ("op1",), outcome="fused"),
                Candidate(1, ("op1",), ("op2",), outcome="spill", benchmark=SPILLED),
            ),
            fusions=(Fusion(("op0",), ("op1",), 400, 400, 600),),
        ),
        Round(
            index=2,
            reorder=True,
            wall_s=0.02,
            groups_before=(("op0", "op1"), ("op2",)),
            groups_after=(("op0", "op1"), ("op2",)),
            candidates=(
                Candidate(
                    0,
                    ("op0", "op1"),
                    ("op2",),
                    outcome="benchmark_slower",
                    benchmark=SLOWER,
                ),
            ),
        ),
    ),
    final_groups=(("op0", "op1"), ("op2",)),
    kernels=(
        Kernel("triton_poi_fused_0", "poi", "triton", nodes=("op0", "op1"), ms=0.5),
        Kernel("triton_poi_1", "poi", "triton", nodes=("op2",)),
        Kernel("extern_kernels.mm", "extern", "extern", nodes=("op3",), ms=1.5),
    ),
)


def test_kernel_times_skip_untimed_kernels_in_call_order():
    assert kernel_times(GRAPH) == [
        ("triton_poi_fused_0", 0.5, "poi"),
        ("extern_kernels.mm", 1.5, "extern"),
    ]
    assert kernel_times(Graph(index=0)) == []


def test_round_series():
    series = round_series(GRAPH)
    assert series["label"] == ["before", "r1", "r2"]
    assert series["nodes"] == [3, 2, 2]
    assert series["bytes"] == [1200, 1000, 1000]  # round 1 saved 400 + 400 - 600
    assert series["wall_s"] == [0.0, 0.01, 0.02]


def test_round_series_has_a_final_point_when_a_pass_merges_after_fusion():
    combo = replace(GRAPH, final_groups=(("op0", "op1", "op2"),))
    series = round_series(combo)
    assert series["label"] == ["before", "r1", "r2", "final"]
    assert series["nodes"][-1] == 1 and series["wall_s"][-1] == 0.0
    assert len(series["label"]) == len(fusion_steps(combo))


def test_round_series_of_synthetic_trace_follows_fusions():
    graph = synthetic_trace(800, rounds=4).graphs[0]
    series = round_series(graph)
    assert series["label"] == ["before", "r1", "r2", "r3", "r4"]
    assert series["nodes"] == [len(graph.nodes)] + [
        len(r.groups_after) for r in graph.rounds
    ]
    drops = [a - b for a, b in zip(series["bytes"], series["bytes"][1:], strict=False)]
    assert drops == [sum(f.bytes_saved for f in r.fusions) for r in graph.rounds]
    assert all(d > 0 for d in drops)
    assert series["bytes"][0] == sum(n.bytes for n in graph.nodes)


def test_benchmark_points():
    points = benchmark_points(GRAPH)
    assert [(p["round"], p["rank"], p["outcome"]) for p in points] == [
        (1, 1, "spill"),
        (2, 0, "benchmark_slower"),
    ]
    spill, slower = points
    assert spill["speedup"] is None and spill["spill"] == SPILLED.spill == "fused"
    assert slower["speedup"] == SLOWER.speedup and slower["fuse"] is False
    assert slower["a"] == ("op0", "op1") and slower["b"] == ("op2",)


def test_benchmark_points_of_synthetic_trace():
    graph = synthetic_trace(1000).graphs[0]
    points = benchmark_points(graph)
    expected = [c for r in graph.rounds for c in r.candidates if c.benchmark is not None]
    assert len(points) == len(expected) > 0
    assert {p["fuse"] for p in points} == {True, False}


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_real_traces(path):
    for graph in load_trace(path).graphs:
        series = round_series(graph)
        assert len(series["label"]) == len(fusion_steps(graph))
        assert series["nodes"][0] >= series["nodes"][-1]
        assert all(ms >= 0 for _, ms, _ in kernel_times(graph))
