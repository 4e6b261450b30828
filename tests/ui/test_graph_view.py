"""The graph view shows each fusion step's groups on one stable layout, and exports it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt
from PySide6.QtGui import QImage

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.palette import kernel_colors
from fusionviz.model.queries import kernel_of_node
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.export import export_graph
from fusionviz.ui.graph.paint import node_tooltip
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.view_state import ViewState


@pytest.fixture
def view(qtbot):
    state = ViewState()
    v = GraphView(state)
    qtbot.addWidget(v)
    v.resize(900, 700)
    v.show()
    qtbot.waitExposed(v)
    return v


def test_every_step_shows_exactly_the_steps_groups(view, any_trace_path):
    trace = load_trace(any_trace_path)
    view.state.set_trace(trace, str(any_trace_path))
    for gi, graph in enumerate(trace.graphs):
        view.state.set_graph(gi)
        view.expand_all_modules()  # every pre-fusion node on its own (big graphs fold)
        steps = fusion_steps(graph)
        laid_out = set(view.paint_data.names)
        for k, step in enumerate(steps):
            view.state.set_step(k)
            for group in step.groups:
                members = [n for n in group if n in laid_out]
                for name in members:
                    assert set(view.group_of_node(name)) == set(members), (gi, k, name)


def test_nodes_keep_their_place_and_final_colors_are_kernel_colors(view):
    trace = synthetic_trace(200, seed=5, rounds=3)
    graph = trace.graphs[0]
    view.state.set_trace(trace)
    before = (view.paint_data.x.copy(), view.paint_data.y.copy())
    view.state.set_step(len(fusion_steps(graph)) - 1)
    assert np.array_equal(view.paint_data.x, before[0])
    assert np.array_equal(view.paint_data.y, before[1])
    colors, kernel_of = kernel_colors(graph.kernels), kernel_of_node(graph)
    for node in graph.nodes:
        assert view.node_color(node.name) == colors[kernel_of[node.name].name]
    fused = [g for g in graph.final_groups if len(g) > 1]
    assert fused and all(len({view.node_color(n) for n in g}) == 1 for g in fused)


def test_a_step_only_marks_the_nodes_that_changed(view):
    trace = synthetic_trace(150, seed=2, rounds=2)
    view.state.set_trace(trace)
    steps = fusion_steps(trace.graphs[0])
    view.state.set_step(1)
    marked = {view.paint_data.names[i] for i in np.flatnonzero(view.paint_data.changed)}
    assert marked == set(steps[1].changed) and marked


def test_click_selects_node_and_kernel_ctrl_click_adds_a_second(view, qtbot):
    trace = synthetic_trace(60, seed=1, rounds=2)
    view.state.set_trace(trace)
    kernel_of = kernel_of_node(trace.graphs[0])
    a, b = "op10", "op11"
    for name, mods in ((a, Qt.KeyboardModifier.NoModifier),
                       (b, Qt.KeyboardModifier.ControlModifier)):
        view.centerOn(view.node_scene_pos(name))
        pos = view.mapFromScene(view.node_scene_pos(name))
        qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, mods, pos)
    assert view.state.selected_nodes == (a, b)
    assert view.state.kernel == kernel_of[b].name
    assert view.overlay.selected == [view.paint_data.index[a], view.paint_data.index[b]]


def test_click_on_empty_space_keeps_the_selection(view, qtbot):
    view.state.set_trace(synthetic_trace(60, seed=1))
    view.click_node("op3")
    corner = view.mapFromScene(QPointF(-50, -50))
    qtbot.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, pos=corner)
    assert view.state.selected_nodes == ("op3",)


def test_search_finds_nodes_by_name_buffer_and_op(view):
    trace = synthetic_trace(80, seed=4)
    view.state.set_trace(trace)
    graph = trace.graphs[0]
    readers = {n.name for n in graph.nodes if any(a.buffer == "buf12" for a in n.reads)}
    assert readers and set(view.find("BUF12")) == readers | {"op12"}  # the writer too
    assert view.find("op42") == ["op42"]
    op = graph.nodes[5].ops[0]
    assert set(view.find(op)) == {n.name for n in graph.nodes if any(op in o for o in n.ops)
                                  or any(op in o.name or op in o.target for o in n.origins)}
    assert view.find("no-such-thing") == []


def test_zoom_and_fit(view):
    view.state.set_trace(synthetic_trace(400, seed=1))
    view.fit()
    fitted = view.transform().m11()
    p = view.paint_data
    nodes = QRectF(QPointF(p.x.min() - p.w / 2, p.y.min() - p.h / 2),
                   QPointF(p.x.max() + p.w / 2, p.y.max() + p.h / 2))
    assert view.mapToScene(view.viewport().rect()).boundingRect().contains(nodes)
    view.zoom_in()
    assert view.transform().m11() == pytest.approx(fitted * 1.25)
    for _ in range(40):
        view.zoom_in()
    assert view.transform().m11() == pytest.approx(4.0)


def test_pair_highlight_marks_both_groups(view):
    trace = synthetic_trace(100, seed=3)
    view.state.set_trace(trace)
    cand = trace.graphs[0].rounds[0].candidates[0]
    view.state.highlight_pair((cand.a, cand.b))
    ids = view.paint_data.index
    assert view.overlay.pair == ([ids[n] for n in cand.a], [ids[n] for n in cand.b])


def test_tooltip_names_node_kernel_and_buffers(view):
    trace = synthetic_trace(40, seed=1)
    view.state.set_trace(trace)
    i = view.paint_data.index["op12"]
    tip = node_tooltip(view.paint_data, i, view.kernel_of, view.group_of_node)
    assert "op12" in tip and view.kernel_of["op12"].name in tip and "buf12" in tip


def test_minimap_appears_for_big_graphs_and_moves_the_view(view, qtbot):
    view.state.set_trace(synthetic_trace(500, seed=1))
    assert view.minimap.isVisible()
    view.resetTransform()
    before = view.mapToScene(view.viewport().rect().center())
    qtbot.mouseClick(view.minimap, Qt.MouseButton.LeftButton,
                     pos=view.minimap.rect().bottomRight() - view.minimap.rect().center() / 4)
    assert view.mapToScene(view.viewport().rect().center()) != before
    view.state.set_trace(synthetic_trace(10, seed=1))
    assert not view.minimap.isVisible()


def test_export_png_svg_pdf(view, tmp_path):
    view.state.set_trace(synthetic_trace(120, seed=1, rounds=2))
    view.state.set_step(1)
    png = export_graph(view, str(tmp_path / "graph.png"))
    image = QImage(png)
    assert not image.isNull() and image.width() > 500
    sample = {image.pixel(x, y) for x in range(0, image.width(), 7)
              for y in range(0, image.height(), 7)}
    assert len(sample) > 10  # background, boxes, several kernel colors, text
    svg = export_graph(view, str(tmp_path / "graph.svg"))
    text = Path(svg).read_text(encoding="utf-8")
    assert "<svg" in text and "op3" in text
    assert "<image" not in text  # vector edges, not the view's cached pixmaps
    cached = [i for i in view.scene().items() if i.cacheMode() != i.CacheMode.NoCache]
    assert cached  # the view's edge caches are back after the export
    pdf = export_graph(view, str(tmp_path / "graph.pdf"))
    assert Path(pdf).read_bytes()[:5] == b"%PDF-"


def _image(view) -> QImage:
    return view.render_image(max_side=1200, scale=0.5)


def test_incremental_restyle_paints_what_a_fresh_view_paints(view, qtbot):
    trace = synthetic_trace(150, seed=8, rounds=3)
    view.state.set_trace(trace)
    for k in (3, 1, 2, 0, 2):  # jump around so caches are invalidated piecemeal
        view.state.set_step(k)
        _image(view)
    fresh = GraphView(ViewState())
    qtbot.addWidget(fresh)
    fresh.state.set_trace(trace)
    fresh.state.set_step(2)
    assert _image(view) == _image(fresh)
    fresh.state.set_step(1)
    assert _image(view) != _image(fresh)


def test_hovering_a_node_shows_its_tooltip(view, qtbot):
    from PySide6.QtWidgets import QToolTip

    QToolTip.hideText()  # one an earlier test left up would not show again
    view.state.set_trace(synthetic_trace(40, seed=1))
    view.resetTransform()
    view.centerOn(view.node_scene_pos("op9"))
    target = view.mapFromScene(view.node_scene_pos("op9"))
    # from elsewhere first: a cursor already there (an earlier test's click) sends no move
    qtbot.mouseMove(view.viewport(), target + QPoint(300, 300))
    qtbot.mouseMove(view.viewport(), target)
    qtbot.waitUntil(QToolTip.isVisible, timeout=2000)
    assert "op9" in QToolTip.text() and view.kernel_of["op9"].name in QToolTip.text()
    QToolTip.hideText()


def test_selecting_a_kernel_elsewhere_rings_its_nodes(view):
    trace = synthetic_trace(120, seed=6)
    view.state.set_trace(trace)
    view.resetTransform()
    view.centerOn(view.node_scene_pos("op0"))
    kernel = view.kernel_of["op119"]  # far from op0: the view has to move to show it
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert not visible.contains(view.node_scene_pos(kernel.nodes[0]))
    view.state.select_kernel(kernel.name)
    assert sorted(view.overlay.kernel) == sorted(view.paint_data.index[n] for n in kernel.nodes)
    visible = view.mapToScene(view.viewport().rect()).boundingRect()
    assert visible.contains(view.node_scene_pos(kernel.nodes[0]))
    view.state.select_kernel("")
    assert view.overlay.kernel == []
