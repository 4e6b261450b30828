"""KernelPane: selected kernel's facts and highlighted source, selector, side by side, find."""

from __future__ import annotations

import dataclasses

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QKeySequence, QShortcut, QTextDocument

from fusionviz.model.palette import kernel_colors
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Access, Graph, Kernel, Node, Timing, Trace
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.kernel.code_view import THEME, CodeView
from fusionviz.ui.kernel.pane import SIDE_BY_SIDE_SHORTCUT, KernelPane
from fusionviz.ui.theme import dark_palette
from fusionviz.ui.view_state import ViewState

CPP_KERNEL = Kernel(
    name="cpp_fused_add_relu_0",
    kind="cpp",
    backend="cpp",
    nodes=("op0", "op1"),
    groups=(("op0", "op1"),),
    source='#include <torch/csrc/inductor/cpp_prefix.h>\n'
           'extern "C"  void kernel(const float* in_ptr0, float* out_ptr0)\n{\n'
           '    for(int64_t x0=static_cast<int64_t>(0L); x0<static_cast<int64_t>(1024L); x0+=1)\n'
           '    {\n        out_ptr0[x0] = std::max(in_ptr0[x0] + 1.0f, 0.0f);\n    }\n}\n',
    bytes=2_000_000,
    ms=0.5,
    calls=1,
)
MM_KERNEL = Kernel(name="extern_kernels.mm", kind="extern", backend="extern", nodes=("op2",),
                   source="extern_kernels.mm(buf1, arg2_1, out=buf2)", ms=0.25, calls=1)


def cpu_trace() -> Trace:
    """relu(x + 1) @ w on CPU: one C++ kernel of two nodes, then an extern matmul."""
    buf = Access("buf1", 4096)
    nodes = (Node("op0", "SchedulerNode", "pointwise", numel="1024", writes=(Access("buf0", 4096),)),
             Node("op1", "SchedulerNode", "pointwise", numel="1024", writes=(buf,)),
             Node("op2", "ExternKernelSchedulerNode", "extern", reads=(buf,),
                  extern_kernel="extern_kernels.mm"))
    graph = Graph(index=0, device="cpu", backend="cpp", nodes=nodes,
                  kernels=(CPP_KERNEL, MM_KERNEL))
    return Trace(graphs=(graph,))


@pytest.fixture
def pane(qtbot):
    state = ViewState()
    state.set_trace(cpu_trace())
    widget = KernelPane(state)
    qtbot.addWidget(widget)
    widget.resize(900, 500)
    return widget


def facts_text(pane: KernelPane, side: int = 0) -> str:
    """The facts line as the user reads it (rich text rendered, no-break spaces as spaces)."""
    doc = QTextDocument()
    doc.setHtml(pane.views[side].facts.text())
    return doc.toPlainText().replace("\xa0", " ")


def test_selecting_a_kernel_shows_its_exact_source_facts_and_color(pane):
    pane._state.select_kernel("cpp_fused_add_relu_0")
    view = pane.views[0]
    assert view.code.source() == CPP_KERNEL.source
    assert "cpp_fused_add_relu_0" in view.title.text()
    facts = facts_text(pane)
    for expected in ("kind cpp", "est. bytes 1.9 MiB", "wall time 0.5 ms per graph call",
                     "bandwidth 4 GB/s", "nodes (2) op0, op1"):
        assert expected in facts
    assert kernel_colors((CPP_KERNEL, MM_KERNEL))["cpp_fused_add_relu_0"] in view.swatch.styleSheet()
    assert pane.combos[0].currentText() == "cpp_fused_add_relu_0"


def test_a_profiled_gpu_kernel_shows_device_time_launches_and_the_share_of_peak(qtbot):
    kernel = dataclasses.replace(CPP_KERNEL, name="triton_poi_fused_0", kind="poi",
                                 backend="triton", ms=0.5, calls=2, ms_spread=(0.24, 0.26))
    trace = cpu_trace()
    graph = dataclasses.replace(trace.graphs[0], device="cuda", backend="triton",
                                kernels=(kernel,), timing=Timing(compiled_ms=1.0, profiled_calls=3))
    state = ViewState()
    state.set_trace(dataclasses.replace(trace, graphs=(graph,), env={"peak_dram_gb_s": 3350.0}))
    widget = KernelPane(state)
    qtbot.addWidget(widget)
    state.select_kernel("triton_poi_fused_0")
    facts = facts_text(widget)
    assert ("device time 0.5 ms per graph call  ·  launches 2 × 0.25 ms  ·  one launch "
            "0.24–0.26 ms") in facts
    assert "bandwidth 8 GB/s (0% of peak 3,350 GB/s)" in facts  # one launch's bytes, time


def test_choosing_in_the_selector_writes_the_kernel_to_the_state(pane, qtbot):
    combo = pane.combos[0]
    index = combo.findText("extern_kernels.mm")
    with qtbot.waitSignal(pane._state.sig_kernel_changed) as blocker:
        combo.setCurrentIndex(index)
        combo.activated.emit(index)
    assert blocker.args == ["extern_kernels.mm"]
    assert pane.views[0].code.source() == MM_KERNEL.source


def test_selecting_a_node_shows_the_kernel_it_ends_up_in(pane):
    pane._state.select_nodes(("op2",))
    assert pane.shown_kernels() == ("extern_kernels.mm",)
    pane._state.select_nodes(("op1",))
    assert pane.shown_kernels() == ("cpp_fused_add_relu_0",)


def test_side_by_side_shows_two_kernels_and_their_sources(pane):
    pane._state.select_kernel("cpp_fused_add_relu_0")
    assert pane.shown_kernels() == ("cpp_fused_add_relu_0",)
    pane.side_button.click()
    assert pane.views[1].isVisibleTo(pane)
    assert pane.shown_kernels() == ("cpp_fused_add_relu_0", "extern_kernels.mm")
    assert pane.views[1].code.source() == MM_KERNEL.source
    pane.side_button.click()
    assert not pane.views[1].isVisibleTo(pane)
    assert pane.shown_kernels() == ("cpp_fused_add_relu_0",)


def test_selecting_nodes_of_two_kernels_fills_both_sides(pane):
    pane.set_side_by_side(True)
    pane._state.select_nodes(("op2", "op0", "op1"))
    assert pane.shown_kernels() == ("extern_kernels.mm", "cpp_fused_add_relu_0")


def test_highlighter_paints_the_precomputed_spans(pane):
    pane._state.select_kernel("cpp_fused_add_relu_0")
    block = pane.views[0].code.document().findBlockByNumber(1)  # extern "C"  void kernel(...)
    ranges = {(r.start, r.length): r.format.foreground().color() for r in block.layout().formats()}
    assert ranges[(0, 6)] == QColor(THEME["keyword"][0])  # extern
    assert ranges[(12, 4)] == QColor(THEME["type"][0])  # void


def test_spans_after_astral_characters_land_on_the_right_utf16_columns(qtbot):
    view = CodeView()
    qtbot.addWidget(view)
    view.set_source('s = "🙂"; return s', "python")  # the emoji is 2 UTF-16 units
    ranges = {(r.start, r.length): r.format.foreground().color()
              for r in view.document().firstBlock().layout().formats()}
    assert ranges[(4, 4)] == QColor(THEME["string"][0])
    assert ranges[(10, 6)] == QColor(THEME["keyword"][0])


def test_dark_palette_switches_the_code_colors(pane):
    pane._state.select_kernel("cpp_fused_add_relu_0")
    code = pane.views[0].code
    code.setPalette(dark_palette())
    block = code.document().findBlockByNumber(1)
    colors = {r.start: r.format.foreground().color() for r in block.layout().formats()}
    assert colors[0] == QColor(THEME["keyword"][1])


def test_find_in_source_selects_matches_and_wraps(pane):
    pane._state.select_kernel("cpp_fused_add_relu_0")
    pane.find_bar.open()
    pane.find_bar.edit.setText("static_cast")
    assert pane.find_bar.find()
    first = pane.views[0].code.textCursor().selectionStart()
    assert pane.views[0].code.textCursor().selectedText() == "static_cast"
    assert pane.find_bar.find()  # the second of the two matches
    assert pane.views[0].code.textCursor().selectionStart() > first
    assert pane.find_bar.find()  # wraps around to the first
    assert pane.views[0].code.textCursor().selectionStart() == first
    pane.find_bar.edit.setText("no such text")
    assert not pane.find_bar.find()


def test_a_new_graph_refills_the_selector_with_its_kernels(pane):
    trace = synthetic_trace(40, seed=1)
    pane._state.set_trace(trace)
    names = list(dict.fromkeys(k.name for k in trace.graphs[0].kernels))
    assert [pane.combos[0].itemText(i) for i in range(pane.combos[0].count())] == names
    assert pane.shown_kernels() == (names[0],)


def test_unknown_kernel_and_empty_state_clear_the_view(qtbot):
    state = ViewState()
    widget = KernelPane(state)
    qtbot.addWidget(widget)
    assert widget.shown_kernels() == ()
    assert "No trace loaded" in widget.views[0].title.text()
    state.set_trace(cpu_trace())
    widget.show_kernel("triton_poi_missing_9")
    assert widget.shown_kernels() == ()
    assert widget.views[0].code.source() == ""


def test_every_kernel_of_recorded_traces_shows_its_source_and_facts(qtbot, any_trace_path):
    """Each recorded trace in tests/data (see conftest), and a synthetic one."""
    state = ViewState()
    state.set_trace(load_trace(any_trace_path, strict=True))
    widget = KernelPane(state)
    qtbot.addWidget(widget)
    for index, graph in enumerate(state.trace.graphs):
        state.set_graph(index)
        for kernel in {k.name: k for k in reversed(graph.kernels)}.values():
            state.select_kernel(kernel.name)
            assert widget.views[0].code.source() == (kernel.source or kernel.name)
            facts = facts_text(widget)
            assert f"backend {kernel.backend}" in facts and f"nodes ({len(kernel.nodes)})" in facts
            if kernel.n_regs is not None:
                assert f"regs {kernel.n_regs}" in facts and f"spills {kernel.n_spills}" in facts
            for key, value in kernel.launch.items():
                assert f"{key}={value}" in facts



def shortcut(pane: KernelPane, keys: QKeySequence) -> QShortcut:
    """The pane's shortcut bound to ``keys`` (activated directly: offscreen has no key focus)."""
    (match,) = [sc for sc in pane.findChildren(QShortcut) if sc.key() == keys]
    assert match.context() == Qt.ShortcutContext.WidgetWithChildrenShortcut
    return match


def test_keyboard_shortcuts_open_find_and_toggle_side_by_side(pane):
    shortcut(pane, QKeySequence(QKeySequence.StandardKey.Find)).activated.emit()
    assert pane.find_bar.isVisibleTo(pane)
    shortcut(pane, QKeySequence(Qt.Key.Key_Escape)).activated.emit()
    assert not pane.find_bar.isVisibleTo(pane)
    shortcut(pane, QKeySequence(SIDE_BY_SIDE_SHORTCUT)).activated.emit()
    assert pane.side_button.isChecked() and len(pane.shown_kernels()) == 2


def test_both_selectors_read_one_model_and_nodes_are_indexed_only_when_selected(qtbot, monkeypatch):
    import fusionviz.ui.kernel.pane as kernel_pane

    calls = []
    monkeypatch.setattr(kernel_pane, "kernel_of_node",
                        lambda g, f=kernel_pane.kernel_of_node: calls.append(g) or f(g))
    state = ViewState()
    widget = KernelPane(state)
    qtbot.addWidget(widget)
    trace = synthetic_trace(300, seed=2)
    state.set_trace(trace)
    graph = trace.graphs[0]
    names = list(dict.fromkeys(k.name for k in graph.kernels))
    assert widget.combos[0].model() is widget.combos[1].model()
    assert widget.combos[1].count() == len(names) and calls == []
    colors = kernel_colors(graph.kernels)
    icon = widget.combos[0].itemIcon(3).pixmap(12, 12).toImage()
    assert icon.pixelColor(6, 6) == QColor(colors[names[3]])
    kernel = graph.kernels[7]
    state.select_nodes((kernel.nodes[0],))
    assert widget.shown_kernels() == (kernel.name,) and calls == [graph]
    assert widget.combos[0].currentText() == kernel.name
    state.select_nodes((graph.kernels[2].nodes[0],))
    assert len(calls) == 1  # one index per graph
