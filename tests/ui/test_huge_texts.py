"""A node named with megabytes of text, or a kernel source of tens of megabytes (a
hostile or broken trace), is shown cut, at once, instead of holding the window (#11)."""

from __future__ import annotations

import time
from dataclasses import replace

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.kernel.code_view import MAX_SHOWN, CodeView
from fusionviz.ui.view_state import ViewState


def _renamed(trace, old: str, new: str):
    g = trace.graphs[0]
    rename = lambda n: new if n == old else n  # noqa: E731
    graph = replace(
        g, rounds=(), nodes=tuple(replace(n, name=rename(n.name)) for n in g.nodes),
        edges=tuple(replace(e, src=rename(e.src), dst=rename(e.dst)) for e in g.edges),
        final_groups=tuple(tuple(map(rename, grp)) for grp in g.final_groups),
        kernels=tuple(replace(k, nodes=tuple(map(rename, k.nodes))) for k in g.kernels))
    return replace(trace, graphs=(graph,))


def test_a_node_named_with_megabytes_is_drawn_at_once(qtbot):
    huge = "op3_" + "x" * 20_000_000
    trace = _renamed(synthetic_trace(20, seed=1, rounds=0), "op3", huge)
    view = GraphView(ViewState())
    qtbot.addWidget(view)
    view.resize(800, 600)
    view.show()
    t0 = time.perf_counter()
    view.state.set_trace(trace)
    view.resetTransform()
    view.centerOn(view.node_scene_pos(huge))
    view.grab()
    assert time.perf_counter() - t0 < 10  # it took minutes before
    title, _ = view.paint_data.label(view.paint_data.index[huge], view.fontMetrics())
    assert title.text().startswith("op3_x") and len(title.text()) < 200


def test_a_kernel_source_of_tens_of_megabytes_is_cut_and_says_so(qtbot):
    code = CodeView()
    qtbot.addWidget(code)
    source = "tmp0 = tl.load(in_ptr0 + x0)\n" * 1_000_000  # 30 MB
    t0 = time.perf_counter()
    code.set_source(source, "python")
    assert time.perf_counter() - t0 < 30
    shown = code.source()
    assert len(shown) <= MAX_SHOWN + 200
    assert shown.rstrip().endswith(f"the first {MAX_SHOWN:,} shown; right-click: Copy "
                                   "Full Source")
    code.copy_full_source()  # the whole text is still there to copy
    from PySide6.QtGui import QGuiApplication

    assert QGuiApplication.clipboard().text() == source


def test_details_of_a_node_named_with_megabytes_show_at_once_and_copy_whole(qtbot):
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QGuiApplication

    from fusionviz.ui.details_pane import MAX_TEXT, DetailsPane

    huge = "op3_" + "x" * 5_000_000
    trace = _renamed(synthetic_trace(20, seed=1, rounds=0), "op3", huge)
    state = ViewState()
    state.set_trace(trace)
    pane = DetailsPane(state)
    qtbot.addWidget(pane)
    pane.show()
    t0 = time.perf_counter()
    state.select_nodes((huge,))
    pane.grab()
    assert time.perf_counter() - t0 < 10  # over five minutes before
    assert len(pane.text()) < 3 * MAX_TEXT + 2000 and "5,000,004 characters" in pane.text()
    pane.copy_names()
    assert QGuiApplication.clipboard().text() == huge
    # a link to the long name (here: from a neighbour) still selects it
    neighbour = next(e.dst if e.src == huge else e.src for e in trace.graphs[0].edges
                     if huge in (e.src, e.dst))
    state.select_nodes((neighbour,))
    href = next(h for h in pane.browser.toHtml().split('href="')[1:] if h.startswith("node:~"))
    pane.browser.anchorClicked.emit(QUrl(href.split('"')[0]))
    assert state.selected_nodes == (huge,)


def test_the_whole_window_on_a_node_named_with_megabytes(qtbot, settings, tmp_path):
    """Every pane meets the name: it used to crash the window (a label megapixels wide)
    and hold why-not for minutes."""
    from fusionviz.model.tracefile.io import save_trace
    from fusionviz.ui.main_window import MainWindow

    huge = "op3_" + "x" * 2_000_000
    path = tmp_path / "huge.json.gz"
    save_trace(_renamed(synthetic_trace(20, seed=1, rounds=2), "op3", huge), path)
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.show()
    t0 = time.perf_counter()
    assert w.open_trace(str(path))
    w.state.select_nodes((huge,))
    w.state.select_kernel(next(k.name for k in w.state.graph.kernels if huge in k.nodes))
    w.kernel_pane.side_button.setChecked(True)
    for dock in ("kernels", "charts", "ledger"):
        w.docks[dock].raise_()
        w.grab()
    for step in range(len(w.state.steps)):
        w.state.set_step(step)
        w.grab()
    neighbour = next(e.dst for e in w.state.graph.edges if e.src == huge)
    w.state.select_nodes((huge, neighbour))
    dialog = w.why_not_fused()
    dialog.grab()
    assert len(dialog.windowTitle()) <= 240
    assert time.perf_counter() - t0 < 20
    assert w.minimumSizeHint().width() < 2000
