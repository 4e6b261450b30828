"""No label covers another and every number says its unit, in the main window on the
GPT-2 train step recorded on an H100: the graph's node labels, box and frame titles,
stub labels and edge counts; the Rounds chart's panel titles and ticks; the ledger's
bytes; the Graphs list's columns; the kernel facts' spread."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QTextDocument
from PySide6.QtWidgets import QApplication
from walk.label_checks import chart_texts, graph_texts, overlaps
from walk.windows import shown_window

from fusionviz.ui.graph.items import LOD_TEXT
from fusionviz.ui.ledger.pane import SORT

DATA = Path(__file__).resolve().parents[1] / "data"
GPT2 = DATA / "gpu_gpt2_train.json.gz"
RUN = "▣ blocks.0–11 ×12"


@pytest.fixture(scope="module")
def win(qapp, tmp_path_factory):
    """One shown window with the GPT-2 train trace open, for the whole module."""
    yield from shown_window(tmp_path_factory, GPT2, (1280, 800))


def settle() -> None:
    for _ in range(5):
        QApplication.processEvents()


def test_graph_labels_never_overlap_fitted_zoomed_in_or_with_nested_frames(win):
    view = win.graph_view
    view.fit()
    fitted = graph_texts(view)
    assert view.transform().m11() < LOD_TEXT and len(fitted) > 15  # titles over boxes
    assert not overlaps(fitted)
    texts = {t for _k, _r, t in fitted}
    assert "blocks.0–11 ×12" in texts and not any(t.startswith("…") and "." not in t
                                                  for t in texts)  # not "…sformer"
    view.expand_box(RUN)
    for box in ("▣ blocks.3", "▣ blocks.3.attn", "▣ blocks.3.mlp", "▣ blocks.4"):
        view.expand_box(box)
    for scale in (1.0, 0.6):
        view.resetTransform()
        view.scale(scale, scale)
        texts = graph_texts(view)
        kinds = {k for k, _r, _t in texts}
        assert {"node", "frame", "count"} <= kinds
        assert not overlaps(texts)
    titles = {t for k, _r, t in texts if k == "frame"}
    assert {"blocks.3 (Block)", "blocks.3.attn (CausalSelfAttention)",
            "blocks.4 (Block)"} <= titles
    view.fit()
    assert not overlaps(graph_texts(view))


def test_a_box_says_none_fused_yet_only_before_a_fusion_inside_it(win):
    view, state = win.graph_view, win.state
    paint = view.paint_data
    qkv = paint.index["▣ blocks.3.attn.qkv"]  # its matmul and bias add never fuse
    for k in range(len(state.steps)):
        state.set_step(k)
        assert "yet" not in paint.box_note[qkv]
        assert paint.box_note[qkv] == "2 nodes, 2 kernels"
    state.set_step(0)
    assert paint.box_note[paint.index["▣ blocks.5"]].endswith("none fused yet")
    state.set_step(len(state.steps) - 1)
    assert not any(n.endswith("yet") for n in paint.box_note.values())


def test_the_rounds_chart_names_each_panels_unit_and_no_labels_collide(win):
    win.docks["charts"].raise_()
    pane = win.charts_pane
    pane.tabs.setCurrentWidget(pane.round_chart)
    settle()
    plots, rects = chart_texts(pane.round_chart)
    titles = [p.titleLabel.text for p in plots]
    assert any("(MiB)" in t for t in titles) and any("(ms)" in t for t in titles)
    for p in plots:
        assert not p.getAxis("left").label.isVisible()  # the title names it
    assert sum(k == "tick" for k, _r, _t in rects) >= len(plots)
    assert not overlaps(rects)
    win.resizeDocks([win.docks["charts"]], [160], Qt.Orientation.Vertical)
    settle()  # a shorter pane: fewer ticks, still apart
    _plots, rects = chart_texts(pane.round_chart, sides=("left",))
    assert not overlaps(rects)


def test_the_ledger_shows_bytes_as_mib_and_sorts_by_the_count(win):
    win.state.set_step(1)
    ledger = win.ledger
    model = ledger.model
    memory, saved = (model.columns.index(k) for k in ("score_memory_score", "bytes_saved"))
    row = next(i for i, r in enumerate(model.rows) if r["score_memory_score"] == 11010048)
    cell = model.index(row, memory)
    assert cell.data() == "10.5 MiB" and cell.data(SORT) == 11010048
    assert "11,010,048 bytes" in cell.data(Qt.ItemDataRole.ToolTipRole)
    assert model.cell_look(row, memory)[1] == "10.5 MiB"  # what the delegate paints
    assert model.index(row, saved).data().endswith("MiB")
    assert "bytes" in model.headerData(memory, Qt.Orientation.Horizontal,
                                       Qt.ItemDataRole.ToolTipRole)


@pytest.mark.parametrize("size", [(1280, 800), (1630, 918)])
def test_the_graphs_list_shows_whole_columns_only(win, size):
    win.resize(*size)
    win.window_layout.arrange()  # the first-run docks for this window size
    settle()
    graphs = win.graphs_list
    header, room = graphs.header(), graphs.viewport().width()
    shown = [c for c in range(header.count()) if not graphs.isColumnHidden(c)]
    assert shown[:3] == [0, 1, 2] and len(shown) < header.count()
    for c in shown:
        title = graphs.headerItem().text(c)
        assert header.sectionSize(c) >= header.fontMetrics().horizontalAdvance(title)
        assert header.sectionViewportPosition(c) + header.sectionSize(c) <= room
    left_out = [c for c in range(header.count()) if c not in shown]
    tip = graphs.topLevelItem(0).toolTip(0)
    for c in left_out:  # the values of the columns left out, in the first tooltip
        assert f"{graphs.headerItem().text(c)} {graphs.topLevelItem(0).text(c)}" in tip
    win.resize(2200, 1000)
    win.window_layout.arrange()
    win.resizeDocks([win.docks["graphs"]], [900], Qt.Orientation.Horizontal)
    settle()  # wide enough: every column, nothing in the tooltip
    assert not any(graphs.isColumnHidden(c) for c in range(header.count()))
    assert "widen the list" not in graphs.topLevelItem(0).toolTip(0)


def test_a_kernels_spread_stays_on_one_line_with_its_unit(win):
    win.resize(1280, 800)
    win.window_layout.arrange()
    win.state.select_kernel("triton_poi_fused_arange_0")
    win.docks["kernel"].raise_()
    settle()
    facts = win.kernel_pane.views[0].facts
    doc = QTextDocument()
    doc.setDefaultFont(facts.font())
    doc.setHtml(facts.text())
    doc.setTextWidth(facts.contentsRect().width())
    assert doc.size().height() > 0  # laid out at the label's width
    lines = []
    block = doc.begin()
    while block.isValid():
        layout, text = block.layout(), block.text().replace("\xa0", " ")
        lines += [text[layout.lineAt(i).textStart():][:layout.lineAt(i).textLength()]
                  for i in range(layout.lineCount())]
        block = block.next()
    spread = next(line for line in lines if "one launch" in line)
    low, high = win.state.graph.kernels[0].ms_spread  # arange: 0.000864–0.000896 ms
    assert f"one launch {low:.3g}–{high:.3g} ms" in spread
    assert any("of peak 3,352 GB/s)" in line for line in lines)
