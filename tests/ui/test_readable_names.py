"""Readable names (main ops · module) in the why-not answer, Details and the kernel
pane, on a real GPT-2 train step (H100)."""

from __future__ import annotations

from pathlib import Path

from fusionviz.model.names import Names
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.details_pane import DetailsPane
from fusionviz.ui.kernel.pane import KernelPane
from fusionviz.ui.ledger.why_not import WhyNotDialog
from fusionviz.ui.view_state import ViewState

TRACE = load_trace(Path(__file__).resolve().parents[1] / "data" / "gpu_gpt2_train.json.gz")
FORWARD = TRACE.graphs[0]


def test_why_not_names_both_nodes_by_ops_and_module(qtbot):
    a = next(n.name for n in FORWARD.nodes if n.module == "blocks.2.ln2" and n.ops == ("var_mean",))
    b = next(n.name for n in FORWARD.nodes if n.module == "blocks.2.mlp.fc")
    dialog = WhyNotDialog(FORWARD, a, b)
    qtbot.addWidget(dialog)
    text = dialog.text.toPlainText()
    assert f"{a} · var_mean · blocks.2.ln2" in text and f"{b} · blocks.2.mlp.fc" in text


def test_details_and_kernel_pane_say_what_and_where(qtbot):
    state = ViewState()
    details, kernels = DetailsPane(state), KernelPane(state)
    qtbot.addWidget(details)
    qtbot.addWidget(kernels)
    state.set_trace(TRACE)
    node = next(n for n in FORWARD.nodes if n.module == "blocks.4.attn")
    state.select_nodes((node.name,))
    assert Names(FORWARD).about(node.name) in details.text()
    qkv = next(k for k in FORWARD.kernels if Names(FORWARD).about(k.nodes) == "blocks.*.attn.qkv")
    state.select_kernel(qkv.name)
    assert "blocks.*.attn.qkv" in kernels.views[0].facts.text()
