"""Extern kernels' facts on real recorded traces: FLOPs of each op against hand counts
of its recorded sizes, achieved rate and bytes from the kernel's time, the GPU peak
for the math it runs, the fp32 flag, the by-op groups, the query JSON; and what older
traces, recorded before extern calls were, say instead.

``cpu_extern_ops.json.gz``: tests/data/scripts/extern_ops.py captured on the CPU (graph
0: addmm, mm, bmm, baddbmm, two convolutions, causal attention in float32; graph 1: a
bfloat16 autocast model with one Linear left in float32)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from fusionviz.model.report.extern_facts import (
    FP32_LABEL,
    NOT_RECORDED,
    extern_facts,
    facts_lines,
    op_flops,
    tensor_bytes,
)
from fusionviz.model.report.gpu_peaks import RATES, gpu_peaks, rate_of
from fusionviz.model.report.kernel_table import kernel_rows, op_groups
from fusionviz.model.report.query import kernel_json
from fusionviz.model.trace import TensorSpec
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.validate import graph_problems

DATA = Path(__file__).parents[1] / "data"
TRACE = load_trace(DATA / "cpu_extern_ops.json.gz", strict=True)
OPS, MIXED = TRACE.graphs
GPT2 = load_trace(DATA / "gpu_gpt2_train.json.gz")
BERT_OLD = load_trace(DATA / "gpu_bert_fp16_infer.json.gz")
GPU = sorted(DATA.glob("gpu_*.json.gz"))
H100 = "NVIDIA H100 80GB HBM3"


def _node(graph, op: str, module: str):
    (node,) = [n for n in graph.nodes if n.extern_call is not None
               and n.extern_call.op == op and n.module == module]
    return node


def _kernel(graph, node):
    return next(k for k in graph.kernels if node.name in k.nodes)


CASES = [  # (op, module, recorded input sizes, FLOPs counted by hand from them)
    ("aten.addmm", "proj", [(96,), (32, 64), (64, 96)], 2 * 32 * 96 * 64 + 32 * 96),
    ("aten.mm", "mix", [(32, 96), (96, 48)], 2 * 32 * 48 * 96),
    ("aten.bmm", "", [(4, 24, 40), (4, 40, 56)], 4 * 2 * 24 * 56 * 40),
    ("aten.baddbmm", "", [(4, 24, 56), (4, 24, 40), (4, 40, 56)],
     4 * (2 * 24 * 56 * 40 + 24 * 56)),
    # out 4×16×8×8: 2 · N · Cout · 8·8 · Cin · 3·3
    ("aten.convolution", "conv", [(4, 3, 16, 16), (16, 3, 3, 3), (16,)],
     2 * 4 * 16 * 8 * 8 * 3 * 3 * 3),
    # transposed, 2 groups: 2 · N · Cin · 8·8 (input) · Cout/2 · 2·2
    ("aten.convolution", "up", [(4, 16, 8, 8), (16, 4, 2, 2), (8,)],
     2 * 4 * 16 * 8 * 8 * 4 * 2 * 2),
    # causal: half of 4 · B · H · Lq · Lk · D
    ("aten._scaled_dot_product_flash_attention_for_cpu", "", [(4, 4, 64, 32)] * 3,
     4 * 4 * 4 * 64 * 64 * 32 // 2),
]


@pytest.mark.parametrize(("op", "module", "sizes", "flops"), CASES,
                         ids=[f"{c[0]}-{c[1]}" for c in CASES])
def test_flops_of_recorded_nodes(op, module, sizes, flops):
    call = _node(OPS, op, module).extern_call
    assert [s.size for s in call.inputs] == sizes
    assert op_flops(call)[0] == flops


def test_rate_and_bandwidth_come_from_the_kernels_time():
    facts = extern_facts(OPS, TRACE.env)
    rated = 0
    for k in OPS.kernels:
        f = facts.get(k.name)
        if f is None or f.flops is None:
            continue
        per_launch = k.ms / k.calls
        assert f.tflop_s == pytest.approx(f.flops / per_launch / 1e9)
        assert f.gb_s == pytest.approx(f.bytes / per_launch / 1e6)
        rated += 1
    assert rated == len(CASES)
    addmm = _node(OPS, "aten.addmm", "proj").extern_call
    assert tensor_bytes(addmm) == 4 * (96 + 32 * 64 + 64 * 96 + 32 * 96)  # float32
    # on the CPU: no peak, no math rate
    assert all(f.rate == "" and f.peak_tflop_s is None for f in facts.values())


def test_a_broadcast_tensor_is_counted_once():
    spec = TensorSpec(name="self", dtype="bfloat16", size=(32, 96), stride=(0, 1))
    call = dataclasses.replace(_node(OPS, "aten.addmm", "proj").extern_call,
                               inputs=(spec,), outputs=())
    assert tensor_bytes(call) == 2 * 96


@pytest.mark.parametrize(("name", "short", "bf16", "tf32", "fp32", "fp8"), [
    (H100, "H100 SXM", 989.5, 494.5, 67, 1979),
    ("NVIDIA H100 PCIe", "H100 PCIe", 756.5, 378, 51, 1513),
    ("NVIDIA H200", "H200 SXM", 989.5, 494.5, 67, 1979),
    ("NVIDIA A100-SXM4-80GB", "A100", 312, 156, 19.5, None),
    ("NVIDIA L40S", "L40S", 366.5, 183, 91.6, 733),
    ("NVIDIA L4", "L4", 121, 60, 30.3, 242.5),
])
def test_peak_lookup(name, short, bf16, tf32, fp32, fp8):
    gpu, peaks = gpu_peaks(name)
    assert gpu == short
    assert (peaks["bf16"], peaks["tf32"], peaks["fp32"], peaks.get("fp8")) == (
        bf16, tf32, fp32, fp8)


def test_unknown_devices_have_no_peak():
    assert gpu_peaks("NVIDIA A10G") == ("", {}) and gpu_peaks("x86_64") == ("", {})
    assert gpu_peaks("NVIDIA A10")[0] == "A10"


def test_float32_math_follows_the_recorded_settings():
    assert rate_of("float32", conv=False, env={"float32_matmul_precision": "highest",
                                               "cuda_matmul_allow_tf32": False}) == "fp32"
    assert rate_of("float32", conv=False, env={"float32_matmul_precision": "high"}) == "tf32"
    assert rate_of("float32", conv=True, env={"cudnn_allow_tf32": False}) == "fp32"
    assert rate_of("float32", conv=True, env={}) == "tf32"  # torch's default for cuDNN
    assert rate_of("bfloat16", conv=False, env={}) == "bf16"
    assert rate_of("float8_e4m3fn", conv=False, env={}) == "fp8"
    assert rate_of("int64", conv=False, env={}) == ""


def _on(graph, **settings):
    """``graph`` as if it had run on an H100 with these fp32 settings."""
    env = {**TRACE.env, "device_name": H100, **settings}
    return extern_facts(dataclasses.replace(graph, device="cuda"), env)


def test_the_peak_of_the_math_it_runs_applies_on_a_gpu():
    mm = _kernel(OPS, _node(OPS, "aten.mm", "mix")).name
    conv = _kernel(OPS, _node(OPS, "aten.convolution", "conv")).name
    highest = _on(OPS, float32_matmul_precision="highest", cuda_matmul_allow_tf32=False)
    assert (highest[mm].rate, highest[mm].peak_tflop_s, highest[mm].gpu) == ("fp32", 67,
                                                                             "H100 SXM")
    assert highest[mm].peak_share == pytest.approx(100 * highest[mm].tflop_s / 67)
    assert "% of the H100 SXM's fp32 (no tensor cores), 67 TFLOP/s)" in dict(
        facts_lines(highest[mm]))["achieved"]
    assert (highest[conv].rate, highest[conv].peak_tflop_s) == ("tf32", 494.5)
    high = _on(OPS, float32_matmul_precision="high", cuda_matmul_allow_tf32=True)
    assert (high[mm].rate, high[mm].peak_tflop_s) == ("tf32", 494.5)
    up = _kernel(MIXED, _node(MIXED, "aten.addmm", "up")).name
    assert _on(MIXED)[up].rate == "bf16" and _on(MIXED)[up].peak_tflop_s == 989.5


def test_only_the_float32_layer_of_a_bfloat16_graph_is_flagged():
    gate = _kernel(MIXED, _node(MIXED, "aten.addmm", "gate")).name
    facts = extern_facts(MIXED, TRACE.env)
    assert [name for name, f in facts.items() if f.fp32_warning] == [gate]
    warning = facts[gate].fp32_warning
    assert "bfloat16 elsewhere" in warning and "extern_ops.py:" in warning
    assert "in gate (Linear)" in warning and "TF32" not in warning  # the CPU has no TF32
    assert facts_lines(facts[gate])[-1] == (FP32_LABEL, warning)
    assert not any(f.fp32_warning for f in extern_facts(OPS, TRACE.env).values())
    # on a GPU with TF32 off, it says how to keep float32 on tensor cores
    gpu = _on(MIXED, float32_matmul_precision="highest", cuda_matmul_allow_tf32=False)
    assert "torch.set_float32_matmul_precision('high')" in gpu[gate].fp32_warning


def test_rows_and_groups_carry_the_facts():
    rows = {r["name"]: r for r in kernel_rows(MIXED, TRACE.env)}
    gate = _kernel(MIXED, _node(MIXED, "aten.addmm", "gate")).name
    assert rows[gate]["dtype"] == "fp32 ⚠" and rows[gate]["flag"]
    assert rows[gate]["op"] == "addmm 32×128×8 fp32"
    groups = op_groups(list(rows.values()))
    assert sum(g["kernels"] for g in groups) == len(MIXED.kernels)
    assert [g["ms"] for g in groups] == sorted((g["ms"] for g in groups), reverse=True)
    (flagged,) = [g for g in groups if g["flag"]]
    assert flagged["rows"] == [rows[gate]]


def test_older_traces_say_the_facts_were_not_recorded():
    forward = BERT_OLD.graphs[0]  # recorded before extern calls were
    facts = extern_facts(forward, BERT_OLD.env)
    externs = [k for k in forward.kernels if k.backend == "extern"]
    assert len(facts) == len(externs) == 85
    assert {f.note for f in facts.values()} == {NOT_RECORDED}
    assert facts_lines(next(iter(facts.values()))) == [("extern facts", NOT_RECORDED)]
    groups = {g["op"]: g for g in op_groups(kernel_rows(forward, BERT_OLD.env))}
    addmm = groups["addmm (shapes not recorded)"]
    names = [k for k in externs if k.name.startswith("extern_kernels.addmm")]
    assert addmm["kernels"] == len(names) == 73  # 6 Linears × 12 layers, and the pooler
    assert addmm["ms"] == pytest.approx(sum(k.ms for k in names))
    assert addmm["tflops"] is None and addmm["dtype"] == ""


def test_the_gpt2_h100_trace_groups_its_48_addmms_by_shape_with_their_rate():
    forward = GPT2.graphs[0]
    facts = extern_facts(forward, GPT2.env)
    assert len(facts) == 62 and all(f.op for f in facts.values())
    groups = op_groups(kernel_rows(forward, GPT2.env))
    addmms = [g for g in groups if g["op"].startswith("addmm")]
    # the four Linears with bias of a block, each shape once per layer
    assert sorted(g["kernels"] for g in addmms) == [12, 12, 12, 12]
    assert all(g["dtype"] == "bf16" and g["tflops"] > 0 for g in addmms)


def test_query_json_holds_the_facts():
    rows = {r["name"]: r for r in kernel_json(OPS, TRACE.env)}
    mm = rows[_kernel(OPS, _node(OPS, "aten.mm", "mix")).name]["extern"]
    assert mm["recorded"] and mm["op"] == "aten.mm" and mm["flops"] == 2 * 32 * 48 * 96
    assert mm["dtypes"] == ["float32"] and mm["tflop_s"] > 0
    assert all(r["extern"] is None for r in rows.values() if r["backend"] != "extern")
    old = next(r["extern"] for r in kernel_json(BERT_OLD.graphs[0], BERT_OLD.env)
               if r["extern"] is not None)
    assert old["recorded"] is False and old["note"] == NOT_RECORDED


def test_impossible_sizes_are_reported():
    node = _node(OPS, "aten.mm", "mix")
    bad = dataclasses.replace(node.extern_call, inputs=(
        TensorSpec(name="self", dtype="float32", size=(-3, 96), stride=(96, 1)),))
    graph = dataclasses.replace(OPS, nodes=tuple(
        dataclasses.replace(n, extern_call=bad) if n is node else n for n in OPS.nodes))
    assert any(f"{node.name} self size -3" in line for line in graph_problems(graph))


MATMULS = ("mm", "addmm", "bmm", "baddbmm", "convolution")


@pytest.mark.gpu_data
@pytest.mark.parametrize("path", GPU, ids=[p.name for p in GPU])
def test_gpu_matmuls_have_dtype_flops_and_rate(path):
    trace = load_trace(path)
    if not any(n.extern_call is not None for g in trace.graphs for n in g.nodes):
        pytest.skip(f"{path.name} was recorded before fusionviz recorded extern calls "
                    "(no dtypes, shapes or FLOPs): re-record it with "
                    "tests/data/record_gpu_traces.sh to turn this test on")
    _, peaks = gpu_peaks(trace.env["device_name"])
    assert peaks, trace.env["device_name"]
    checked = 0
    for g in trace.graphs:
        for name, f in extern_facts(g, trace.env).items():
            if f.op.rsplit(".", 1)[-1] not in MATMULS:
                continue
            assert f.dtypes and f.flops and f.flops > 0, (name, f)
            assert f.rate in RATES and f.peak_tflop_s == peaks[f.rate], (name, f)
            assert f.tflop_s and 0 < f.peak_share < 110, (name, f)
            checked += 1
    assert checked or not any(k.name.startswith("extern_kernels.") for g in trace.graphs
                              for k in g.kernels)


def test_an_h100_linear_left_in_float32_under_bf16_autocast_is_flagged():
    trace = load_trace(DATA / "gpu_extern_ops.json.gz")  # extern_ops.py on the H100
    mixed = trace.graphs[1]
    facts = {_node_of(mixed, name).module: f
             for name, f in extern_facts(mixed, trace.env).items()}
    assert facts["gate"].fp32_warning and facts["gate"].rate == "fp32"
    assert "bfloat16" in facts["gate"].fp32_warning
    assert not facts["up"].fp32_warning and facts["up"].rate == "bf16"
    assert not facts["down"].fp32_warning
    # the all-float32 graph has nothing to flag: no half precision anywhere in it
    assert not any(f.fp32_warning for f in extern_facts(trace.graphs[0], trace.env).values())


def test_the_traces_recorded_with_extern_calls_are_the_ones_the_gpu_test_covers():
    recorded = {p.name for p in GPU if any(n.extern_call is not None for g in
                                           load_trace(p).graphs for n in g.nodes)}
    assert {"gpu_gpt2_train.json.gz", "gpu_resnet50_train.json.gz",
            "gpu_extern_ops.json.gz"} <= recorded


def _node_of(graph, kernel_name: str):
    kernel = next(k for k in graph.kernels if k.name == kernel_name)
    return next(n for n in graph.nodes if n.name == kernel.nodes[0])


def test_the_facts_are_computed_once_per_graph_and_env_and_let_go_with_the_graph(monkeypatch):
    import gc
    import weakref

    from fusionviz.model.report import extern_facts as module

    calls = []
    compute = module._extern_facts
    monkeypatch.setattr(module, "_extern_facts",
                        lambda g, env, only=None: calls.append(g.index) or compute(g, env, only))
    trace = load_trace(DATA / "cpu_extern_ops.json.gz", strict=True)
    graph = trace.graphs[0]
    facts = extern_facts(graph, trace.env)
    assert facts and extern_facts(graph, trace.env) == facts and len(calls) == 1
    (name, *_) = facts
    assert extern_facts(graph, trace.env, only=(name,)) == {name: facts[name]}
    assert len(calls) == 1  # the kept facts serve a question about a few kernels
    extern_facts(graph, {**trace.env})  # another env: computed for it
    again = load_trace(DATA / "cpu_extern_ops.json.gz", strict=True)
    assert extern_facts(again.graphs[0], again.env) == facts and len(calls) == 3
    gone = weakref.ref(graph)
    del graph, trace
    gc.collect()
    assert gone() is None  # a closed trace is not kept alive by its facts


def test_shapes_say_how_a_tensor_is_laid_out_when_not_row_major():
    """Recorded strides: a Linear's weight is a transposed matrix, ResNet-50's
    convolutions run channels-last (H100), and the tiny Llama's compiled attention
    reads its query in the heads-transposed layout but key and value contiguous."""
    from fusionviz.model.report.extern_facts import shapes_text

    def calls(trace, op):
        return [n.extern_call for g in trace.graphs for n in g.nodes
                if n.extern_call and n.extern_call.op == op]

    llama = load_trace(DATA / "cpu_llama_tiny_train.json.gz")
    mm = shapes_text(calls(llama, "aten.mm")[0])
    assert mm == "[64, 64] fp32 × [64, 64] fp32 transposed → [64, 64] fp32", mm
    sdpa = shapes_text(calls(llama, "aten._scaled_dot_product_flash_attention_for_cpu")[0])
    q, k, v = sdpa.split(" → ")[0].split(" × ")
    assert q == "[2, 4, 32, 16] fp32 strides (2048, 16, 64, 1)"
    assert k == v == "[2, 4, 32, 16] fp32"
    resnet = load_trace(DATA / "gpu_resnet50_train.json.gz")
    conv = shapes_text(calls(resnet, "aten.convolution")[0])
    assert conv.count("channels-last") == 3, conv  # input, weight and output
    unknown = TensorSpec(name="x", dtype="float32", size=(4, 8))  # no strides recorded
    assert shapes_text(dataclasses.replace(calls(llama, "aten.mm")[0],
                                           inputs=(unknown,), outputs=())) == "[4, 8] fp32"
