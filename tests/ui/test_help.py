"""Help inside the window, on the real window with the GPT-2 H100 trace open: the
shortcut sheet lists what the window has, F1 explains the focused pane, About lists
the versions, and the Modules menu names the graph's real repeated blocks."""

from __future__ import annotations

import re
from html import escape
from pathlib import Path

import PySide6
import pytest
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QDesktopServices, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QApplication, QLabel, QPushButton, QWidget
from walk.windows import shown_window

from fusionviz.model.module_view import ModuleTree, repeated_runs
from fusionviz.ui.help import actions as help_actions
from fusionviz.ui.help.guides import GUIDES, WINDOW, pane_of
from fusionviz.ui.help.shortcuts import (
    CODE_KEYS,
    FALLBACK,
    NATIVE,
    plain_text,
    window_shortcuts,
)

DATA = Path(__file__).resolve().parents[1] / "data"
UI = Path(help_actions.__file__).resolve().parents[1]
GPT2 = DATA / "gpu_gpt2_train.json.gz"


@pytest.fixture(scope="module")
def gpt2(qapp, tmp_path_factory):
    """One shown window with the GPT-2 train trace open, for the whole module."""
    yield from shown_window(tmp_path_factory, GPT2, (1400, 900))


def _activate(window, qtbot) -> None:
    window.activateWindow()
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window, timeout=2000)


def test_the_sheet_lists_every_action_of_the_window_with_its_shortcut(gpt2):
    sheet = gpt2.help_actions.show_shortcuts()
    listed = {(r.keys, r.command) for r in sheet.rows}
    for action in gpt2.actions():
        keys = ", ".join(k.toString(NATIVE) for k in action.shortcuts())
        assert (keys, plain_text(action.text())) in listed, action.text()
    cells = {tuple(sheet.table.item(r, c).text() for c in range(3))
             for r in range(sheet.table.rowCount())}
    assert ("Ctrl+O", "Open Trace…", "File") in cells
    assert ("Alt+1", "Graphs", "View ▸ Panes") in cells
    assert ("F1", "What Is This Pane?", "Help") in cells
    # the panes' own shortcuts are there, each saying what it does
    assert ("Ctrl+\\", "Two kernels side by side (again: one)", "Kernel") in cells
    copy_rows = next(c for c in cells if c[1] == "Copy Selected Rows")
    assert copy_rows[0] == "Ctrl+C" and "Kernels" in copy_rows[2]
    assert not [c for c in cells if c[1] == FALLBACK]
    # the sheet's own table (Ctrl+C) is in a dialog: no key of the window's
    assert all(WINDOW not in r.panes for r in window_shortcuts(gpt2))
    sheet.close()


def test_an_action_added_to_the_window_shows_on_the_sheet(gpt2):
    extra = QAction("Brand &New Command", gpt2)
    extra.setShortcut(QKeySequence("Ctrl+Alt+N"))
    gpt2.addAction(extra)
    try:
        sheet = gpt2.help_actions.show_shortcuts()
        assert ("Ctrl+Alt+N", "Brand New Command", "Window") in {
            (r.keys, r.command, r.where) for r in sheet.rows}
    finally:
        gpt2.removeAction(extra)
        extra.deleteLater()
        sheet.close()


def test_the_sheet_filters_as_you_type_and_esc_closes_it(gpt2, qtbot):
    sheet = gpt2.help_actions.show_shortcuts()
    assert sheet.filter.hasFocus() or QApplication.focusWidget() is None
    total = len(sheet.rows)
    qtbot.keyClicks(sheet.filter, "ctrl+k")
    shown = sheet.shown_rows()
    assert shown and all("ctrl+k" in r.keys.casefold() for r in shown)
    assert [r.command for r in shown] == ["Kernels Only (one node per final kernel)"]
    sheet.filter.clear()
    qtbot.keyClicks(sheet.filter, "fold blocks")  # every word, in any column
    assert [r.keys for r in sheet.shown_rows()] == ["R"]
    sheet.filter.clear()
    assert len(sheet.shown_rows()) == total
    assert sheet.count.text().startswith(f"{total} of {total}")
    qtbot.keyClick(sheet.filter, Qt.Key.Key_Escape)
    assert not sheet.isVisible()


def test_ctrl_slash_opens_the_sheet(gpt2, qtbot):
    _activate(gpt2, qtbot)
    gpt2.graph_view.setFocus()
    qtbot.keyClick(gpt2.graph_view, Qt.Key.Key_Slash, Qt.KeyboardModifier.ControlModifier)
    assert gpt2.help_actions.sheet.isVisible()
    gpt2.help_actions.sheet.close()


def test_every_key_a_pane_reads_in_code_is_on_the_sheet():
    """A key compared in a keyPressEvent or eventFilter of fusionviz/ui, missing from
    CODE_KEYS, fails here (such keys are no shortcut the sheet could find)."""
    listed = {(module, key) for module, keys, _pane, _what in CODE_KEYS for key in keys}
    read = set()
    for path in UI.rglob("*.py"):
        source = path.read_text()
        if "def keyPressEvent" in source or "def eventFilter" in source:
            module = ".".join(path.relative_to(UI.parents[1]).with_suffix("").parts)
            read |= {(module, k) for k in re.findall(r"Qt\.Key\.(Key_\w+)", source)}
    assert ("fusionviz.ui.graph.view", "Key_Minus") in read  # the scan finds them
    assert read <= listed, sorted(read - listed)
    assert {pane for _m, _k, pane, _w in CODE_KEYS} <= set(GUIDES)


def test_every_dock_has_a_guide_naming_real_actions(gpt2):
    assert {dock.objectName() for dock in gpt2.docks.values()} <= set(GUIDES)
    for key, guide in GUIDES.items():
        assert 1 <= len(guide.lines) <= 6 and guide.title, key
        assert set(guide.actions) <= set(gpt2.actions_by_name), key
    assert pane_of(gpt2, gpt2.graph_view.viewport()) == "graph"
    assert pane_of(gpt2, gpt2.stepper.slider) == "stepper"
    assert pane_of(gpt2, gpt2.find_edit) == "find"
    assert pane_of(gpt2, None) == pane_of(gpt2, gpt2.statusBar()) == WINDOW
    tab = QLabel("a comparison")
    gpt2.show_view(tab, "comparison")
    assert pane_of(gpt2, tab) == "comparison"
    gpt2.views.removeTab(gpt2.views.indexOf(tab))
    tab.deleteLater()


def _focusable(dock) -> QWidget:
    """A widget inside ``dock`` that takes focus by click or tab."""
    for w in [dock.widget(), *dock.widget().findChildren(QWidget)]:
        if w.focusPolicy() != Qt.FocusPolicy.NoFocus and w.isVisible() and w.isEnabled():
            return w
    raise AssertionError(f"nothing in {dock.objectName()} takes focus")


def test_f1_on_a_focused_widget_opens_its_panes_guide(gpt2, qtbot):
    help_ = gpt2.help_actions
    for dock in gpt2.docks.values():
        dock.show()
        dock.raise_()
        _activate(gpt2, qtbot)
        widget = _focusable(dock)
        widget.setFocus()
        qtbot.waitUntil(widget.hasFocus, timeout=2000)
        qtbot.keyClick(widget, Qt.Key.Key_F1)
        guide = GUIDES[dock.objectName()]
        assert help_.guide.isVisible() and help_.guide.key == dock.objectName()
        text = help_.guide.text.text()
        assert guide.title in text and escape(guide.lines[0]) in text
        toggle = dock.toggleViewAction().shortcut().toString(NATIVE)
        assert (toggle, "Show or hide this pane") in help_.pane_keys(dock.objectName()) \
            or not toggle
        help_.guide.close()
    # the central graph: its keys come from the window's actions
    _activate(gpt2, qtbot)
    gpt2.graph_view.setFocus()
    qtbot.keyClick(gpt2.graph_view, Qt.Key.Key_F1)
    assert help_.guide.key == "graph"
    fold = gpt2.actions_by_name["fold_repeated"]
    assert ("R", plain_text(fold.text())) in help_.pane_keys("graph")
    assert "Why Not Fused?" in help_.guide.text.text()
    help_.guide.close()


def test_about_lists_the_versions_here_and_the_traces(gpt2, qtbot):
    about = gpt2.help_actions.show_about()
    shown = {label.text() for label in about.findChildren(QLabel)}
    env = gpt2.state.trace.env
    for value in (PySide6.__version__, qVersion(), env["torch"], env["triton"],
                  env["device_name"], env["cuda"]):
        assert value in shown, value
    assert f"PySide6: {PySide6.__version__}" in about.text
    assert f"  torch: {env['torch']}" in about.text  # the trace's, not this machine's
    assert f"torch (installed here): {help_actions.metadata.version('torch')}" in about.text
    assert GPT2.name in about.text
    copy = next(b for b in about.findChildren(QPushButton) if b.text() == "Copy")
    qtbot.mouseClick(copy, Qt.MouseButton.LeftButton)
    assert QGuiApplication.clipboard().text() == about.text
    about.close()


def test_the_modules_menu_names_the_graphs_repeated_blocks(gpt2):
    fold = gpt2.actions_by_name["fold_repeated"]
    for index in (0, 1):  # forward, backward
        gpt2.state.set_graph(index)
        run = repeated_runs(ModuleTree(gpt2.state.graph))[0]
        assert (run.paths[0], run.paths[-1]) == ("blocks.0", "blocks.11")
        assert fold.text() == "&Fold Repeated Blocks (blocks.0 … blocks.11 as one ×12 box)"
        assert fold.isEnabled()
    gpt2.state.set_graph(0)


def test_the_modules_menu_on_graphs_with_other_or_no_repeated_blocks(window, qtbot):
    fold = window.actions_by_name["fold_repeated"]
    assert fold.text() == "&Fold Repeated Blocks" and not fold.isEnabled()  # no trace
    assert window.open_trace(str(DATA / "gpu_moe_train.json.gz"))
    runs = repeated_runs(ModuleTree(window.state.graph))
    assert len(runs) == 5  # blocks ×4, and each block's experts ×8
    assert fold.text() == ("&Fold Repeated Blocks (blocks.0 … blocks.3 as one ×4 box, and "
                           "4 more runs)")
    assert window.open_trace(str(DATA / "cpu_mlp_block.json.gz"))
    assert fold.text() == "&Fold Repeated Blocks (none in this graph)"
    assert not fold.isEnabled()
    key = window.graph_view.folding.key
    _activate(window, qtbot)
    window.graph_view.setFocus()
    qtbot.keyClick(window.graph_view, Qt.Key.Key_R)  # disabled: R folds nothing
    assert window.graph_view.folding.key == key


def test_the_readme_opens_with_the_desktops_viewer(window, monkeypatch):
    opened = []
    monkeypatch.setattr(QDesktopServices, "openUrl",
                        lambda url: opened.append(url.toLocalFile()) or True)
    window.actions_by_name["readme"].trigger()
    assert opened == [str(help_actions.readme_path())]
    assert Path(opened[0]).read_text().startswith("# fusionviz")
    monkeypatch.setattr(QDesktopServices, "openUrl", lambda url: False)
    window.actions_by_name["readme"].trigger()
    assert window.errors and "README.md" in window.errors[-1]


def test_about_without_a_trace_lists_this_installation_only(window):
    about = window.help_actions.show_about()
    assert "fusionviz: " in about.text and "recorded with" not in about.text
    about.close()
