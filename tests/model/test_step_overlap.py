"""A rank's profiled train step (``Trace.step``) and its communication overlap, on the
committed 2-rank gloo capture of ``ddp_buckets.py`` (#21 item 5)."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.model.comms.step_overlap import (
    intersect,
    length,
    overlap_line,
    step_overlap,
    union,
)
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace, save_trace

RANKS = Path(__file__).resolve().parents[1] / "data" / "ranks"


@pytest.fixture(scope="module")
def traces():
    return [load_trace(RANKS / "cpu_ddp_buckets" / f"rank{r}.json.gz") for r in (0, 1)]


def test_the_step_holds_every_piece_once_and_one_all_reduce_per_bucket(traces):
    for trace in traces:
        step = trace.step
        assert step.device == "cpu" and step.duration_ms > 0 and not step.note
        assert step.window == "from the 2nd call of graph 0 to the 3rd call of graph 0"
        pieces = [s for s in step.spans if s.graph is not None]
        assert sorted(s.graph for s in pieces) == list(range(len(trace.graphs)))
        assert all(s.kind == trace.graphs[s.graph].kind for s in pieces)
        reduces = sorted((s for s in step.spans if s.kind == "all_reduce"),
                         key=lambda s: s.bucket)
        assert [s.bucket for s in reduces] == list(range(len(reduces)))
        # every gradient all-reduced once: the buckets hold every parameter's bytes
        assert sum(s.bytes for s in reduces) == sum(
            g.split.bytes for g in trace.graphs if g.kind == "forward")
        backward = min(s.start_ms for s in pieces if s.kind == "backward")
        for s in reduces:
            assert s.backend == "gloo" and s.lane == "communication"
            assert backward < s.issue_ms <= s.start_ms + 0.5 < s.end_ms


def test_overlap_is_the_union_of_collectives_against_the_union_of_compute(traces):
    for trace in traces:
        o = step_overlap(trace.step)
        spans = trace.step.spans
        comm = union([(s.start_ms, s.end_ms) for s in spans if s.lane == "communication"])
        compute = union([(s.start_ms, s.end_ms) for s in spans if s.lane == "compute"])
        back = union([(s.start_ms, s.end_ms) for s in spans if s.kind == "backward"])
        assert o.clock == "cpu" and o.step_ms == trace.step.duration_ms
        assert o.communication_ms == pytest.approx(length(comm)) and o.communication_ms > 0
        assert o.hidden_ms == pytest.approx(length(intersect(comm, compute)))
        assert o.behind_backward_ms == pytest.approx(length(intersect(comm, back)))
        assert o.behind_backward_ms <= o.hidden_ms <= o.communication_ms
        assert o.exposed_ms == pytest.approx(o.communication_ms - o.hidden_ms)
        # a collective overlaps exactly the backward graphs whose spans meet its span
        for c in o.collectives:
            assert c.backward == tuple(sorted(
                s.graph for s in spans if s.kind == "backward"
                and s.start_ms < c.span.end_ms and c.span.start_ms < s.end_ms))
            assert c.backward_ms <= c.hidden_ms <= c.ms
        line = overlap_line(o)
        assert line.startswith(f"communication {o.communication_ms:.3g} ms, "
                               f"{o.behind_backward_ms:.3g} ms hidden behind the backward")
        assert line.endswith(f"{o.exposed_ms:.3g} ms exposed")


def test_interval_arithmetic():
    assert union([(3, 4), (0, 2), (1, 2.5)]) == [(0, 2.5), (3, 4)]
    assert intersect([(0, 2.5), (3, 4)], [(2, 3.5)]) == [(2, 2.5), (3, 3.5)]
    assert length([(0, 2.5), (3, 4)]) == 3.5


def test_older_traces_have_no_step_and_the_step_round_trips(traces, tmp_path):
    old = load_trace(RANKS / "cpu_comm_overlap" / "rank0.json.gz")
    assert old.step is None and step_overlap(old.step) is None
    save_trace(traces[0], tmp_path / "t.json.gz")
    assert load_trace(tmp_path / "t.json.gz").step == traces[0].step


def test_the_summary_gives_the_step_and_each_collective(traces):
    trace = traces[0]
    o = step_overlap(trace.step)
    lines = summary_text(trace).splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("train step ("))
    assert lines[at].endswith(overlap_line(o))
    assert len(o.collectives) == 5  # DDP's 5 buckets in this capture
    for c, line in zip(o.collectives, lines[at + 1:]):
        assert line.startswith(f"  gloo:all_reduce bucket {c.span.bucket}: ")
        back = ", ".join(f"#{g}" for g in c.backward) or "none"
        assert line.endswith(f"overlaps backward graphs {back}")
    assert "train step" not in summary_text(load_trace(RANKS / "cpu_comm_overlap"
                                                       / "rank0.json.gz"))


def test_on_two_gpus_each_ddp_bucket_is_one_nccl_kernel_against_the_graphs_device_spans():
    """HF GPT-2 under ``torch.compile(DDP(model))``, NCCL on two H200s: the step has the
    device's lanes, one ``ncclDevKernel_AllReduce`` per DDP bucket (as many as the DDP
    optimizer's pieces: it cuts at the buckets), fp32 gradients, issued by the backward
    and run on the device after they were issued; the overlap is on the device clock."""
    for r in (0, 1):
        trace = load_trace(RANKS / "nccl_ddp_gpt2" / f"rank{r}.json.gz")
        step = trace.step
        assert step.device == "cuda" and not step.note
        pieces = [g for g in trace.graphs if g.kind == "forward"]
        device = {s.graph for s in step.spans if s.lane == "device compute"}
        assert device >= set(range(len(trace.graphs)))  # every graph ran on the device
        kernels = [s for s in step.spans if s.lane == "device communication"]
        assert [s.bucket for s in kernels] == list(range(len(pieces)))
        first_backward = min(s.start_ms for s in step.spans
                             if s.lane == "compute" and s.kind == "backward")
        for s in kernels:
            assert s.name.startswith("ncclDevKernel_AllReduce") and s.dtype == "float"
            assert s.bytes == 4 * s.shape[0] and first_backward < s.issue_ms < s.start_ms
        o = step_overlap(step)
        assert o.clock == "device" and len(o.collectives) == len(kernels)
        assert o.communication_ms == pytest.approx(
            length(union([(s.start_ms, s.end_ms) for s in kernels])))


def test_on_two_gpus_fsdp2s_all_gathers_and_reduce_scatters_are_on_the_device_lane():
    trace = load_trace(RANKS / "nccl_fsdp2_llama" / "rank0.json.gz")
    kinds = {s.kind for s in trace.step.spans if s.lane == "device communication"}
    assert kinds == {"all_gather", "reduce_scatter"}
    scatters = [s for s in trace.step.spans if s.lane == "device communication"
                and s.kind == "reduce_scatter"]
    assert all(s.bytes == 4 * s.shape[0] for s in scatters)  # fp32 gradients
