"""comms.collective_times on a committed 2-rank GPU trace (NCCL, H100): each collective
paired with its wait, its device time, and what a trace without kernels' start and
end (recorded before them) cannot say."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.report.formatting import collective_time_text
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace

RANKS = Path(__file__).parents[1] / "data" / "ranks" / "gpu_ranks_allreduce"


def _graph():
    (graph,) = load_trace(RANKS / "rank0.json.gz").graphs
    return graph


def test_the_collective_of_a_gpu_trace_is_its_nccl_kernels_device_time():
    graph = _graph()
    (t,) = collective_times(graph)
    own = next(k for k in graph.kernels if "c10d_functional.all_reduce_" in k.name)
    assert (t.node, t.waits, t.kernel, t.collective.kind) == ("op1", ("op2",), own.name,
                                                            "all_reduce")
    assert t.device_ms == own.ms == t.time_ms and t.on_device and t.device_ms > 0
    # recorded before kernels' start and end: the CPU's side is unknown, said so
    assert (t.span_ms, t.issue_ms, t.wait_ms, t.kernels_between) == (None,) * 4
    text = collective_time_text(t)
    assert text.startswith(f"{own.ms:.3f} ms on the device")
    assert "on the CPU from issue to the end of its wait: not recorded" in text
    assert "collectives (and their waits):" in summary_text(load_trace(RANKS / "rank0.json.gz"))


def test_without_its_edge_a_collective_pairs_with_the_next_wait_reading_its_buffer():
    graph = _graph()
    assert [t.waits for t in collective_times(replace(graph, edges=()))] == [("op2",)]
    other = replace(graph, edges=(), nodes=tuple(
        replace(n, writes=()) if n.name == "op1" else n for n in graph.nodes))
    (t,) = collective_times(other)
    assert t.waits == () and "no wait for it was found" in collective_time_text(t)


def test_with_start_and_end_the_span_and_the_kernels_in_between_are_given():
    graph = _graph()
    # when each kernel ran, in ms from the call's start: the second Triton kernel is
    # launched between the all-reduce and its wait (as a reordering pass would put it)
    when = {"triton_poi": (0.0, 0.01), "functional.all_reduce_": (0.02, 0.05),
            "triton_per": (0.06, 0.08), "wait_tensor": (0.09, 0.10)}
    kernels = tuple(replace(k, start_ms=s, end_ms=e) for k in graph.kernels
                    for key, (s, e) in when.items() if key in k.name)
    assert len(kernels) == len(graph.kernels)
    (t,) = collective_times(replace(graph, kernels=kernels))
    assert abs(t.span_ms - 0.08) < 1e-9 and abs(t.issue_ms - 0.03) < 1e-9
    assert abs(t.wait_ms - 0.01) < 1e-9 and t.time_ms == t.device_ms  # still the device's
    assert t.kernels_between == ("triton_per_fused_add_cos_sin_sum_1",)
    assert "on the CPU 0.080 ms from issue to the end of its wait (issue 0.030 ms, " \
           "wait 0.010 ms, 1 kernel in between)" in collective_time_text(t)


def test_a_graph_without_collectives_has_none():
    trace = load_trace(Path(__file__).parents[1] / "data" / "cpu_mlp_block.json.gz")
    assert all(collective_times(g) == [] for g in trace.graphs)
    assert "collectives" not in summary_text(trace)
