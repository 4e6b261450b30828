"""Readable names on a real GPT-2 train step recorded on an H100."""

from __future__ import annotations

from pathlib import Path

from fusionviz.model.names import Names, common_module, extern_op, main_ops
from fusionviz.model.report.ledger_table import ledger_rows
from fusionviz.model.report.summary import graph_lines
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"
FORWARD, BACKWARD = load_trace(DATA / "gpu_gpt2_train.json.gz").graphs


def test_a_node_is_named_by_its_main_op_and_module():
    names = Names(FORWARD)
    ln = next(n for n in FORWARD.nodes if n.module == "blocks.1.ln2" and n.ops == ("var_mean",))
    assert names.label(ln.name) == f"{ln.name} · var_mean · blocks.1.ln2"
    sdpa = next(n for n in FORWARD.nodes if n.extern_kernel.startswith("torch.ops.aten._scaled"))
    assert main_ops(sdpa) == ("_scaled_dot_product_cudnn_attention",)
    assert names.about(sdpa.name).endswith(f" · {sdpa.module}") and sdpa.module


def test_a_fusion_across_layers_is_named_with_a_wildcard_layer():
    names = Names(FORWARD)
    qkv = [k for k in FORWARD.kernels if len(k.nodes) == 12
           and {FORWARD.nodes[0].name} != set(k.nodes)
           and names.about(k.nodes) == "blocks.*.attn.qkv"]
    assert qkv, "the per-layer weight casts of the qkv projection are one kernel"
    assert common_module(["h.0.attn", "h.11.attn"]) == "h.*.attn"
    assert common_module(["h.0.attn", "h.1.mlp"]) == "h"
    assert common_module(["", "lm_head"]) == "lm_head"


def test_extern_calls_are_named_by_their_op():
    assert extern_op("extern_kernels.addmm") == "addmm"
    assert extern_op("aten.randint.low_out") == "randint"
    assert extern_op("torch.ops.aten.sort.stable") == "sort"


def test_ledger_rows_and_the_summary_carry_readable_names_and_keep_the_raw_ones():
    names = Names(BACKWARD)
    rows = ledger_rows(BACKWARD.rounds[0], names)
    assert all(isinstance(r["a"], tuple) for r in rows)  # raw names: search and export
    described = [r for r in rows if "blocks." in r["a_is"]]
    assert len(described) > 0.5 * len(rows)
    assert any("blocks.*" in line for line in graph_lines(FORWARD))


def test_template_nodes_are_named_by_their_template_and_epilogue():
    """max-autotune's Triton templates (H200 trace): ``mm template, add``, never the
    ``repr`` of the lowering pattern an op name was once cut from."""
    trace = load_trace(DATA / "gpu_mlp_block_autotune.json.gz")
    labels = [Names(g).about(n.name) for g in trace.graphs for n in g.nodes
              if n.category == "template"]
    assert "mm template" in labels and "addmm template" in labels
    assert "mm template, add" in labels  # a template with its fused epilogue
    assert all(label.endswith("template") or "template, " in label for label in labels)
    assert not any("{" in label or "[" in label or "(" in label for label in labels)
