"""Where the window meets the desktop (#22, item 6): file dialogs start where the user
was (the folder fusionviz was started from, then the folder last used, never
fusionviz's own); tables and trees copy whole rows (Ctrl+C, right-click)."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QFileDialog, QMenu

DATA = Path(__file__).resolve().parents[1] / "data"


def test_dialogs_start_in_the_users_folder_then_the_last_one_used(window, tmp_path,
                                                                  monkeypatch):
    mine = tmp_path / "my traces"
    mine.mkdir()
    trace = mine / "step.json.gz"
    shutil.copy(DATA / "cpu_replay_block.json.gz", trace)
    asked = []

    def open_file(_parent, _title, folder, _filters):
        asked.append(folder)
        return str(trace), ""

    def save_file(_parent, _title, suggested, _filters):
        asked.append(suggested)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", open_file)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_file)
    monkeypatch.chdir(tmp_path)  # where the user started fusionviz
    window.open_trace_dialog()
    assert asked == [str(tmp_path)]
    assert window.state.path == str(trace)
    window.export_ledger_dialog()  # cancelled: nothing written
    assert asked[-1] == str(mine / "ledger.csv")
    window.open_advice_dialog()  # "opens" the trace as advice: refused, said
    assert asked[-1] == str(mine)
    assert window.errors and "advice" in window.errors[-1].lower()


def test_tables_and_trees_copy_whole_rows(window, qtbot, monkeypatch):
    assert window.open_trace(str(DATA / "gpu_moe_train.json.gz"))
    window.docks["kernels"].raise_()  # the table lists a graph's kernels when shown
    table = window.kernel_table.table
    table.selectRow(0)
    copy = next(a for a in table.actions() if a.text() == "Copy Selected Rows")
    assert table.contextMenuPolicy() == Qt.ContextMenuPolicy.ActionsContextMenu
    copy.trigger()
    head, row = QGuiApplication.clipboard().text().split("\n")
    model = table.model()
    assert head.split("\t") == [model.headerData(c, Qt.Orientation.Horizontal)
                                 for c in range(model.columnCount())]
    assert row.split("\t") == [" ".join(str(model.index(0, c).data() or "").split())
                                for c in range(model.columnCount())]
    assert "triton_" in row or "extern_kernels" in row
    # the graphs list, a tree: its one row
    window.graphs_list.setCurrentItem(window.graphs_list.topLevelItem(0))
    next(a for a in window.graphs_list.actions() if a.text() == "Copy Selected Rows").trigger()
    assert QGuiApplication.clipboard().text().split("\n")[1].startswith("#1 backward")
    # the ledger's row menu lists it after what to try with the pair
    shown = []
    monkeypatch.setattr(QMenu, "popup", lambda menu, *_a: shown.append(menu))
    window.state.set_step(1)  # round 1: its candidates
    qtbot.waitUntil(lambda: bool(window.ledger.model.rows), timeout=10000)
    window.ledger.sig_row_menu.emit(window.ledger.model.rows[0], QPoint(5, 5))
    assert shown and shown[-1].actions()[-1].text() == "Copy Selected Rows"
    assert len(shown[-1].actions()) > 2  # the pair's experiments come first
