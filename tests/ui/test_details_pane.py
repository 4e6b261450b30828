"""DetailsPane: reads/writes, FX origins with source lines, kernel links of selected nodes."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QUrl

from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Access, Edge, Graph, Kernel, Node, Origin, Trace
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.details_pane import MAX_NODES, DetailsPane
from fusionviz.ui.view_state import ViewState

LAYER_NORM = Node(
    name="op1",
    type="SchedulerNode",
    category="reduction",
    numel="8192",
    rnumel="512",
    ops=("var_mean",),
    reads=(Access("buf0", 2_097_152),),
    writes=(Access("buf1", 65_536), Access("buf2", 65_536, dep="StarDep")),
    origins=(Origin("var_mean", "aten.var_mean.correction", "/home/u/model.py", 42,
                    "        mu, var = torch.var_mean(h, dim=-1)"),),
    bytes=2_228_224,
    module="h.3.ln_1",
    module_class="LayerNorm",
)
MM = Node(name="op0", type="ExternKernelSchedulerNode", category="extern",
          writes=(Access("buf0", 2_097_152),), extern_kernel="extern_kernels.mm")
KERNEL = Kernel(name="triton_red_fused_var_mean_0", kind="red", backend="triton",
                nodes=("op1",), source="@triton.jit\ndef triton_red_fused_var_mean_0(): pass")


@pytest.fixture
def pane(qtbot):
    state = ViewState()
    graph = Graph(index=0, nodes=(MM, LAYER_NORM), edges=(Edge("op0", "op1", "buf0"),),
                  kernels=(Kernel("extern_kernels.mm", "extern", "extern", nodes=("op0",)), KERNEL))
    state.set_trace(Trace(graphs=(graph,)))
    widget = DetailsPane(state)
    qtbot.addWidget(widget)
    widget.resize(500, 700)
    return widget


def test_lists_reads_writes_origins_and_kernel_of_a_node(pane):
    pane._state.select_nodes(("op1",))
    text = pane.text()
    for expected in ("op1", "SchedulerNode", "reduction", "8,192", "512", "var_mean",
                     "buf0", "2.0 MiB", "buf1", "64.0 KiB", "buf2", "StarDep",
                     "aten.var_mean.correction", "/home/u/model.py:42",
                     "mu, var = torch.var_mean(h, dim=-1)", "triton_red_fused_var_mean_0",
                     "producers"):
        assert expected in text, expected
    assert text.index("Reads") < text.index("buf0") < text.index("Writes") < text.index("buf1")


def test_a_node_shows_the_module_it_comes_from_or_that_none_was_recorded(pane):
    pane._state.select_nodes(("op1",))
    assert "module h.3.ln_1 (LayerNorm)" in " ".join(pane.text().split())
    pane._state.select_nodes(("op0",))
    assert "module not recorded" in " ".join(pane.text().split())


def test_extern_node_names_its_extern_kernel(pane):
    pane._state.select_nodes(("op0",))
    assert "extern_kernels.mm" in pane.text()
    assert "consumers" in pane.text()


def test_kernel_link_selects_the_kernel(pane, qtbot):
    pane._state.select_nodes(("op1",))
    assert "href='kernel:triton_red_fused_var_mean_0'" in pane.browser.toHtml().replace('"', "'")
    with qtbot.waitSignal(pane._state.sig_kernel_changed):
        pane.browser.anchorClicked.emit(QUrl("kernel:triton_red_fused_var_mean_0"))
    assert pane._state.kernel == "triton_red_fused_var_mean_0"


def test_node_link_selects_that_node(pane):
    pane._state.select_nodes(("op1",))
    pane.browser.anchorClicked.emit(QUrl("node:op0"))
    assert pane._state.selected_nodes == ("op0",)
    assert "ExternKernelSchedulerNode" in pane.text()


def test_empty_unknown_and_many_selections(pane):
    assert "Select a node" in pane.text()
    pane._state.select_nodes(("op9",))
    assert "No node named op9" in pane.text()
    big = synthetic_trace(MAX_NODES + 10, seed=2)
    pane._state.set_trace(big)
    pane._state.select_nodes(tuple(n.name for n in big.graphs[0].nodes))
    assert "and 10 more" in pane.text()


def test_every_node_of_recorded_traces_shows_its_origins_and_buffers(qtbot, any_trace_path):
    """Each recorded trace in tests/data (see conftest), and a synthetic one."""
    state = ViewState()
    state.set_trace(load_trace(any_trace_path, strict=True))
    widget = DetailsPane(state)
    qtbot.addWidget(widget)
    for index, graph in enumerate(state.trace.graphs):
        state.set_graph(index)
        for node in graph.nodes:
            state.select_nodes((node.name,))
            text = widget.text()
            assert all(a.buffer in text for a in node.reads + node.writes), node.name
            assert all(o.target in text for o in node.origins), node.name


def test_opening_a_graph_indexes_nothing_until_a_node_is_selected(qtbot, monkeypatch):
    import fusionviz.ui.details_pane as details_pane

    calls = []
    monkeypatch.setattr(details_pane, "node_index",
                        lambda g, f=details_pane.node_index: calls.append(g) or f(g))
    state = ViewState()
    widget = DetailsPane(state)
    qtbot.addWidget(widget)
    trace = synthetic_trace(500, seed=3)
    state.set_trace(trace)
    assert calls == [] and "Select a node" in widget.text()
    graph = trace.graphs[0]
    state.select_nodes((graph.nodes[10].name,))
    state.select_nodes((graph.nodes[11].name,))
    assert calls == [graph] and graph.nodes[11].name in widget.text()


def test_a_collective_and_its_wait_show_what_the_collective_took(qtbot):
    """Two ranks sharing an H100 over gloo: the all-reduce's time is from its issue to
    the end of its wait (gloo's device work is only host copies)."""
    state = ViewState()
    state.set_trace(load_trace(Path(__file__).parents[1] / "data" / "ranks"
                               / "gpu_ranks_allreduce" / "rank0.json.gz"))
    widget = DetailsPane(state)
    qtbot.addWidget(widget)
    (t,) = collective_times(state.graph)
    for name in ("op1", "op2"):  # the all_reduce and its wait_tensor
        state.select_nodes((name,))
        text = widget.text()
        assert ("all_reduce (sum) over group 0 of 2 ranks (gloo), 32.0 KiB" if name == "op1"
                else "wait_tensor") in text
        assert f"{t.span_ms:.3f} ms from issue to the end of its wait" in text
        assert "on the device" not in text
        assert ("waits for\nop1 (all_reduce)" in text) == (name == "op2"), text
    state.select_nodes(("op0",))
    assert "from issue to the end" not in widget.text()
