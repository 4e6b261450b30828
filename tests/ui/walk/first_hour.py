"""A new user's first hour with a real GPU trace, on one screen size, in the real window.

Run as a child (the screen size is fixed when Qt starts):

    QT_QPA_PLATFORM=offscreen:configfile=SCREEN.json python first_hour.py TRACE SETTINGS OUT

It opens TRACE in a MainWindow whose layout lives in the SETTINGS ini file, looks at
where the window and its docks are, enlarges the bottom dock, opens two repeated blocks
and asks why a node of one is not fused with a node of the other by clicking and
Ctrl+clicking them, and writes what it saw to OUT/walk.json (screenshots beside it).
``tests/ui/test_first_hour.py`` runs it at three screen sizes and checks the record.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from label_checks import chart_texts, graph_texts, overlaps  # beside this script
from PySide6.QtCore import QPoint, QRect, QSettings, Qt
from PySide6.QtGui import QPainter
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QAbstractItemView, QApplication, QDialog, QLabel

from fusionviz.model.queries import node_index
from fusionviz.ui.ledger.why_not import WhyNotDialog
from fusionviz.ui.main_window import MainWindow


def settle(app: QApplication, rounds: int = 20) -> None:
    for _ in range(rounds):
        app.processEvents()


def rect(r: QRect) -> list[int]:
    return [r.x(), r.y(), r.width(), r.height()]


def docks_seen(w: MainWindow) -> dict:
    """Each visible dock's rectangle on the screen (the front tab of a tab group)."""
    out = {}
    for name, dock in w.docks.items():
        if dock.isVisible() and not dock.visibleRegion().isEmpty():
            top_left = dock.mapToGlobal(QPoint(0, 0))
            out[name] = [top_left.x(), top_left.y(), dock.width(), dock.height()]
    return out


def rows_visible(view: QAbstractItemView) -> int:
    model, port = view.model(), view.viewport().rect()
    return sum(1 for r in range(model.rowCount())
               if port.contains(view.visualRect(model.index(r, 0)).center()))


def bottom_rows(w: MainWindow, app: QApplication) -> int:
    """Rows of the Kernels table in view once the bottom dock is dragged as high as it
    goes (``resizeDocks`` asks for more than there is)."""
    w.docks["kernels"].raise_()
    w.resizeDocks([w.docks["kernels"]], [w.height()], Qt.Orientation.Vertical)
    settle(app)
    view = w.kernel_table.table
    rows = rows_visible(view)
    w.reset_layout()
    settle(app)
    return rows


def click(view, name: str, ctrl: bool = False) -> None:
    pos = view.mapFromScene(view.node_scene_pos(name))
    mods = Qt.KeyboardModifier.ControlModifier if ctrl else Qt.KeyboardModifier.NoModifier
    QTest.mouseClick(view.viewport(), Qt.MouseButton.LeftButton, mods, pos)


def open_box(view, app, key: str) -> None:
    view.centerOn(view.node_scene_pos(key))
    settle(app, 5)
    click(view, key)
    settle(app)


def why_not_across_blocks(w: MainWindow, app: QApplication) -> dict:
    """Open the folded blocks, then blocks 2 and 3; click the last node of block 2 and
    Ctrl+click the first of block 3; Ctrl+W."""
    view, graph = w.graph_view, w.state.graph
    runs = [k for k, box in view.folding.view.boxes.items() if box.run is not None]
    if not runs:
        return {"error": "no folded blocks in the first view"}
    open_box(view, app, runs[0])
    blocks = sorted({view.folding.view.boxes[k].path for k in view.folding.view.boxes},
                    key=lambda p: [int(s) if s.isdigit() else s for s in p.split(".")])
    first, second = blocks[2], blocks[3]
    for path in (first, second):
        key = next(k for k, b in view.folding.view.boxes.items() if b.path == path)
        open_box(view, app, key)
    nodes = node_index(graph)
    in_first = [n for n in nodes if _in(nodes, n, first) and view.shown_as(n) == n]
    in_second = [n for n in nodes if _in(nodes, n, second) and view.shown_as(n) == n]
    a, b = in_first[-1], in_second[0]
    view.centerOn((view.node_scene_pos(a) + view.node_scene_pos(b)) / 2)
    settle(app, 5)
    scroll = (view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    click(view, a)
    settle(app, 5)
    moved = scroll != (view.horizontalScrollBar().value(), view.verticalScrollBar().value())
    b_seen = view.viewport().rect().contains(view.mapFromScene(view.node_scene_pos(b)))
    click(view, b, ctrl=True)
    settle(app, 5)
    selected = list(w.state.selected_nodes)
    QTest.keyClick(w, Qt.Key.Key_W, Qt.KeyboardModifier.ControlModifier)
    settle(app)
    dialogs = [d for d in w.findChildren(QDialog) if isinstance(d, WhyNotDialog)
               and d.isVisible()]
    if dialogs:  # the dialog drawn where it is, over the window, for the screenshot
        shot = w.grab()
        painter = QPainter(shot)
        painter.drawPixmap(dialogs[0].mapToGlobal(QPoint(0, 0)) - w.mapToGlobal(QPoint(0, 0)),
                           dialogs[0].grab())
        painter.end()
        w.why_not_shot = shot
    return {"blocks": [first, second], "a": a, "b": b, "view_moved_on_click": moved,
            "second_in_view": b_seen, "selected": selected, "dialog": bool(dialogs),
            "errors": list(w.errors)}


def _in(nodes: dict, name: str, path: str) -> bool:
    module = nodes[name].module
    return module == path or module.startswith(path + ".")


def labels_seen(w: MainWindow, app: QApplication) -> dict:
    """The texts the graph paints at the first view and the Rounds chart's titles and
    ticks, with any two that overlap."""
    texts = graph_texts(w.graph_view)
    w.docks["charts"].raise_()
    pane = w.charts_pane
    pane.tabs.setCurrentWidget(pane.round_chart)
    settle(app)
    _plots, chart = chart_texts(pane.round_chart)
    w.docks["ledger"].raise_()
    settle(app)
    return {"graph_texts": len(texts), "graph_overlaps": overlaps(texts),
            "chart_texts": len(chart), "chart_overlaps": overlaps(chart)}


def extern_view(w: MainWindow, app: QApplication, shot: Path) -> dict:
    """The Kernels table grouped by op, the slowest extern kernel in the kernel pane."""
    w.docks["kernels"].raise_()
    w.kernel_table.view_box.setCurrentIndex(1)  # grouped by op
    graph = w.state.graph
    slowest = max((k for k in graph.kernels if k.backend == "extern"), key=lambda k: k.ms or 0)
    w.state.select_kernel(slowest.name)
    settle(app)
    w.grab().save(str(shot))
    facts = [label.text() for label in w.kernel_pane.findChildren(QLabel)
             if label.isVisible() and "FLOP" in label.text()]
    groups = w.kernel_table.groups
    w.kernel_table.view_box.setCurrentIndex(0)
    w.docks["ledger"].raise_()
    settle(app)
    return {"kernel": slowest.name, "facts": facts[0] if facts else "",
            "group_rows": groups.model().rowCount()}


def main(trace: str, settings_path: str, out: str) -> int:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    w = MainWindow(settings=QSettings(settings_path, QSettings.Format.IniFormat))
    w.show()
    settle(app, 5)
    assert w.open_trace(trace), w.errors
    settle(app, 40)
    screen = w.screen().availableGeometry()
    record = {"screen": rect(screen), "window": rect(w.frameGeometry()),
              "restored": w.window_layout.restored, "docks": docks_seen(w),
              "graph_view": rect(QRect(w.graph_view.mapToGlobal(QPoint(0, 0)),
                                       w.graph_view.size()))}
    w.grab().save(str(out_dir / "first-view.png"))
    record["labels"] = labels_seen(w, app)
    record["extern"] = extern_view(w, app, out_dir / "kernels.png")
    record["bottom_rows_enlarged"] = bottom_rows(w, app)
    record["why_not"] = why_not_across_blocks(w, app)
    getattr(w, "why_not_shot", w.grab()).save(str(out_dir / "why-not.png"))
    w.close()  # saves the layout, as quitting does
    (out_dir / "walk.json").write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
