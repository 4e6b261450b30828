"""What the graph and the charts paint as text, as scene rectangles, and which of them
overlap: shared by tests/ui/test_labels.py and the first-hour walk (first_hour.py)."""

from __future__ import annotations

import numpy as np
from PySide6.QtGui import QImage, QPainter

from fusionviz.ui.graph.decor import FramesItem, HubsItem
from fusionviz.ui.graph.items import LOD_TEXT, EdgeTileItem, NodeTileItem


def graph_texts(view) -> list[tuple[str, object, str]]:
    """(kind, scene rect, text) of every text the graph scene paints at its zoom."""
    lod, out = view.transform().m11(), []
    for item in view.scene().items():
        if isinstance(item, NodeTileItem):
            out += [("node", r, t) for r, t in item.text_rects(lod)]
        elif lod < LOD_TEXT:
            continue  # zoomed out only the boxes' titles have text
        elif isinstance(item, EdgeTileItem):
            out += [("count", r, t) for r, t in item.text_rects()]
        elif isinstance(item, FramesItem):
            out += [("frame", r, t) for r, t in item.titles]
        elif isinstance(item, HubsItem):
            out += [("stub", r, t) for *_, r, t in item.stubs]
    return out


def overlaps(texts) -> list[tuple[str, str]]:
    if not texts:
        return []
    r = np.array([[b.left(), b.top(), b.right(), b.bottom()] for _k, b, _t in texts])
    hit = ((r[:, None, 0] < r[None, :, 2]) & (r[None, :, 0] < r[:, None, 2])
           & (r[:, None, 1] < r[None, :, 3]) & (r[None, :, 1] < r[:, None, 3]))
    return [(texts[a][2], texts[b][2]) for a, b in np.argwhere(np.triu(hit, 1))]


def axis_texts(axis) -> list:
    """The scene rects of the tick labels ``axis`` draws."""
    image = QImage(8, 8, QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    specs = axis.generateDrawSpecs(painter)
    painter.end()
    return [axis.mapRectToScene(rect) for rect, _flags, _text in specs[2]] if specs else []


def chart_texts(chart, sides=("left", "bottom")) -> tuple[list, list]:
    """The titled panels of a pyqtgraph ``chart`` (a ChartPage), and the scene rects
    of their titles and of the tick labels of their ``sides`` axes."""
    plots = [item for item in chart.plot_widget.ci.items if hasattr(item, "titleLabel")]
    texts = [("title", p.titleLabel.sceneBoundingRect(), p.titleLabel.text) for p in plots]
    texts += [("tick", r, "") for p in plots for side in sides
              for r in axis_texts(p.getAxis(side))]
    return plots, texts
