"""Compiled vs eager, explained, on real GPU traces (H200, torch 2.11): the program's own
eager run as the baseline, its kernels mapped to the compiled ones, and the findings."""

from __future__ import annotations

import statistics
from pathlib import Path

import pytest

from fusionviz.model.report.chart_data import clock_note, timeline
from fusionviz.model.report.eager_explain import explain
from fusionviz.model.report.eager_figures import figure, versus
from fusionviz.model.report.eager_json import eager_json
from fusionviz.model.report.eager_map import module_map
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def bert():
    return load_trace(str(DATA / "gpu_bert_fp16_infer.json.gz"))


@pytest.fixture(scope="module")
def llama():
    return load_trace(str(DATA / "gpu_llama_hf_train.json.gz"))


def test_the_eager_baseline_is_the_program_run_eagerly_with_device_times(bert):
    (entry,) = bert.entries
    assert (entry.name, entry.kind, entry.compile_ids, entry.grad) == (
        "BertModel", "module", ("0/0",), False)
    assert len(entry.eager_forward.device) == 3 and len(entry.eager_forward.wall) >= 5
    assert len(entry.compiled_forward.device) == 3
    assert entry.eager_forward.launches > entry.compiled_forward.launches > 0
    graph = bert.graphs[0]
    t = graph.timing
    assert t.eager_source == "your program, eager forward (BertModel)"
    assert t.eager_device_ms == pytest.approx(statistics.median(entry.eager_forward.device))
    assert t.dynamo_eager_device_ms is not None  # the Dynamo graph's figure kept beside it
    assert t.dynamo_eager_device_ms > t.eager_device_ms  # the graph does more work


def test_every_eager_kernel_is_attributed_to_its_op_and_module(bert):
    (entry,) = bert.entries
    assert all(k.side == "forward" and k.ms >= 0 and k.calls > 0 for k in entry.kernels)
    gemms = [k for k in entry.kernels if k.op == "aten::linear"]
    assert len({k.module for k in gemms}) == 12 * 6 + 1  # q, k, v, out, inter, out; pooler
    attention = [k for k in entry.kernels if k.op == "aten::scaled_dot_product_attention"
                 and "sdpa" in k.name]
    assert {k.module for k in attention} == {f"encoder.layer.{i}.attention.self"
                                             for i in range(12)}


def test_the_map_places_every_eager_kernel_beside_compiled_ones(bert):
    mp = module_map(bert, bert.entries[0], "forward")
    assert mp.coverage == pytest.approx(1.0)
    assert mp.eager_total == pytest.approx(sum(k.ms for k in bert.entries[0].kernels))
    attn = mp.modules["encoder.layer.3.attention.self"]
    assert [s.kernel.name.split(":")[0] for s in attn.compiled if s.ms > 0.01] == [
        "torch.ops.aten._scaled_dot_product_cudnn_attention.default"]
    assert attn.own_compiled_ms > 1.5 * attn.own_eager_ms  # the masked attention is slower
    root = mp.modules[""]
    assert root.compiled_ms == pytest.approx(mp.compiled_total)
    assert abs(root.eager_ms - mp.eager_total) < 1e-6


def test_bert_says_which_modules_lost_time_to_a_mask_only_the_graph_builds(bert):
    ex = explain(bert, bert.entries[0])
    attention = next(f for f in ex.findings if f.title.startswith("attention"))
    assert "in 12 modules (encoder.layer.*.attention.self)" in attention.title
    assert "slower under compile" in attention.title
    assert "builds an attention mask" in attention.detail
    assert "attention_mask=None" in attention.fix
    lost = dict(ex.budget)["  forward: most lost in"]
    assert lost.startswith("encoder.layer.*.attention.self +")
    text = summary_text(bert)
    assert "eager vs compiled: BertModel: compiled" in text
    assert "! attention is" in text


def test_a_fused_kernel_swapped_for_a_slower_one_is_named_with_its_modules():
    """H100, SDPA's cuDNN backend off (as before Hopper): eager runs flash attention
    without a mask; the compiled graph builds a dense mask and runs memory-efficient
    attention (``gpu_bert_fp16_nocudnn_infer.json.gz``)."""
    trace = load_trace(str(DATA / "gpu_bert_fp16_nocudnn_infer.json.gz"))
    (entry,) = trace.entries
    ex = explain(trace, entry)
    assert ex.headline().startswith("BertModel: compiled ")
    assert ex.headline().endswith("device per call: 1.18x slower")
    swap = next(f for f in ex.findings if f.title.startswith("attention"))
    assert swap.title.startswith("attention runs efficient under compile where eager ran "
                                 "flash in 12 modules (encoder.layer.*.attention.self): +")
    assert len(swap.modules) == 12 and "builds an attention mask" in swap.detail
    mp = module_map(trace, entry, "forward")
    assert mp.coverage == pytest.approx(1.0)
    attn = mp.modules["encoder.layer.3.attention.self"]
    assert [k.name.split("<")[0] for k in attn.eager if k.ms > 0.01] == [
        "void pytorch_flash::flash_fwd_kernel"]
    assert [s.kernel.name.split(":")[0] for s in attn.compiled if s.ms > 0.01] == [
        "torch.ops.aten._scaled_dot_product_efficient_attention.default"]
    assert attn.own_compiled_ms > 2 * attn.own_eager_ms
    text = summary_text(trace)
    assert "! attention runs efficient under compile where eager ran flash" in text


def test_slower_attention_without_a_traced_mask_does_not_blame_transformers():
    """A hand-written Llama on the CPU: flash attention on both sides, no mask built
    under compile. The finding points at the inputs' layout (Details shows it), not at
    transformers' traced mask and its attention_mask=None fix."""
    trace = load_trace(str(DATA / "cpu_llama_tiny_train.json.gz"))
    ex = explain(trace, trace.entries[0])
    attention = next(f for f in ex.findings if f.title.startswith("attention"))
    assert "(flash kernels on both sides)" in attention.title
    assert "builds no mask" in attention.detail and "layout" in attention.detail
    assert "transformers" not in attention.detail + attention.fix
    assert "attention_mask" not in attention.fix and "strides" in attention.fix


def test_a_train_step_is_timed_forward_and_backward_and_found_launch_bound(llama):
    (entry,) = llama.entries
    assert entry.grad and entry.name == "LossOf" and entry.compile_ids == ("0/0",)
    assert len(entry.eager_backward.device) == 3 and len(entry.compiled_backward.wall) >= 5
    # the capture's extra calls compiled nothing again (input_ids is labels kept)
    assert [(g.kind, g.compile_id) for g in llama.graphs] == [("forward", "0/0"),
                                                              ("backward", "0/0")]
    ex = explain(llama, entry)
    assert ex.headline().startswith("LossOf: compiled ")
    assert "forward + backward" in ex.headline()
    assert set(ex.step) == {"device", "wall"}
    for side in ("forward", "backward"):
        mp = module_map(llama, entry, side)
        assert mp.coverage >= 0.95
        assert any(p.endswith(".self_attn") for p in mp.modules)
    launch = next(f for f in ex.findings if f.title.startswith("launch-bound"))
    assert "reduce-overhead" in launch.fix
    attention = next(f for f in ex.findings if f.title.startswith("attention"))
    assert "in 8 modules (model.model.layers.*.self_attn)" in attention.title
    backward = next(g for g in llama.graphs if g.kind == "backward")
    assert backward.timing.eager_source.startswith("your program, eager autograd backward")


def test_the_json_section_holds_both_clocks_the_map_and_the_findings(llama):
    (doc,) = eager_json(llama)
    for side in ("forward", "backward"):
        for clock in ("device", "wall"):
            v = doc[side][clock]
            assert v["eager"]["q1_ms"] <= v["eager"]["median_ms"] <= v["eager"]["q3_ms"]
            assert v["verdict"] in ("faster", "slower", "within noise")
    rows = doc["kernel_map"]["forward"]["modules"]
    assert rows and all(r["eager_kernels"] or r["compiled_kernels"] for r in rows)
    assert abs(rows[0]["delta_ms"]) >= abs(rows[-1]["delta_ms"])
    assert [f["title"] for f in doc["findings"]]


def test_figures_say_noisy_and_within_noise_instead_of_a_speedup():
    steady = figure([1.0, 1.01, 0.99, 1.0, 1.02])
    assert not steady.noisy and steady.q1 <= steady.median <= steady.q3
    noisy = figure([0.2, 0.21, 9.9, 0.2, 24.0, 0.22, 19.0, 0.2])
    assert noisy.noisy and "noisy" in noisy.text()
    assert versus("wall", [1.0, 1.1, 0.9, 1.0], [1.05, 0.95, 1.0, 1.1]).verdict == \
        "within noise"
    v = versus("wall", [2.0, 2.1, 1.9, 2.0], [1.0, 1.05, 0.95, 1.0])
    assert v.verdict == "faster" and v.speedup == pytest.approx(2.0)


def test_the_timeline_says_its_span_against_the_measured_call_and_why_they_differ(llama):
    forward = next(g for g in llama.graphs if g.kind == "forward")
    data = timeline(forward)
    end = max(k["end"] for k in data["kernels"])
    note = data["note"]
    assert note.startswith(f"span {end:.3f} ms; the call measures ")
    assert f"{forward.timing.compiled_wall_ms:.3f} ms wall" in note
    assert f"{forward.timing.compiled_device_ms:.3f} ms on the device" in note
    assert "the profiler slows the CPU side" in note  # the span is far from the wall time
    # where the two agree, no reason is given
    quiet = clock_note(forward.timing, "launch", forward.timing.compiled_wall_ms)
    assert quiet.endswith("on the device")



def test_a_module_map_is_made_once_per_trace_and_let_go_with_it(monkeypatch):
    import gc
    import weakref

    from fusionviz.model.report import eager_map

    calls = []
    make = eager_map._module_map
    monkeypatch.setattr(eager_map, "_module_map",
                        lambda t, e, side: calls.append(side) or make(t, e, side))
    trace = load_trace(str(DATA / "gpu_llama_hf_train.json.gz"))
    (entry,) = trace.entries
    forward = module_map(trace, entry, "forward")
    assert module_map(trace, entry, "forward") is forward  # the eager pane, the tint
    assert module_map(trace, entry, "backward") is not forward and len(calls) == 2
    other = load_trace(str(DATA / "gpu_llama_hf_train.json.gz"))
    assert module_map(other, other.entries[0], "forward") is not forward
    assert module_map(trace, entry, "forward") is forward and len(calls) == 3  # both kept
    gone = weakref.ref(trace)
    del trace, entry, forward
    gc.collect()
    assert gone() is None  # a closed trace is not kept alive by its maps
