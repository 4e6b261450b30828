"""Module boxes and frames on the graph canvas tinted by compiled vs eager time, on the
real window and the HF BERT fp16 inference trace (H200): its attention modules are
slower under torch.compile than eager, its embeddings and output blocks faster."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, QPointF, QRectF
from PySide6.QtGui import QColor, QGuiApplication, QImage, QKeySequence, QPainter
from PySide6.QtWidgets import QToolTip

from fusionviz.ui.graph.decor import box_tooltip
from fusionviz.ui.graph.eager_tint import HALO, TintItem
from fusionviz.ui.theme import graph_colors

DATA = Path(__file__).resolve().parents[1] / "data"
BERT = DATA / "gpu_bert_fp16_infer.json.gz"
SELF = "▣ encoder.layer.{}.attention.self"
OUTPUT = "▣ encoder.layer.{}.attention.output"


@pytest.fixture
def bert(window):
    assert window.open_trace(str(BERT)), window.errors
    return window


class Shot:
    """The scene around some boxes, at zoom 1, rendered as an export renders it."""

    def __init__(self, view, *keys: str) -> None:
        rects = [view.paint_data.rects[view.paint_data.index[k]] for k in keys]
        r = rects[0]
        for other in rects[1:]:
            r = r.united(other)
        self.view, self.crop = view, r.adjusted(-120, -120, 120, 120)

    def render(self) -> QImage:
        crop = self.crop
        image = QImage(int(crop.width()), int(crop.height()), QImage.Format.Format_ARGB32)
        image.fill(graph_colors(False).background)
        painter = QPainter(image)
        self.view.render_scene(painter, QRectF(0, 0, crop.width(), crop.height()), crop)
        painter.end()
        return image

    def pixel(self, image: QImage, at: QPointF) -> QColor:
        """The color painted at scene point ``at``."""
        p = at - self.crop.topLeft()
        return image.pixelColor(int(p.x()), int(p.y()))


def ring_and_inside(view, key: str) -> tuple[QPointF, QPointF]:
    """A point on a box's ring (above its left part, clear of edges) and one inside the
    box's kernel-color stripe."""
    r: QRectF = view.paint_data.rects[view.paint_data.index[key]]
    return QPointF(r.left() + 20, r.top() - HALO), QPointF(r.left() + 4, r.center().y())


def tint_items(view) -> list[TintItem]:
    return [it for it in view.scene().items() if isinstance(it, TintItem)]


def test_attention_boxes_carry_the_slower_tint_and_output_boxes_the_other(bert):
    view = bert.graph_view
    action = bert.actions_by_name["eager_tint"]
    assert action.isChecked() and action.isEnabled()  # on by default: BERT has figures
    assert action.shortcut() == QKeySequence("Ctrl+Shift+T")
    assert view.tint.legend.isVisible()
    view.collapse_to_depth(5)  # encoder.layer.N.attention.self / .output as boxes
    marks = view.tint.marks
    for k in range(12):
        assert marks[SELF.format(k)].moved == 1, k  # lost time: the red ring
        assert marks[OUTPUT.format(k)].moved == -1, k  # won time: the green one
        assert marks[SELF.format(k)].badge.endswith("× slower")
        assert marks[OUTPUT.format(k)].badge.endswith("× faster")
    assert len(tint_items(view)) == 2 and all(it.isVisible() for it in tint_items(view))
    assert f"{len(marks)} modules here" in view.tint.legend.text()

    # what is painted: red around attention.self, green around attention.output
    shot = Shot(view, SELF.format(3), OUTPUT.format(3))
    image = shot.render()
    slow_ring, slow_inside = ring_and_inside(view, SELF.format(3))
    fast_ring, _ = ring_and_inside(view, OUTPUT.format(3))
    red, green = shot.pixel(image, slow_ring), shot.pixel(image, fast_ring)
    assert red.red() > red.green() + 80 and red.red() > red.blue() + 80, red.name()
    assert green.green() > green.red() + 50 and green.green() > green.blue() + 30, green.name()

    # the tooltip of a box says eager vs compiled time and the ratio
    box = view.paint_data.boxes[view.paint_data.index[SELF.format(3)]][0]
    line = view.tint.box_line(box)
    assert re.search(r"compiled \d\.\d{3} ms vs eager \d\.\d{3} ms of kernel time: "
                     r"1\.\d\dx slower \(\+0\.0\d{3} ms per call\)", line), line
    tip = box_tooltip(box, "", view.kernel_of, None, line)
    assert "vs eager:" in tip and "slower" in tip

    # the toggle (View menu, Ctrl+Shift+T) removes the tint; the kernel colors stay
    action.trigger()
    assert not view.tint.on and not action.isChecked()
    assert not any(it.isVisible() for it in tint_items(view))
    assert not view.tint.legend.isVisible()
    off = shot.render()
    background = graph_colors(False).background
    assert shot.pixel(off, slow_ring) == background
    assert shot.pixel(off, slow_inside) == shot.pixel(image, slow_inside)  # kernel stripe
    action.trigger()
    assert view.tint.on and action.isChecked()
    assert shot.pixel(shot.render(), slow_ring) == red
    # a new folding keeps the choice
    action.trigger()
    view.collapse_to_depth(4)
    assert not any(it.isVisible() for it in tint_items(view))
    action.trigger()


def test_a_module_opened_into_a_frame_tints_the_frame_and_says_why(bert):
    view = bert.graph_view
    # the first view: the 12 layers folded, 2% slower in all: nothing to tint, said so
    assert not view.tint.marks and not tint_items(view)
    assert "no module shown is 5% off" in view.tint.legend.text()
    assert view.show_module("encoder.layer.3.attention.self")
    frame = view.tint.marks["encoder.layer.3.attention"]
    assert frame.frame and frame.moved == 1
    r = frame.rect
    tip = view.tint.tip_at(QPointF(r.left() + 10, r.top() + 8))  # its title bar
    assert "slower than eager" in tip and "of kernel time" in tip
    assert view.tint.tip_at(QPointF(r.center().x(), r.bottom() + 400)) == ""
    assert view.tint.marks[SELF.format(3)].moved == 1
    assert view.tint.marks[OUTPUT.format(3)].moved == -1
    # the wash over the frame is red, away from boxes and edges
    shot = Shot(view, SELF.format(3), OUTPUT.format(3))
    c = shot.pixel(shot.render(), QPointF(r.left() + 6, r.bottom() - 4))
    assert c.red() > c.green() + 20 and c.red() > c.blue() + 20, c.name()


def test_the_folded_run_is_tinted_by_its_blocks_summed(bert):
    view = bert.graph_view
    (box,) = [b for b, _ in view.paint_data.boxes.values() if b.run is not None]
    times = view.tint.times(box)
    mp = view.tint.map
    parts = [mp.modules[p] for p in box.run.paths]
    assert times.eager_ms == pytest.approx(sum(m.eager_ms for m in parts))
    assert times.compiled_ms == pytest.approx(sum(m.compiled_ms for m in parts))
    assert "(within 5%: not tinted)" in view.tint.box_line(box)


def test_the_backward_graph_is_tinted_by_the_backward_side(window):
    assert window.open_trace(str(DATA / "gpu_llama_hf_train.json.gz")), window.errors
    view = window.graph_view
    backward = next(g.index for g in window.state.trace.graphs if g.kind == "backward")
    window.state.set_graph(backward)
    assert view.tint.map.side == "backward" and view.tint.available
    view.collapse_to_depth(2)
    assert view.tint.marks and all(m.moved in (1, -1) for m in view.tint.marks.values())


@pytest.mark.parametrize("name", ["cpu_mlp_block.json.gz", "gpu_mlp_block.json.gz"])
def test_a_trace_without_eager_figures_shows_no_tint(bert, name):
    view = bert.graph_view
    view.collapse_to_depth(5)
    assert view.tint.marks  # BERT's, before
    assert bert.open_trace(str(DATA / name)), bert.errors
    for graph in range(len(bert.state.trace.graphs)):
        bert.state.set_graph(graph)
        view.collapse_to_depth(1)
        assert view.tint.map is None and not view.tint.available
        assert not view.tint.marks and not tint_items(view)
        assert not view.tint.legend.isVisible()
        assert not bert.actions_by_name["eager_tint"].isEnabled()
        for box, _colors in view.paint_data.boxes.values():  # gpu_mlp_block has boxes
            assert view.tint.box_line(box) == ""
            assert "vs eager" not in box_tooltip(box, "", view.kernel_of)
        view.toggle_eager_tint()  # no figures: nothing to show, nothing fails
        view.toggle_eager_tint()
        assert not view.tint.legend.isVisible()


def hover(qtbot, view, at: QPointF) -> None:
    """The mouse onto scene point ``at`` (centred first), as a user brings it there: from
    elsewhere on the view (a cursor already on the spot sends no move), onto the view's
    own window (another window over the spot, a dialog an earlier test left up, would
    get the move)."""
    view.centerOn(at)
    pos = view.mapFromScene(at)
    spot = view.viewport().mapToGlobal(pos)
    over = [w.objectName() for w in QGuiApplication.topLevelWindows()
            if w.isExposed() and w is not view.window().windowHandle()
            and w.geometry().contains(spot)]
    assert not over, f"other windows over the point hovered: {over}"
    assert pos != QPoint(1, 1)
    qtbot.mouseMove(view.viewport(), QPoint(1, 1))
    qtbot.mouseMove(view.viewport(), pos)


def test_hovering_a_tinted_box_or_frame_title_shows_its_figures(bert, qtbot):
    view = bert.graph_view
    assert view.show_module("encoder.layer.3.attention.self")
    view.resetTransform()
    key = SELF.format(3)
    hover(qtbot, view, view.visible_pos(key))
    qtbot.waitUntil(lambda: "vs eager:" in QToolTip.text(), timeout=2000)
    assert "encoder.layer.3.attention.self" in QToolTip.text() and "slower" in QToolTip.text()
    r = view.tint.marks["encoder.layer.3.attention"].rect
    hover(qtbot, view, QPointF(r.left() + 10, r.top() + 8))  # the frame's title bar
    qtbot.waitUntil(lambda: "slower than eager" in QToolTip.text(), timeout=2000)
    assert "encoder.layer.3.attention (BertAttention)" in QToolTip.text()


def test_a_big_graph_is_tinted_after_its_first_frame(window, qtbot):
    """The 64-layer Llama's backward (2,507 nodes, over ``LATE_NODES``), opened lazily:
    its map would read every node's details before the first frame. The graph is shown
    untinted, and tinted by the next event-loop turns, as a small graph is at once; a
    switch before then drops it: the new graph has its own."""
    from fusionviz.model.report.eager_map import graph_map
    from fusionviz.ui.graph.eager_tint import LATE_NODES

    deep = Path(__file__).resolve().parents[2] / "benchmarks" / "traces" \
        / "gpu_llama_deep64_train.json.gz"
    view = window.graph_view
    changed = []
    view.sig_eager_tint_changed.connect(lambda: changed.append(window.state.graph_index))
    assert window.open_trace(str(deep), graph=1)
    assert len(window.state.graph.nodes) > LATE_NODES
    assert view.tint.map is None and not view.tint.marks  # not before the first frame
    qtbot.waitUntil(lambda: view.tint.map is not None, timeout=10_000)
    assert view.tint.map is graph_map(window.state.trace, window.state.graph)
    assert view.tint.marks and view.tint.legend.isVisible()
    assert changed[-1] == 1  # the window's menu learns the graph has figures
    assert window.module_outline.items["model"].text(3).endswith(" ms")  # its column too
    assert window.open_trace(str(deep), graph=1)  # again, and away before the map comes
    window.state.set_graph(0)  # 1,937 nodes: its map at once
    forward = view.tint.map
    assert forward is graph_map(window.state.trace, window.state.graph)
    qtbot.wait(300)
    assert view.tint.map is forward and window.state.graph_index == 0
