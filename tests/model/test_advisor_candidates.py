"""The advisor's candidates, ranked by estimate (#20, item 2): on a hand-made graph
where one refused pair would save most bytes it comes first, and on real GPU traces
the launch-bound graphs put CUDA graphs first, with commands that try each."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.advisor.candidates import LAUNCH_BOUND, rank
from fusionviz.model.trace import Access, Candidate, Graph, Node, Reason, Round, Trace
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"
MB = 1 << 20


def _node(name, category="pointwise", reads=(), writes=()):
    return Node(name=name, type="SchedulerNode", category=category,
                reads=tuple(Access(b, n) for b, n in reads),
                writes=tuple(Access(b, n) for b, n in writes))


def _refused(a, b, reason, outcome="rejected", rank_=0):
    return Candidate(rank=rank_, a=(a,), b=(b,), outcome=outcome,
                     reasons=(Reason(reason, "WhyNoFuse"),))


def _synthetic() -> tuple[Trace, Graph]:
    nodes = (
        _node("op0", reads=[("x", 4 * MB)], writes=[("buf0", 4 * MB)]),
        _node("op1", reads=[("buf0", 4 * MB)], writes=[("buf1", 4 * MB)]),
        _node("op2", reads=[("y", 1024)], writes=[("buf2", 1024)]),
        _node("op3", reads=[("buf2", 1024), ("buf1", 4 * MB)], writes=[("buf3", 1024)]),
        _node("op4", category="extern", reads=[("buf3", 1024)], writes=[("buf4", 8 * MB)]),
        _node("op5", reads=[("buf4", 8 * MB)], writes=[("buf5", 8 * MB)]),
    )
    rnd = Round(index=1, groups_before=tuple((n.name,) for n in nodes), candidates=(
        _refused("op2", "op3", "intermediate nodes between node1 & node2"),
        _refused("op0", "op1", "intermediate nodes between node1 & node2", rank_=1),
        _refused("op1", "op2", "no shared data", rank_=2),
        _refused("op4", "op5", "node1 is extern but not a triton kernel", rank_=3),
        _refused("op0", "op3", "register spilling of the fused kernel", "spill", 4)))
    graph = Graph(index=0, kind="inference", device="cuda:0", backend="triton", nodes=nodes,
                  rounds=(rnd,))
    return Trace(env={"peak_dram_gb_s": 1000.0}, config={"benchmark_fusion": True},
                 graphs=(graph,)), graph


def test_the_pair_that_saves_most_bytes_comes_first():
    trace, graph = _synthetic()
    ranked = rank(trace, graph)
    assert [c.what for c in ranked] == ["op0 with op1", "op1 with op3", "op2 with op3",
                                        "op0 with op3", "op1 with op2"]
    first = ranked[0]
    # buf0: written by op0 and read only by op1, so written and read once less
    assert first.bytes_saved == 8 * MB and first.ms == pytest.approx(8 * MB / 1e9)
    assert first.try_args == ("--force", "op0,op1")
    assert "not reachable by configuration" in first.apply
    # never asked about: op1 writes 4 MB that op3 alone reads
    assert "never a candidate" in ranked[1].why and ranked[1].bytes_saved == 8 * MB
    assert not first.measurable and ranked[1].measurable  # a cycle vs. worth forcing
    assert ranked[2].bytes_saved == 2048  # buf2, 1 KB, written and read once less
    assert "benchmark_fusion = False" in ranked[3].apply  # a spill veto
    assert ranked[-1].bytes_saved == 0  # Inductor found no shared data
    assert not any("op4" in c.what for c in ranked)  # an extern call never fuses


def test_a_launch_bound_gpu_graph_puts_cuda_graphs_first():
    trace = load_trace(DATA / "gpu_gpt2_train.json.gz")
    bound = 0
    for graph in trace.graphs:
        ranked = rank(trace, graph)
        t = graph.timing
        if t.compiled_wall_ms <= LAUNCH_BOUND * t.compiled_device_ms:  # not launch-bound
            assert not any("reduce-overhead" in c.what for c in ranked)
            continue
        bound += 1
        assert ranked[0].kind == "config" and "reduce-overhead" in ranked[0].what
        assert ranked[0].ms == pytest.approx(t.compiled_wall_ms - t.compiled_device_ms)
        tries = [c.try_args for c in ranked]
        assert len(tries) == len(set(tries))  # each rule tried once
        pairs = [c for c in ranked if c.kind == "pair" and c.ms is not None]
        assert pairs == sorted(pairs, key=lambda c: -c.ms)
    assert bound  # the forward: 11.1 ms wall per call, 2.2 ms on the device


def test_advise_prints_a_ranked_table_and_a_json_document(capsys):
    path = str(DATA / "gpu_spill_branches_bench.json.gz")
    assert main(["advise", path, "--top", "3"]) == 0
    out = capsys.readouterr().out
    assert "ranked by estimate, not measured" in out and "--force op0,op11" in out
    assert main(["advise", path, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "fusionviz.advise/1" and doc["measured"] is False
    first = doc["graphs"][0]["candidates"][0]
    assert first["try"][:5] == ["fusionviz", "replay", path, "--graph", "0"]
    assert "spill" in first["why"]
    assert main(["advise", path, "--graph", "9"]) == 3


def _timing(ms: float, lo: float, hi: float):
    from fusionviz.model.trace import Timing

    return Timing(compiled_ms=ms, compiled_spread=(lo, hi))


@pytest.mark.parametrize("baselines, candidate, verdict", [
    ([(10.0, 9.9, 10.1), (10.05, 9.95, 10.15)], (8.0, 7.9, 8.1), "win"),
    ([(10.0, 9.9, 10.1), (10.05, 9.95, 10.15)], (12.0, 11.9, 12.1), "slower"),
    ([(10.0, 5.0, 15.0), (10.0, 6.0, 14.0)], (8.0, 7.0, 9.0), "within noise"),  # wide spreads
    ([(10.0, 9.9, 10.1), (14.0, 13.9, 14.1)], (9.0, 8.9, 9.1), "within noise"),  # baselines move
    ([(10.0, 9.99, 10.01), (10.0, 9.99, 10.01)], (9.95, 9.94, 9.96), "within noise"),  # < 1%
])
def test_a_measured_candidate_wins_only_beyond_the_noise(baselines, candidate, verdict):
    from fusionviz.model.advisor.measure import judge

    got, base, gain, threshold = judge([_timing(*b) for b in baselines], _timing(*candidate))
    assert got == verdict, (got, base, gain, threshold)
    assert threshold >= 0.01


def test_buffers_stored_for_their_size_on_a_gpu_propose_the_threshold_above_them():
    """An H100 capture of a mixture-of-experts step (torch 2.11): its backward's four
    31-op bodies, over the GPU's threshold of 30, were stored to memory."""
    trace = load_trace(DATA / "gpu_moe_train.json.gz")
    (backward,) = trace.graphs  # its backward only (the file stays under 200 KB)
    assert backward.index == 1 and backward.large_bodies == (31, 31, 31, 31)
    assert trace.config["realize_opcount_threshold"] == 30
    (setting,) = [c for c in rank(trace, backward) if "realize_opcount" in c.what]
    assert setting.try_args == ("--config", "realize_opcount_threshold=32")
    assert setting.why.startswith("4 buffer(s) stored to memory when their bodies (up to "
                                  "31 ops) were over the op-count threshold (now 30)")
    no_bodies = replace(backward, large_bodies=())
    assert not [c for c in rank(trace, no_bodies) if "realize_opcount" in c.what]
