"""Export what is shown: the graph at the current step (PNG, SVG, PDF) and the ledger.

The graph is rendered from the live scene, so exports match the screen at the current
step; ledger rows go through ``report.ledger_table.rows_to_csv`` / ``rows_to_markdown``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QMarginsF, QRectF, QSize, QSizeF
from PySide6.QtGui import QPageLayout, QPageSize, QPainter, QPdfWriter
from PySide6.QtSvg import QSvgGenerator

from fusionviz.model.report.ledger_table import rows_to_csv, rows_to_markdown

GRAPH_FORMATS = "PNG image (*.png);;SVG drawing (*.svg);;PDF document (*.pdf)"
LEDGER_FORMATS = "CSV table (*.csv);;Markdown table (*.md)"


def export_graph(view, path: str) -> str:
    """Write the graph view's scene to ``path``; the suffix picks PNG, SVG or PDF."""
    suffix = Path(path).suffix.lower()
    if suffix == ".svg":
        _render_svg(view, path)
    elif suffix == ".pdf":
        _render_pdf(view, path)
    else:
        if not suffix:
            path += ".png"
        if not view.render_image().save(path):
            raise OSError(f"could not write {path}")
    return path


def _render_svg(view, path: str) -> None:
    source = view.scene().sceneRect()
    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(QSize(int(source.width()), int(source.height())))
    gen.setViewBox(QRectF(0, 0, source.width(), source.height()))
    gen.setTitle("fusionviz graph")
    painter = QPainter(gen)
    painter.fillRect(QRectF(0, 0, source.width(), source.height()), view.backgroundBrush())
    view.render_scene(painter, QRectF(0, 0, source.width(), source.height()), source)
    painter.end()


def _render_pdf(view, path: str) -> None:
    source = view.scene().sceneRect()
    writer = QPdfWriter(path)
    writer.setResolution(72)  # one scene unit per point: text stays at its screen size
    size = QPageSize(QSizeF(source.width(), source.height()), QPageSize.Unit.Point)
    writer.setPageLayout(QPageLayout(size, QPageLayout.Orientation.Portrait, QMarginsF()))
    painter = QPainter(writer)
    view.render_scene(painter, QRectF(), source)
    painter.end()


def export_ledger(rows: list[dict], path: str) -> str:
    """Write ledger rows as Markdown for ``.md`` paths, CSV otherwise."""
    suffix = Path(path).suffix.lower()
    if not suffix:
        path += ".csv"
    text = rows_to_markdown(rows) if suffix == ".md" else rows_to_csv(rows)
    Path(path).write_text(text, encoding="utf-8")
    return path
