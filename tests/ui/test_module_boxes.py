"""Module boxes in the graph view, on a real GPT-2 train step recorded on an H100."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QFont, QFontMetricsF

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.graph.decor import FramesItem, HubsItem, box_tooltip
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.view_state import ViewState

TRACE = load_trace(Path(__file__).resolve().parents[1] / "data" / "gpu_gpt2_train.json.gz")
RUN = "▣ blocks.0–11 ×12"


@pytest.fixture
def view(qtbot):
    v = GraphView(ViewState())
    qtbot.addWidget(v)
    v.resize(1000, 800)
    v.show()
    qtbot.waitExposed(v)
    v.state.set_trace(TRACE)
    return v


def click(view, qtbot, name: str) -> None:
    view.centerOn(view.node_scene_pos(name))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton,
                     pos=view.mapFromScene(view.node_scene_pos(name)))


def test_a_big_model_opens_with_its_repeated_blocks_folded_into_one_box(view):
    paint = view.paint_data
    assert len(paint.names) < len(TRACE.graphs[0].nodes) / 4
    (i,) = [i for i, n in enumerate(paint.names) if n == RUN]
    box, colors = paint.boxes[i]
    assert paint.category[i] == "module" and len(colors) > 3  # its kernels' colors
    title, sub = (t.text() for t in paint.label(i, QFontMetricsF(QFont())))
    assert title.startswith("blocks.0–11 ×12") and sub.startswith(f"{len(box.nodes)} nodes")
    assert box.title == "blocks.0–11 ×12" and box.module_class == "Block"
    tip = box_tooltip(box, "", view.kernel_of, view.folding.decisions(box))
    assert "blocks.0: 2 fewer nodes than blocks.1" in tip
    assert "the same in all 12 blocks" in tip


def test_stepping_says_what_fused_inside_a_box_and_marks_it_changed(view):
    steps = fusion_steps(TRACE.graphs[0])
    i = view.paint_data.index[RUN]
    notes, marked = [], []
    for k in range(len(steps)):
        view.state.set_step(k)
        notes.append(view.paint_data.box_note[i])
        marked.append(bool(view.paint_data.changed[i]))
    box = view.paint_data.boxes[i][0]
    kernels = len({k.name for k in TRACE.graphs[0].kernels if set(k.nodes) & set(box.nodes)})
    assert notes[0].endswith("none fused yet") and notes[-1].endswith(f", {kernels} kernels")
    assert marked[1]  # round 1 fused inside it


def test_clicking_a_box_unfolds_it_and_a_block_opens_in_a_titled_frame(view, qtbot):
    click(view, qtbot, RUN)
    boxes = {b.path for b, _ in view.paint_data.boxes.values()}
    assert boxes == {f"blocks.{k}" for k in range(12)}
    click(view, qtbot, "▣ blocks.3")
    assert "▣ blocks.3.attn" in view.paint_data.index
    frames = [it for it in view.scene().items() if isinstance(it, FramesItem)]
    assert [t for _, t in frames[0].frames] == ["blocks.3 (Block)"]
    # C on a node inside the frame collapses its module again, then the next one out
    attn_node = next(n.name for n in TRACE.graphs[0].nodes if n.module == "blocks.3.attn.qkv")
    view.expand_box("▣ blocks.3.attn")  # opens into its children, collapsed
    view.expand_box("▣ blocks.3.attn.qkv")
    assert attn_node in view.paint_data.index
    view.click_node(attn_node)
    assert view.collapse_selected_module() and "▣ blocks.3.attn.qkv" in view.paint_data.index
    assert view.collapse_selected_module() and "▣ blocks.3.attn" in view.paint_data.index
    # the selection, inside a box, is ringed on the box
    assert view.overlay.selected == [view.paint_data.index["▣ blocks.3.attn"]]


def test_depth_shortcuts_and_expand_all(view):
    view.collapse_to_depth(2)
    paint = view.paint_data
    assert {b.path for b, _ in paint.boxes.values() if b.path.startswith("blocks.")} == {
        f"blocks.{k}" for k in range(12)}
    assert max(paint.edge_count) > 1  # an edge between layers stands for several
    view.expand_all_modules()
    assert not view.paint_data.boxes
    assert len(view.paint_data.names) == len(TRACE.graphs[0].nodes)


def test_a_seed_feeding_many_nodes_gets_stubs_and_rings_its_consumers(view):
    view.expand_all_modules()
    hubs = view.folding.hubs
    seed = next(h for h in hubs if "randint" in view.paint_data.nodes[view.paint_data.index[h]]
                .extern_kernel)
    assert len(hubs[seed]) > 8
    index = view.paint_data.index
    drawn = {tuple(e) for e in view.paint_data.edges}
    assert not any((index[seed], index[c]) in drawn for c in hubs[seed])  # no long edges
    assert any(isinstance(it, HubsItem) for it in view.scene().items())
    view.click_node(seed)
    assert sorted(view.overlay.consumers) == sorted(index[c] for c in hubs[seed])
    assert np.isfinite(view.paint_data.x).all()


def test_folding_commands_keep_the_selection_and_the_step(view):
    node = next(n.name for n in TRACE.graphs[0].nodes if n.module == "blocks.3.mlp.fc")
    view.state.set_step(2)
    view.click_node(node)
    for command in (lambda: view.expand_box(RUN), lambda: view.collapse_to_depth(2),
                    view.fold_repeated_blocks, view.collapse_selected_module,
                    view.expand_all_modules, view.focus_selection, view.focus_selection):
        command()
        assert view.state.selected_nodes == (node,) and view.state.step == 2
        assert view.overlay.selected == view._ids([node]) != []


def test_find_by_module_path_marks_the_box_holding_it(view):
    hits = view.find("blocks.3.attn")
    assert hits == [RUN]  # folded: the matches are inside the ×12 box
    view.expand_all_modules()
    hits = view.find("blocks.3.attn")
    nodes = {n.name for n in TRACE.graphs[0].nodes if n.module.startswith("blocks.3.attn")}
    assert set(hits) >= nodes and len(hits) < 40


def test_focus_shows_the_selection_and_its_two_hop_neighbourhood_then_all(view):
    view.expand_all_modules()
    node = next(n.name for n in TRACE.graphs[0].nodes if n.module == "blocks.5.ln2")
    view.click_node(node)
    view.focus_selection()
    shown = set(view.paint_data.names)
    assert node in shown and 3 < len(shown) < 40
    near = {e.dst for e in TRACE.graphs[0].edges if e.src == node} | {
        e.src for e in TRACE.graphs[0].edges if e.dst == node}
    assert near <= shown
    view.focus_selection()  # again: back to the whole graph
    assert len(view.paint_data.names) == len(TRACE.graphs[0].nodes)


def test_the_outline_follows_the_graph_and_drives_it(qtbot, view):
    from fusionviz.ui.graph.outline import ModuleOutline

    outline = ModuleOutline(view.state, view)
    qtbot.addWidget(outline)
    assert outline.items["blocks.7"].text(2) == "folded ×12"
    assert outline.items["blocks.7.attn"].text(2) == "inside a box"
    # clicking a module brings it out of the fold and rings its nodes
    outline.itemClicked.emit(outline.items["blocks.7.attn"], 0)
    assert "▣ blocks.7.attn" in view.paint_data.index
    assert view.overlay.hits == [view.paint_data.index["▣ blocks.7.attn"]]
    assert outline.items["blocks.7.attn"].text(2) == "collapsed"
    outline.toggle("blocks.7.attn")  # open it
    assert "▣ blocks.7.attn" not in view.paint_data.index
    assert outline.items["blocks.7.attn"].text(2) == ""
    # selecting a node in the graph selects its module in the outline
    node = next(n.name for n in TRACE.graphs[0].nodes if n.module == "blocks.7.attn")
    view.click_node(node)
    assert outline.currentItem() is outline.items["blocks.7.attn"]
