"""Multi-process captures (#13): torchrun with 2 ranks and gloo on the CPU, every rank
captured into one folder, collectives recorded as nodes, the ranks compared, and a
crashing or hanging rank handled."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.comms.reorders import comm_names, moves
from fusionviz.model.comms.step_overlap import step_overlap
from fusionviz.model.experiment import ranks
from fusionviz.model.experiment.runs import read_experiment
from fusionviz.model.report.graph_reasons import step_calls, why_short
from fusionviz.model.run.runner import rank_paths, run_capture
from fusionviz.model.tracefile.io import load_trace

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """capture(script, *args) -> (folder, traces, progress messages), once per script."""
    done = {}

    def run(script: str, *args: str, **options):
        if script not in done:
            folder = tmp_path_factory.mktemp("ranks")
            messages = []
            # a hang fails in minutes with status "timeout", not at pytest's limit
            run_capture(str(SCRIPTS / script), str(folder), nproc=2, device="cpu",
                        on_progress=messages.append, script_args=args, timeout=240,
                        **options)
            traces = [load_trace(p) for p in rank_paths(folder, 2)]
            ranks.finish_ranks(str(SCRIPTS / script), folder, traces)
            done[script] = folder, traces, messages
        return done[script]

    return run


@pytest.mark.parametrize("script", ["ddp_step.py", "fsdp2_step.py"])
def test_every_rank_of_a_train_step_is_captured_and_the_ranks_agree(captured, script):
    folder, traces, messages = captured(script)
    assert [t.script.status for t in traces] == ["ok", "ok"]
    assert traces[0].graphs and len(traces[0].graphs) == len(traces[1].graphs)
    assert {m.get("rank") for m in messages} == {0, 1}  # progress says which rank
    assert ranks.agree(traces) and ranks.agreement(traces) == {1: []}
    meta = json.loads((folder / "experiment.json").read_text())
    assert meta["kind"] == "ranks" and meta["agree"] is True
    assert [v["trace"] for v in meta["variants"]] == ["rank0.json.gz", "rank1.json.gz"]
    experiment = read_experiment(folder)  # what the window's comparison opens
    assert [v.label for v in experiment.variants] == ["rank 0", "rank 1"]
    assert "Ranks agree" in experiment.report


def test_collectives_in_a_compiled_graph_are_nodes_of_their_own(captured):
    _folder, traces, _ = captured("dist_allreduce.py")
    for trace in traces:
        (graph,) = trace.graphs
        comm = [n for n in graph.nodes if n.category == "collective"]
        assert [n.collective.kind for n in comm] == ["all_reduce", "wait_tensor"]
        reduce = comm[0].collective
        assert (reduce.reduce_op, reduce.group) == ("sum", "0")
        assert reduce.bytes == 64 * 128 * 4  # the float32 tensor it reduces
        assert comm[0].extern_kernel.endswith("_c10d_functional.all_reduce_.default")
        # the pointwise work on either side stays in fused kernels of its own
        assert {n.category for n in graph.nodes} == {"pointwise", "collective", "reduction"}
    assert ranks.agree(traces)


def test_the_overlap_passes_after_fusion_are_recorded_on_every_rank(captured):
    """comm_overlap.py turns on Inductor's reorder_for_compute_comm_overlap with two
    passes: each is recorded with the order before and after it, and the program's
    result and Inductor's final order are the pass's own."""
    _folder, traces, _ = captured("comm_overlap.py")
    for trace in traces:
        (graph,) = trace.graphs
        assert [r.name for r in graph.reorders] == ["sink_waits_iterative", "raise_comms"]
        assert "torch._inductor.comms.reorder_compute_and_comm_for_overlap" in \
            trace.capabilities.installed
        sink = graph.reorders[0]
        wait = next(n.name for n in graph.nodes
                    if n.collective and n.collective.kind == "wait_tensor")
        assert [m.group for m in moves(sink)] == [(wait,)]
        assert graph.final_groups == graph.reorders[-1].order_after
        assert not trace.problems
    assert ranks.agree(traces)


def test_every_kernel_records_when_it_ran_within_the_graph_call(captured):
    _folder, traces, _ = captured("dist_allreduce.py")
    for trace in traces:
        (graph,) = trace.graphs
        for k in graph.kernels:
            assert k.start_ms is not None and 0 <= k.start_ms <= k.end_ms, k
        # the CPU runs them one after the other, in call order (medians keep the order)
        for a, b in zip(graph.kernels, graph.kernels[1:]):
            assert a.end_ms <= b.start_ms, (a.name, b.name)
        reduce, wait = (next(k for k in graph.kernels if kind in k.name)
                        for kind in ("functional.all_reduce_", "functional.wait_tensor"))
        assert wait.end_ms > reduce.start_ms


def test_the_all_reduce_is_timed_from_its_issue_to_the_end_of_its_wait(captured):
    _folder, traces, _ = captured("dist_allreduce.py")
    for trace in traces:
        (graph,) = trace.graphs
        (t,) = collective_times(graph)
        reduce, wait = (n.name for n in graph.nodes if n.category == "collective")
        assert (t.node, t.waits, t.collective.kind) == (reduce, (wait,), "all_reduce")
        kernels = {k.name: k for k in graph.kernels}
        assert t.issue_ms == kernels[t.kernel].ms
        assert t.span_ms == kernels[f"torch.ops._c10d_functional.wait_tensor.default:{wait}"
                                    ].end_ms - kernels[t.kernel].start_ms
        assert t.span_ms >= t.wait_ms >= 0 and t.span_ms >= t.issue_ms > 0
        assert t.time_ms == t.span_ms and t.device_ms is None and not t.on_device
        assert t.kernels_between == ()  # the wait follows the all_reduce at once


def test_summary_query_and_details_give_the_collectives_time(captured, capsys, qtbot):
    folder, traces, _ = captured("dist_allreduce.py")
    assert main(["summary", str(folder / "rank1.json.gz")]) == 0
    out = capsys.readouterr().out
    (t,) = collective_times(traces[1].graphs[0])
    line = next(x for x in out.splitlines() if x.strip().startswith(f"{t.node} -> "))
    assert "all_reduce (sum) over group 0 of 2 ranks (gloo), 32.0 KiB" in line
    assert f"{t.span_ms:.3f} ms from issue to the end of its wait (issue " \
           f"{t.issue_ms:.3f} ms, wait {t.wait_ms:.3f} ms, no kernels in between)" in line
    assert main(["query", str(folder), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    for rank, trace in zip(doc["ranks"], traces, strict=True):
        (row,) = rank["graphs"][0]["collectives"]
        (t,) = collective_times(trace.graphs[0])
        assert row["span_ms"] == row["time_ms"] == t.span_ms and row["time_kind"] == "span"
        assert (row["waits"], row["kernels_between"], row["device_ms"]) == (
            list(t.waits), [], None)
    from fusionviz.ui.details_pane import DetailsPane
    from fusionviz.ui.view_state import ViewState

    state = ViewState()
    state.set_trace(traces[1])
    pane = DetailsPane(state)
    qtbot.addWidget(pane)
    for name in (t.node, *t.waits):
        state.select_nodes((name,))
        text = pane.text()
        assert f"{t.span_ms:.3f} ms from issue to the end of its wait" in text
        assert ("waits for" in text) == (name != t.node)


def test_a_tensor_parallel_step_has_its_all_reduce_among_the_fused_kernels(captured):
    """tp_step.py: DTensor's column/row-wise split of an MLP (2 ranks, gloo here; NCCL on
    two GPUs): the forward's all-reduce is an Inductor node of the compiled graph."""
    _folder, traces, _ = captured("tp_step.py")
    for trace in traces:
        assert trace.script.status == "ok"
        forward = next(g for g in trace.graphs if g.kind == "forward")
        (reduce,) = [n.collective for n in forward.nodes
                     if n.collective and n.collective.kind == "all_reduce"]
        assert (reduce.reduce_op, reduce.group_size) == ("sum", 2) and "gloo" in reduce.backend
        (t,) = collective_times(forward)
        assert t.waits and t.span_ms is not None and t.span_ms >= t.wait_ms >= 0
    assert ranks.agree(traces)


def test_bucketing_before_lowering_is_recorded_and_said(captured, capsys):
    """all_gather_bucketing.py: Inductor's FX bucketing merges three all-gathers into
    one before lowering; the graph the scheduler gets has one, and the pass says so."""
    folder, traces, _ = captured("all_gather_bucketing.py")
    for trace in traces:
        (graph,) = trace.graphs
        (cp,) = graph.comm_passes
        assert cp.name == "bucket_all_gathers"
        assert (cp.before["all_gather_into_tensor"], cp.before["wait_tensor"]) == (3, 3)
        gathers = [n.collective.kind for n in graph.nodes
                   if n.collective and n.collective.kind != "wait_tensor"]
        assert len(gathers) == sum(v for k, v in cp.after.items() if k != "wait_tensor") == 1
        assert not trace.problems
    assert main(["summary", str(folder / "rank0.json.gz")]) == 0
    assert "before lowering: bucket_all_gathers: 3 all_gather_into_tensor, 3 wait_tensor" \
        " → 1 " in capsys.readouterr().out
    assert main(["query", str(folder / "rank0.json.gz"), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["graphs"][0]["comm_passes"]
    assert row["name"] == "bucket_all_gathers" and row["before"]["all_gather_into_tensor"] == 3


def test_ranks_that_differ_are_listed(captured):
    _folder, traces, _ = captured("dist_allreduce.py")
    other = load_trace(rank_paths(captured("ddp_step.py")[0], 2)[1])
    found = ranks.differences(traces[0], other)
    assert found and found[0].startswith("graphs: 1 vs 2")
    assert not ranks.agree([traces[0], other])
    assert "Ranks disagree" in ranks.report_markdown("x.py", [traces[0], other])


def test_summary_of_the_folder_says_whether_ranks_agree(captured, capsys):
    folder, _, _ = captured("dist_allreduce.py")
    assert main(["summary", str(folder)]) == 0
    out = capsys.readouterr().out
    assert "# rank 0 (rank0.json.gz)" in out and "# rank 1 (rank1.json.gz)" in out
    assert "Ranks agree" in out


def test_a_crashing_rank_is_reported_and_no_rank_is_left(tmp_path, alive):
    folder = tmp_path / "crash"
    t0 = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "fusionviz", "capture", str(SCRIPTS / "rank_fails.py"),
         "--nproc-per-node", "2", "-o", str(folder), "--device", "cpu", "--no-timing",
         "--", "crash", str(tmp_path)], capture_output=True, text=True, timeout=240)
    # not rank 0's 600 s sleep (ranks that compile on a loaded 2-core machine took 81 s)
    assert time.monotonic() - t0 < 200
    assert done.returncode == 1
    rank0, rank1 = (load_trace(p) for p in rank_paths(folder, 2))
    assert rank1.script.status == "error" and "rank 1 fails on purpose" in rank1.script.message
    assert rank0.script.status not in ("ok", "running")  # stopped by the launcher
    assert rank0.graphs and rank1.graphs  # what each rank captured is kept
    pids = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
    assert not any(alive(p) for p in pids)


def test_a_hanging_job_is_stopped_by_the_timeout_on_every_rank(tmp_path, alive):
    folder = tmp_path / "hang"
    trace = run_capture(str(SCRIPTS / "rank_fails.py"), str(folder), nproc=2, device="cpu",
                        timing=False, timeout=50, script_args=("hang", str(tmp_path)))
    # (50 s: both ranks compile first, the step's kernels the crash test's, kept; 30 s
    # were not enough for them on a 2-core machine under two busy loops)
    assert trace.script.status == "timeout"
    for path in rank_paths(folder, 2):
        kept = load_trace(path)
        assert kept.script.status == "timeout" and kept.graphs
    pids = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
    assert not any(alive(p) for p in pids)


def test_two_ranks_recorded_on_a_gpu_with_triton_kernels_around_the_collective():
    """Recorded on an H100 (torch 2.11): two ranks sharing the GPU over gloo."""
    folder = Path(__file__).parents[1] / "data" / "ranks" / "gpu_ranks_allreduce"
    experiment = read_experiment(folder)
    assert experiment.kind == "ranks" and len(experiment.variants) == 2
    traces = [v.trace for v in experiment.variants]
    assert ranks.agree(traces)
    for trace in traces:
        assert trace.env["torch"].startswith("2.11")
        (graph,) = trace.graphs
        assert [n.collective.kind for n in graph.nodes if n.collective] == ["all_reduce",
                                                                            "wait_tensor"]
        backends = [k.backend for k in graph.kernels]
        assert backends == ["triton", "extern", "extern", "triton"]


@pytest.mark.parametrize("name", ["nccl_fsdp2_step", "nccl_tp_step", "nccl_comm_overlap"])
def test_two_ranks_on_two_gpus_with_nccl(name):
    """Recorded on two H100s (device tool, torch 2.11), one rank per GPU, NCCL: every
    rank captured, the ranks agree; where a collective is an Inductor node its group
    is NCCL's and its time is the NCCL kernel's device time."""
    experiment = read_experiment(Path(__file__).parents[1] / "data" / "ranks" / name)
    traces = [v.trace for v in experiment.variants]
    assert len(traces) == 2 and ranks.agree(traces)
    for trace in traces:
        assert trace.script.status == "ok" and trace.env["torch"].startswith("2.11")
        assert all(g.device.startswith("cuda") for g in trace.graphs)
        for graph in trace.graphs:
            for t in collective_times(graph):
                assert "nccl" in t.collective.backend and t.on_device
                assert t.time_ms == t.device_ms > 0 and t.span_ms is not None
    comm = [t for g in traces[0].graphs for t in collective_times(g)]
    if name == "nccl_fsdp2_step":  # torch 2.11: FSDP2's hooks break the graph
        assert len(traces[0].graphs) == 5 and comm == []
    else:
        assert [t.collective.kind for t in comm] == ["all_reduce"]
    if name == "nccl_comm_overlap":
        (graph,) = traces[0].graphs
        assert [r.name for r in graph.reorders] == ["sink_waits_iterative", "raise_comms"]
        assert moves(graph.reorders[0], comm_names(graph))


def test_ddp_optimizer_pieces_are_named_timed_and_given_their_own_eager_figure(captured):
    """Dynamo's DDP optimizer splits the frame at DDP's bucket boundaries (1 MB buckets,
    one 512x512 Linear each): Inductor compiles 4 forward and 4 backward pieces under
    one compile id. Each piece says which it is and what its bucket holds, is timed,
    and its eager figure is its own (it was the last piece's for all, or a "0.000 ms"
    taken on the FakeTensors the optimizer runs each piece on while compiling)."""
    _, traces, _ = captured("ddp_buckets.py")
    for trace in traces:
        assert trace.script.status == "ok"
        graphs = trace.graphs
        assert [(g.kind, g.split.piece) for g in graphs] == [
            ("forward", 0), ("forward", 1), ("forward", 2), ("forward", 3),
            ("backward", 3), ("backward", 2), ("backward", 1), ("backward", 0)]
        assert len({g.compile_id for g in graphs}) == 1
        for g in graphs:
            k = g.split.piece
            assert g.split.pieces == 4 and g.split.by == "DDP optimizer"
            assert g.split.params == (f"layers.{k}.weight", f"layers.{k}.bias")
            assert g.split.bytes == (512 * 512 + 512) * 4
            t = g.timing
            assert t.compiled_ms > 0 and t.eager_ms > 0, (g.index, t)
            assert t.eager_source.startswith("Dynamo graph, eager")
        # one eager figure per piece, not one for all
        assert len({g.timing.eager_ms for g in graphs}) == len(graphs)
    assert ranks.agree(traces)


def test_each_rank_profiles_one_train_step_with_its_pieces_and_bucket_all_reduces(
        captured):
    """#21 item 5: DDP's bucket all-reduces run in its hooks, outside the compiled
    pieces. Each rank profiles its 2nd step (from the 2nd call of its first piece to
    its 3rd): the 8 pieces' calls in order, forward then backward, one gloo all-reduce
    per bucket issued during the backward (together every parameter's bytes), and the
    optimizer after them."""
    _, traces, _ = captured("ddp_buckets.py")
    for trace in traces:
        step = trace.step
        assert not step.note and step.window.endswith("to the 3rd call of graph 0")
        pieces = sorted((s for s in step.spans if s.lane == "compute" and s.graph is not None),
                        key=lambda s: s.start_ms)
        assert [s.graph for s in pieces] == list(range(8))  # forward 0-3, backward 4-7
        assert [s.kind for s in pieces] == ["forward"] * 4 + ["backward"] * 4
        assert pieces[0].start_ms == 0 and all(
            a.end_ms <= b.start_ms for a, b in zip(pieces, pieces[1:]))
        reduces = [s for s in step.spans if s.kind == "all_reduce"]
        assert len(reduces) >= 4 and {s.backend for s in reduces} == {"gloo"}
        assert sum(s.bytes for s in reduces) == 4 * (512 * 512 + 512) * 4
        # issued by DDP's hooks during the backward, after the piece that made the grads
        assert all(pieces[4].end_ms <= s.issue_ms <= s.start_ms < s.end_ms
                   for s in reduces)
        first = min(reduces, key=lambda s: s.issue_ms)
        assert first.bucket == 0 and first.issue_ms < pieces[5].start_ms
        (sgd,) = [s for s in step.spans if s.name == "SGD.step"]
        assert sgd.start_ms > pieces[-1].end_ms and sgd.end_ms <= step.duration_ms
        overlap = step_overlap(step)
        assert overlap.communication_ms > 0 and len(overlap.collectives) == len(reduces)


def test_fsdp2s_all_gathers_outside_the_graphs_are_on_each_ranks_step(captured):
    """FSDP2's hooks gather each layer's parameters outside the compiled graphs (gloo:
    its reduce-scatters run as all-reduces): each rank's profiled step holds them, each
    with its tensor's bytes and when the script's thread issued it."""
    _, traces, _ = captured("fsdp2_step.py")
    for trace in traces:
        step = trace.step
        assert not step.note and step.window.endswith("call of graph 0")
        gathers = [s for s in step.spans if s.kind == "all_gather"]
        assert gathers and all(s.bytes > 0 and s.issue_ms is not None for s in gathers)
        assert {s.graph for s in step.spans if s.graph is not None} == set(
            range(len(trace.graphs)))
        assert len(step_overlap(step).collectives) == len(
            [s for s in step.spans if s.lane == "communication"])


def test_each_fsdp2_wrapped_layers_forward_is_named_a_frame_of_its_own(
        captured, capsys, qtbot):
    """#21 item 1: ``fully_shard``'s hooks are not traced, so the model's loop over its
    three wrapped ``Layer``s runs eagerly and each layer's forward is a Dynamo frame of
    its own, with no graph break before it (compiled as 1/0 for layers.0, whose input
    needs no grad, and 1/1 for the other two). Each graph records the frame's code and
    module, and the graphs list, ``summary`` and ``query --json`` say it."""
    folder, traces, _ = captured("fsdp2_layers.py")
    script = SCRIPTS / "fsdp2_layers.py"
    lines = script.read_text().splitlines()
    forward = next(i for i, x in enumerate(lines, 1) if "def forward(self, x):" in x)
    call = next(i for i, x in enumerate(lines, 1) if "x = layer(x)" in x)
    for trace in traces:
        assert trace.script.status == "ok" and trace.graphs
        assert not [p for p in trace.problems if "frame" in p.where], trace.problems
        calls = step_calls(trace)
        for g in trace.graphs:
            f = g.frame
            assert (f.function, f.module_class, f.wrapped_by, f.entry) == (
                "Layer.forward", "Layer", "fully_shard", False), g.index
            assert (Path(f.file).name, f.line) == ("fsdp2_layers.py", forward)
            assert f.modules == ("layers.0", "layers.1", "layers.2")
            assert f.caller.endswith(f"fsdp2_layers.py:{call} in forward")
            assert f.module == {"1/0": "layers.0", "1/1": "layers.1"}[g.compile_id]
            assert not g.break_reasons and g.resumed_after is None
        first = next(g for g in trace.graphs if g.compile_id == "1/0" and g.kind == "forward")
        again = next(g for g in trace.graphs if g.compile_id == "1/1" and g.kind == "forward")
        assert (calls[first.index], calls[again.index]) == (1, 2)  # the profiled step's
        assert why_short(first, calls[first.index]) == (
            "a frame of its own: Layer.forward (layers.0 of layers.*), wrapped by fully_shard")
        assert why_short(again, calls[again.index]).startswith(
            "a frame of its own: Layer.forward (layers.*), wrapped by fully_shard; its 2 "
            "calls reuse this graph; recompiled: tensor 'x' requires_grad mismatch")
    path = folder / "rank0.json.gz"
    assert main(["summary", str(path)]) == 0
    out = capsys.readouterr().out
    assert "  a frame of its own: Layer.forward (layers.*), wrapped by fully_shard; its 2 " \
           "calls reuse this graph" in out
    assert f"      starts at {script}:{forward}, called from {script}:{call} in forward" in out
    assert main(["query", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    row = next(r for r in doc["graphs"] if r["index"] == again.index)
    assert row["frame"]["wrapped_by"] == "fully_shard" and row["step_calls"] == 2
    assert row["why"] == why_short(again, 2)
    assert doc["step"]["collectives"] and doc["step"]["clock"] == "cpu"

    from fusionviz.ui.graphs_list import WHY, GraphsList
    from fusionviz.ui.view_state import ViewState

    state = ViewState()
    state.set_trace(traces[0])
    view = GraphsList(state)
    qtbot.addWidget(view)
    item = view.items[again.index]
    assert item.text(WHY) == why_short(again, 2)
    assert "FSDP2's fully_shard wraps that module" in item.toolTip(WHY)
    assert "The profiled train step called this graph 2 time(s)." in item.toolTip(WHY)


def test_fsdp2s_root_frame_is_the_compiled_model_and_its_resumes_name_their_break(
        captured):
    """fsdp2_step.py on torch 2.13: the root's forward (the model torch.compile was
    handed, itself ``fully_shard``-ed) breaks at each wrapped Linear's call (FSDP2's
    hook is not traced); the code after each break is a resume frame that names it."""
    _, traces, _ = captured("fsdp2_step.py")
    for trace in traces:
        roots = [g for g in trace.graphs if g.frame is not None]
        assert roots and {(g.frame.function, g.frame.module_class, g.frame.module,
                           g.frame.wrapped_by, g.frame.entry) for g in roots} == {
            ("MLP.forward", "MLP", "", "fully_shard", True)}
        assert all(not why_short(g).startswith("a frame of its own") for g in roots)
        resumed = [g for g in trace.graphs if g.frame is None]
        assert resumed and all(g.resumed_after is not None for g in resumed)
        assert all(why_short(g).startswith("after graph break: ") for g in resumed)
