"""Paint a real scene thousands of times: guards against PySide6 reference leaks.

PySide6 6.12.0 on CPython 3.11 drops a reference to None/True/False on every void or
bool Qt call and aborts the interpreter after a few thousand paints
(docs/graph-layout.md); the graph view repaints constantly, so this must hold.
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QRectF
from PySide6.QtGui import QImage, QPainter

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.view_state import ViewState

PAINTS = 3000


def test_render_scene_thousands_of_times(qtbot):
    state = ViewState()
    view = GraphView(state)
    qtbot.addWidget(view)
    state.set_trace(synthetic_trace(40, seed=1, rounds=2))
    state.set_step(1)
    state.select_nodes(("op3",))
    state.highlight_pair((("op4",), ("op5",)))
    scene = view.scene()
    whole = scene.sceneRect()
    center = view.node_scene_pos("op4")
    close_up = QRectF(center.x() - 100, center.y() - 100, 200, 200)  # 1:1: text, arrows
    image = QImage(200, 200, QImage.Format.Format_ARGB32_Premultiplied)
    none_refs = sys.getrefcount(None)
    for k in range(PAINTS):
        if k % 500 == 0:
            state.set_step(k // 500 % 3)  # restyles: caches rebuilt, Python paths rerun
        image.fill(0)
        painter = QPainter(image)
        # Alternate the detailed (text) and zoomed-out (boxes) levels of detail.
        scene.render(painter, QRectF(0, 0, 200, 200), close_up if k % 2 else whole)
        painter.end()
    assert not image.isNull()
    # A leak of one reference per Qt call would drop this by tens of thousands.
    assert sys.getrefcount(None) > none_refs - 1000
