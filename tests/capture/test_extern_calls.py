"""Extern calls recorded on a real CPU compile (tests/data/scripts/extern_ops.py): each
tensor's dtype, size and stride, the op and its arguments, the FLOPs they give against
the model's own layer sizes, the fp32 matmul settings as the script set them, and the
fp32 flag of a Linear that autocast's disabled region left in float32."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch._inductor.utils import fresh_inductor_cache  # noqa: E402

from fusionviz.model.capture.inprocess import capturing  # noqa: E402
from fusionviz.model.report.extern_facts import extern_facts, op_flops  # noqa: E402
from fusionviz.model.tracefile.io import load_trace  # noqa: E402

pytestmark = pytest.mark.torch

SCRIPT = runpy.run_path(str(Path(__file__).parents[1] / "data" / "scripts" / "extern_ops.py"),
                        run_name="extern_ops")


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    """(trace, the Ops model, the Mixed model): both compiled with TF32 asked for."""
    path = tmp_path_factory.mktemp("extern") / "extern.json.gz"
    torch.manual_seed(0)
    ops, mixed, args = SCRIPT["Ops"](), SCRIPT["Mixed"](), SCRIPT["inputs"]()
    before = torch.get_float32_matmul_precision()
    torch._dynamo.reset()
    try:
        with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
                capturing(str(path)), torch.no_grad():
            torch.set_float32_matmul_precision("high")  # after the recorder started
            torch.compile(ops)(*args)
            torch.compile(mixed)(args[0])
    finally:
        torch.set_float32_matmul_precision(before)
        torch._dynamo.reset()
    return load_trace(path), ops, mixed


def _call(graph, op: str, module: str):
    (node,) = [n for n in graph.nodes if n.extern_call is not None
               and n.extern_call.op == op and n.module == module]
    return node.extern_call


def test_matmuls_record_dtype_shape_and_flops_of_their_layers(captured):
    trace, ops, _ = captured
    graph = trace.graphs[0]
    tokens, k, n = SCRIPT["TOKENS"], ops.proj.in_features, ops.proj.out_features
    addmm = _call(graph, "aten.addmm", "proj")
    assert [(s.name, s.dtype, s.size) for s in addmm.inputs] == [
        ("self", "float32", (n,)), ("mat1", "float32", (tokens, k)),
        ("mat2", "float32", (k, n))]
    assert addmm.inputs[2].stride == (1, k)  # the weight, transposed in place
    assert [(s.dtype, s.size, s.stride) for s in addmm.outputs] == [
        ("float32", (tokens, n), (n, 1))]
    assert addmm.args == {"alpha": 1, "beta": 1} and not addmm.note
    assert op_flops(addmm) == (2 * tokens * n * k + tokens * n, "2·M·N·K + M·N")
    mm = _call(graph, "aten.mm", "mix")
    m_out = ops.mix.out_features
    assert [s.size for s in mm.inputs] == [(tokens, n), (n, m_out)]
    assert op_flops(mm)[0] == 2 * tokens * m_out * n


def test_convolutions_record_their_arguments_and_flops(captured):
    trace, ops, _ = captured
    graph = trace.graphs[0]
    batch, (cin, h, w) = SCRIPT["BATCH"], SCRIPT["IMAGE"]
    conv = _call(graph, "aten.convolution", "conv")
    (kh, kw), (sh, sw), (ph, pw) = ops.conv.kernel_size, ops.conv.stride, ops.conv.padding
    cout = ops.conv.out_channels
    ho, wo = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    assert [(s.name, s.size) for s in conv.inputs] == [
        ("input", (batch, cin, h, w)), ("weight", (cout, cin, kh, kw)), ("bias", (cout,))]
    assert conv.outputs[0].size == (batch, cout, ho, wo)
    assert conv.args == {"stride": [sh, sw], "padding": [ph, pw], "dilation": [1, 1],
                         "transposed": False, "output_padding": [0, 0], "groups": 1}
    assert op_flops(conv)[0] == 2 * batch * cout * ho * wo * cin * kh * kw
    up = _call(graph, "aten.convolution", "up")
    groups, (k2, _) = ops.up.groups, ops.up.kernel_size
    assert up.args["transposed"] is True and up.args["groups"] == groups
    # transposed: every input pixel meets each of the group's outputs, k×k times
    assert op_flops(up)[0] == (2 * batch * cout * ho * wo * (ops.up.out_channels // groups)
                               * k2 * k2)


def test_causal_attention_counts_half(captured):
    trace, _, _ = captured
    (node,) = [n for n in trace.graphs[0].nodes if n.extern_call is not None
               and "scaled_dot_product" in n.extern_call.op]
    call = node.extern_call
    b, heads, seq, dim = SCRIPT["BATCH"], SCRIPT["HEADS"], SCRIPT["SEQ"], SCRIPT["HEAD_DIM"]
    assert [s.name for s in call.inputs] == ["query", "key", "value"]
    assert call.args["is_causal"] is True
    assert op_flops(call)[0] == 4 * b * heads * seq * seq * dim / 2


def test_settings_are_read_as_the_graph_compiles(captured):
    trace, _, _ = captured
    assert trace.env["float32_matmul_precision"] == "high"
    assert trace.env["cuda_matmul_allow_tf32"] is True  # what "high" means
    assert isinstance(trace.env["cudnn_allow_tf32"], bool)


def test_a_linear_left_in_float32_under_autocast_is_flagged(captured):
    trace, _, mixed = captured
    graph = trace.graphs[1]
    dtypes = {n.module: n.extern_call.inputs[1].dtype for n in graph.nodes
              if n.extern_call is not None}
    assert dtypes == {"up": "bfloat16", "down": "bfloat16", "gate": "float32"}
    flagged = {name: f.fp32_warning for name, f in extern_facts(graph, trace.env).items()
               if f.fp32_warning}
    (warning,) = flagged.values()
    gate = _call(graph, "aten.addmm", "gate")
    assert [s.size for s in gate.inputs[1:]] == [
        (SCRIPT["TOKENS"], mixed.gate.in_features),
        (mixed.gate.in_features, mixed.gate.out_features)]
    assert "aten.addmm runs in float32" in warning and "bfloat16 elsewhere" in warning
    assert "gate (Linear)" in warning and "self.gate(h.float())" in warning
    assert not any(f.fp32_warning for f in extern_facts(trace.graphs[0], trace.env).values())


def test_symbolic_sizes_keep_their_expression_and_the_compiles_value(tmp_path):
    path = tmp_path / "dynamic.json.gz"
    torch._dynamo.reset()
    try:
        with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
                capturing(str(path)):
            torch.compile(torch.mm, dynamic=True)(torch.randn(7, 8), torch.randn(8, 3))
    finally:
        torch._dynamo.reset()
    (graph,) = load_trace(path).graphs
    (call,) = [n.extern_call for n in graph.nodes if n.extern_call is not None]
    a, b = call.inputs
    assert (a.size, b.size) == ((7, 8), (8, 3))  # the hints: what this compile ran with
    assert a.size_expr and all(not x.isdigit() for x in a.size_expr)  # s0, s1: symbols
    assert a.size_expr[1] == b.size_expr[0]  # the shared K is one symbol
    assert op_flops(call)[0] == 2 * 7 * 3 * 8
