"""The committed real GPU traces (H200 and H100, Triton) load and carry the Triton-only facts."""

import json
from pathlib import Path

import pytest

from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).parents[1] / "data"
GPU = sorted(DATA.glob("gpu_*.json.gz"))
EXPERIMENTS = DATA / "experiments"
INDUCTOR_BUG = "gpu_mlp_block_bench.json.gz"  # torch 2.11 fails this compile itself


@pytest.mark.parametrize("path", GPU, ids=[p.name for p in GPU])
def test_gpu_trace_has_triton_kernels(path):
    trace = load_trace(path, strict=True)
    assert trace.script.status == ("error" if path.name == INDUCTOR_BUG else "ok")
    assert trace.env["triton"] and trace.env["device_name"].startswith(("NVIDIA H200",
                                                                          "NVIDIA H100"))
    assert path.stat().st_size < 200_000
    for g in trace.graphs:
        if not g.kernels:
            continue
        assert g.device == "cuda" and g.backend == "triton"
        triton = [k for k in g.kernels if k.backend == "triton"]
        assert triton
        for k in triton:
            assert k.name.startswith(("triton_poi_", "triton_red_", "triton_per_"))
            assert "@triton.jit" in k.source
            assert "def triton_" in k.source
            assert k.n_regs and k.n_regs > 0 and k.n_spills is not None
            assert k.launch.get("num_warps") and k.ms and k.ms > 0
        assert g.timing.compiled_ms > 0  # older traces: CUDA events; newer: the profiler
        assert g.timing.method.startswith(("cuda events", "CUDA profiler"))


def test_benchmark_fusion_entries():
    trace = load_trace(DATA / "gpu_hub_branches_bench.json.gz")
    assert trace.config["benchmark_fusion"] is True
    cands = [c for r in trace.graphs[0].rounds for c in r.candidates if c.benchmark]
    assert len(cands) >= 3
    for c in cands:
        b = c.benchmark
        assert b.deferred and b.fuse is not None
        assert [k.role for k in b.kernels] == ["a", "b", "fused"]
        assert all(k.ms and k.ms > 0 and k.n_regs for k in b.kernels)
        assert b.speedup == pytest.approx((b.ms_a + b.ms_b) / b.ms_fused)
        assert c.outcome == ("fused" if b.fuse else "benchmark_slower")
    assert any(c.tried for c in cands)  # later pairs were tried through earlier fusions


def test_spilling_kernel_is_visible():
    g = load_trace(DATA / "gpu_hub_branches.json.gz").graphs[0]
    assert max(k.n_spills for k in g.kernels if k.n_spills is not None) > 0


def test_inductor_failure_keeps_the_partial_round():
    """benchmark_fusion on the backward graph makes torch 2.11 raise (plain Inductor too)."""
    trace = load_trace(DATA / INDUCTOR_BUG)
    assert "unexpected group" in trace.script.message and trace.script.traceback
    fwd, bwd = trace.graphs
    assert fwd.kernels and not bwd.kernels
    assert len(bwd.rounds) == 1 and bwd.rounds[0].fusions  # what happened before the raise
    r = bwd.rounds[0]
    assert len(r.groups_after) == len(r.groups_before) - len(r.fusions)
    assert any("speedup_by_fusion raised" in x.text for c in r.candidates for x in c.reasons)
    assert any("round 1 raised NotImplementedError" in w for w in bwd.warnings)


def _experiment(name):
    meta = json.loads((EXPERIMENTS / name / "experiment.json").read_text())
    return [load_trace(EXPERIMENTS / name / v["trace"]) for v in meta["variants"]]


def test_keep_spills_times_the_vetoed_fusions():
    veto, keep = _experiment("gpu_keep_spills_spill_branches")
    spills = [c for r in veto.graphs[0].rounds for c in r.candidates if c.outcome == "spill"]
    assert spills and all(c.benchmark.ms_fused is None for c in spills)
    assert all(max(k.n_spills for k in c.benchmark.kernels) > 8 for c in spills)
    timed = [c for r in keep.graphs[0].rounds for c in r.candidates
             if c.benchmark and max(k.n_spills or 0 for k in c.benchmark.kernels) > 8]
    assert timed and all(c.benchmark.ms_fused and c.outcome != "spill" for c in timed)
    assert keep.config["fusionviz.keep_spills"] is True
    assert len(keep.graphs[0].kernels) < len(veto.graphs[0].kernels)


def test_seed_experiment_benchmark_fusion_off_vs_on():
    off, on = _experiment("gpu_seed000_hub_branches")
    assert "benchmark_fusion" not in off.config or off.config["benchmark_fusion"] is False
    assert on.config["benchmark_fusion"] is True
    decisions = lambda t: sum(c.benchmark is not None for r in t.graphs[0].rounds for c in r.candidates)  # noqa: E731
    assert decisions(off) == 0 < decisions(on)
    assert on.graphs[0].compile_s > off.graphs[0].compile_s


def test_gpu_round_sweep_is_monotone():
    base, *variants = _experiment("gpu_sweep_mlp_block")
    for gi in range(len(base.graphs)):
        nodes = [len(v.graphs[gi].final_groups) for v in variants]
        assert nodes == sorted(nodes, reverse=True)
        assert nodes[-1] == len(base.graphs[gi].final_groups)


def test_max_autotune_records_template_epilogue_decisions():
    trace = load_trace(DATA / "gpu_mlp_block_autotune.json.gz")
    assert trace.config["max_autotune"] is True
    cands = [c for g in trace.graphs for r in g.rounds for c in r.candidates]
    # mm + pointwise epilogues were considered; speedup_by_fusion's untimed "no" says why
    epilogues = [c for c in trace.graphs[0].rounds[0].candidates if c.outcome == "rejected"
                 and any(n.category in ("extern", "template") for n in trace.graphs[0].nodes
                         if n.name in c.a + c.b)]
    assert epilogues and all(any(x.check == "speedup_by_fusion" for x in c.reasons)
                             for c in epilogues)
    timed = [c for c in cands if c.benchmark and c.benchmark.kernels]
    assert timed and all(k.role.startswith("fused choice") and k.ms for c in timed
                         for k in c.benchmark.kernels)
    # The backward graph's post-grad pass turned a@b + c@d into Inductor's mm_plus_mm
    # lowering call; the eager baseline runs the aten ops it replaced.
    assert any(k.name.startswith("extern_kernels._mm_plus_mm") for k in trace.graphs[1].kernels)
    for g in trace.graphs:
        assert g.timing.eager_ms > 0 and not g.timing.note
        assert g.timing.max_abs_diff is not None and g.timing.max_abs_diff < 1e-2


REFUSED = ("rejected", "cycle", "benchmark_slower", "spill")


def _refused(path) -> list:
    return [(g.index, r.index, c) for g in load_trace(path).graphs for r in g.rounds
            for c in r.candidates if c.outcome in REFUSED]


# only the traces that hold refusals: a trace without any could not fail the check
WITH_REFUSALS = [p for p in GPU if _refused(p)]


def test_most_gpu_traces_hold_refusals_to_check():
    assert len(WITH_REFUSALS) >= len(GPU) // 2, [p.name for p in WITH_REFUSALS]


@pytest.mark.parametrize("path", WITH_REFUSALS, ids=[p.name for p in WITH_REFUSALS])
def test_every_rejection_on_the_gpu_says_why(path):
    """A candidate refused by can_fuse, a cycle check or a benchmark carries the reason
    (Inductor's own internal can_fuse calls are not matched to candidates)."""
    for graph, rnd, c in _refused(path):
        assert c.reasons or c.benchmark, (graph, rnd, c.rank, c.outcome)


PROFILED = ["gpu_gpt2_train.json.gz", "gpu_llama_train.json.gz",
            "gpu_hub_branches_profiled.json.gz", "gpu_mlp_block.json.gz"]


@pytest.mark.parametrize("name", PROFILED)
def test_profiled_gpu_traces_carry_device_times_launches_and_spreads(name):
    """Recorded on an H100 with the CUDA-profiler timing (benchmarks/timing_fidelity.py)."""
    trace = load_trace(DATA / name, strict=True)
    assert trace.env["peak_dram_gb_s"] > 1000
    for g in trace.graphs:
        t = g.timing
        assert t.method.startswith("CUDA profiler") and t.profiled_calls == 5
        assert t.compiled_ms == t.compiled_device_ms and t.compiled_wall_ms > t.compiled_ms
        assert t.compiled_spread[0] <= t.compiled_ms <= t.compiled_spread[1]
        # the graph's device-busy time is what its kernels took: nothing unattributed
        assert sum(k.ms for k in g.kernels) == pytest.approx(t.compiled_device_ms, rel=0.03)
        for k in g.kernels:
            assert k.calls >= 1 and k.ms > 0, k.name
            assert not k.name.startswith("MultiOutput"), k.name
        assert t.eager_device_ms is not None and t.eager_wall_ms is not None


def test_the_gpt2_train_step_has_eager_forward_and_backward_and_launches_per_layer():
    forward, backward = load_trace(DATA / "gpu_gpt2_train.json.gz").graphs
    # the baseline is the user's own program run eagerly; the Dynamo graph's is kept
    assert forward.timing.eager_source.startswith("your program, eager forward")
    assert backward.timing.eager_source.startswith("your program, eager autograd backward")
    assert forward.timing.dynamo_eager_ms
    assert forward.timing.diff_note.startswith("random ops")  # dropout: not compared
    assert backward.timing.max_abs_diff is not None
    # one kernel definition launched once per layer: 12 launches, time per call summed
    per_layer = [k for k in forward.kernels if k.calls == 12]
    assert per_layer and all(len(k.ms_spread) == 2 for k in per_layer)
    sdpa = [k for k in backward.kernels if "scaled_dot_product" in k.name]
    assert len(sdpa) == 12 and all(k.ms > 0 for k in sdpa)  # fallbacks through torch.ops


@pytest.mark.parametrize("name", ["gpu_gpt2_train.json.gz", "gpu_llama_train.json.gz"])
def test_real_models_name_the_module_of_their_nodes_forward_and_backward(name):
    """Both graphs of a train step place their nodes in the model's layers."""
    for g in load_trace(DATA / name).graphs:
        modules = {n.module for n in g.nodes if n.module}
        layers = {m.split(".")[1] for m in modules if m.startswith("blocks.")}
        assert len(layers) >= 4, (g.kind, sorted(modules)[:10])
        # a node in a module (its path), or in the model itself (the root: no path, its
        # class): all but the loss computed outside the model
        placed = sum(1 for n in g.nodes if n.module or n.module_class)
        assert placed >= 0.95 * len(g.nodes), (g.kind, placed, len(g.nodes))


def test_ddp_optimizer_pieces_on_two_gpus_are_each_named_and_timed():
    """HF GPT-2 (6 layers) under ``torch.compile(DDP(model))``, NCCL on two H200s
    (``benchmarks/ddp_gpt2.py``): the DDP optimizer's 8 pieces per side each say which
    bucket they compile and are each timed; before, forward pieces 2-7 had no time and
    every piece's eager figure read 0.000 ms (one taken on the optimizer's FakeTensors),
    and the backward pieces' eager autograd backward missed their parameters."""
    from fusionviz.model.experiment import ranks
    from fusionviz.model.report.graph_reasons import split_groups

    folder = DATA / "ranks" / "nccl_ddp_gpt2"
    traces = [load_trace(str(folder / f"rank{r}.json.gz")) for r in (0, 1)]
    assert ranks.agree(traces)
    graphs = traces[0].graphs
    assert [g.split.piece for g in graphs] == [*range(8), *range(7, -1, -1)]
    assert [g.kind for g in graphs] == ["forward"] * 8 + ["backward"] * 8
    assert [label for label, _ in split_groups(graphs)] == [
        "[4/0] forward: 8 pieces (DDP optimizer)", "[4/0] backward: 8 pieces (DDP optimizer)"]
    # the six transformer blocks: 12 parameters, 27.0 MiB each (fp32)
    assert [len(g.split.params) for g in graphs[1:7]] == [12] * 6
    d = 768  # ln_1, attn c_attn and c_proj, ln_2, mlp c_fc and c_proj, fp32
    block = 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + 2 * d + 2 * (d * 4 * d) + 4 * d + d
    assert {g.split.bytes for g in graphs[1:7]} == {4 * block}
    assert all(p.startswith("transformer.h.") for p in graphs[1].split.params)
    for g in graphs:
        assert g.timing.compiled_ms > 0 and g.timing.compiled_device_ms > 0
    for g in graphs:
        assert g.timing.eager_ms > 0 and g.timing.eager_source == (
            f"Dynamo graph, eager {'forward' if g.kind == 'forward' else 'autograd backward'}")
    # each piece's own: the six blocks alike, the embedding and lm_head pieces apart
    forward = [g.timing.eager_ms for g in graphs[:8]]
    assert max(forward[1:7]) < 1.1 * min(forward[1:7]) and forward[7] > 4 * forward[1]


def test_an_fsdp2_llama_on_two_gpus_has_every_graph_timed_and_the_ranks_agree():
    """HF Llama (4 layers) with each layer and the root ``fully_shard``-ed, then
    ``torch.compile(model)``, NCCL on two H100s (``benchmarks/fsdp2_llama.py``, torch
    2.11): FSDP2's hooks run between compiled frames (no collective inside a graph on
    this torch); every graph is timed on both clocks with an eager figure."""
    from fusionviz.model.experiment import ranks

    folder = DATA / "ranks" / "nccl_fsdp2_llama"
    traces = [load_trace(str(folder / f"rank{r}.json.gz")) for r in (0, 1)]
    assert ranks.agree(traces) and [t.script.status for t in traces] == ["ok", "ok"]
    graphs = traces[0].graphs
    assert {g.kind for g in graphs} == {"inference", "forward", "backward"}
    assert not [g for g in graphs if g.split is not None]  # no DDP optimizer here
    for g in graphs:
        assert g.timing.compiled_device_ms > 0 and g.timing.eager_ms > 0, g.index
    # the decoder layer's body, compiled once and run for every layer
    body = max(graphs, key=lambda g: len(g.nodes))
    assert body.kind in ("forward", "backward") and len(body.kernels) >= 16


def test_fsdp2s_wrapped_llama_layers_are_named_frames_of_their_own():
    """#21 item 1, torch 2.11 on two H100s: no graph break precedes the decoder layer's
    graph (fully_shard's hooks are not traced, the model's loop runs eagerly); the
    trace names its frame, the module, FSDP2 and the 4 calls, and the graphs before and
    after it the code they start at or the break they resume after."""
    from fusionviz.model.report.graph_reasons import step_calls, why_short

    folder = DATA / "ranks" / "nccl_fsdp2_llama"
    for rank in (0, 1):
        trace = load_trace(str(folder / f"rank{rank}.json.gz"))
        assert trace.env["torch"].startswith("2.11") and not trace.problems
        calls = step_calls(trace)
        layers = [g for g in trace.graphs if g.frame is not None
                  and g.frame.module_class == "LlamaDecoderLayer"]
        assert sorted(g.kind for g in layers) == ["backward", "forward"]
        for g in layers:
            f = g.frame
            assert not g.break_reasons and g.resumed_after is None and calls[g.index] == 4
            assert (f.function, f.module, f.wrapped_by, f.entry) == (
                "LlamaDecoderLayer.forward", "model.layers.0", "fully_shard", False)
            assert f.modules == tuple(f"model.layers.{i}" for i in range(4))
            assert f.file.endswith("modeling_llama.py") and f.line > 0
            assert why_short(g, 4) == ("a frame of its own: LlamaDecoderLayer.forward "
                                       "(model.layers.*), wrapped by fully_shard; its 4 "
                                       "calls reuse this graph")
        # every graph says why it exists: a frame of its own or the break it resumes after
        assert all(why_short(g, calls.get(g.index)) for g in trace.graphs)
        norm = next(g for g in trace.graphs if g.frame and g.frame.module == "model.norm")
        assert why_short(norm) == "a frame of its own: LlamaRMSNorm.forward (model.norm)"
