"""comms.collective_times on committed 2-rank GPU traces (H100, torch 2.11; the two
ranks share the GPU, so the group is gloo's): each collective paired with its wait,
its time, and what a trace recorded before kernels' start and end, or an NCCL group,
gives instead."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.report.formatting import collective_time_text
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace

RANKS = Path(__file__).parents[1] / "data" / "ranks" / "gpu_ranks_allreduce"
OVERLAP = Path(__file__).parents[1] / "data" / "ranks" / "gpu_comm_overlap"


def _graph(folder=RANKS):
    (graph,) = load_trace(folder / "rank0.json.gz").graphs
    return graph


def _with_backend(graph, backend: str):
    return replace(graph, nodes=tuple(
        replace(n, collective=replace(n.collective, backend=backend)) if n.collective else n
        for n in graph.nodes))


def test_gloo_on_the_gpu_takes_the_span_not_the_device_time_of_its_copies():
    graph = _graph()
    (t,) = collective_times(graph)
    own = next(k for k in graph.kernels if "c10d_functional.all_reduce_" in k.name)
    wait = next(k for k in graph.kernels if "wait_tensor" in k.name)
    assert (t.node, t.waits, t.kernel, t.collective.kind) == ("op1", ("op2",), own.name,
                                                            "all_reduce")
    assert (t.collective.backend, t.collective.group_size) == ("gloo", 2)
    assert t.device_ms is None and not t.on_device and t.time_ms == t.span_ms
    # host sides: the launch ranges; the span from the issue's start to the wait's end
    assert abs(t.issue_ms - (own.end_ms - own.start_ms)) < 1e-9
    assert abs(t.span_ms - (wait.end_ms - own.start_ms)) < 1e-9
    assert t.span_ms >= t.wait_ms > 0 and t.kernels_between == ()
    assert "collectives (and their waits):" in summary_text(load_trace(RANKS / "rank0.json.gz"))


def test_the_independent_matmul_runs_between_the_all_reduce_and_its_wait():
    (t,) = collective_times(_graph(OVERLAP))
    assert t.kernels_between == ("extern_kernels.mm:op4",)
    assert "1 kernel in between" in collective_time_text(t)


def test_a_trace_recorded_before_offsets_and_backends_gives_the_device_time():
    graph = _with_backend(_graph(), "")
    graph = replace(graph, kernels=tuple(replace(k, start_ms=None, end_ms=None)
                                         for k in graph.kernels))
    (t,) = collective_times(graph)
    own = next(k for k in graph.kernels if "c10d_functional.all_reduce_" in k.name)
    assert t.device_ms == own.ms == t.time_ms and t.on_device and t.device_ms > 0
    # the CPU's side is unknown, and said so
    assert (t.span_ms, t.issue_ms, t.wait_ms, t.kernels_between) == (None,) * 4
    text = collective_time_text(t)
    assert text.startswith(f"{own.ms:.3f} ms on the device")
    assert "on the CPU from issue to the end of its wait: not recorded" in text


def test_without_its_edge_a_collective_pairs_with_the_next_wait_reading_its_buffer():
    graph = _graph()
    assert [t.waits for t in collective_times(replace(graph, edges=()))] == [("op2",)]
    other = replace(graph, edges=(), nodes=tuple(
        replace(n, writes=()) if n.name == "op1" else n for n in graph.nodes))
    (t,) = collective_times(other)
    assert t.waits == () and "no wait for it was found" in collective_time_text(t)


def test_an_nccl_collective_is_its_kernels_device_time_with_the_span_beside_it():
    graph = _with_backend(_graph(), "nccl")
    (t,) = collective_times(graph)
    own = next(k for k in graph.kernels if "c10d_functional.all_reduce_" in k.name)
    assert t.time_ms == t.device_ms == own.ms and t.on_device
    assert t.span_ms is not None and t.span_ms >= t.wait_ms
    text = collective_time_text(t)
    assert text.startswith(f"{own.ms:.3f} ms on the device")
    assert f"on the CPU {t.span_ms:.3f} ms from issue to the end of its wait" in text


def test_a_graph_without_collectives_has_none():
    trace = load_trace(Path(__file__).parents[1] / "data" / "cpu_mlp_block.json.gz")
    assert all(collective_times(g) == [] for g in trace.graphs)
    assert "collectives" not in summary_text(trace)
