"""The main window's menus, actions and keyboard shortcuts, in one table.

Every command is a window action (so its shortcut works wherever focus is) and a menu
entry (so it can be discovered); the slots are bound methods of the window and its
parts (``MainWindow``, its stepper and graph view, ``ExperimentActions``).
"""

from __future__ import annotations

import functools
import os

from PySide6.QtGui import QAction, QKeySequence

from fusionviz.ui import storage
from fusionviz.ui.graph.eager_tint import SHORTCUT as TINT_SHORTCUT
from fusionviz.ui.plain import menu_text, tip

SEPARATOR = None


def menu_entries(window) -> tuple:
    """(menu, name, text, shortcut, slot) rows, the slots bound methods (a slot that does
    not exist fails here, when the window is built); SEPARATOR rows split a menu."""
    w, x, stepper, view = window, window.experiments, window.stepper, window.graph_view
    return (
        ("&File", "open_trace", "Open &Trace…", "Ctrl+O", w.open_trace_dialog),
        ("&File", "open_script", "Open and Capture &Script…", "Ctrl+Shift+O",
         w.open_script_dialog),
        ("&File", "capture_ranks", "Capture Script on Several Ranks (torchrun)…", "",
         w.capture_ranks_dialog),
        ("&File", "open_experiment", "Open E&xperiment…", "Ctrl+Shift+X",
         x.open_experiment_dialog),
        ("&File", "save_as", "Save Trace &As…", "Ctrl+Shift+S", w.save_trace_as_dialog),
        ("&File", "rerun", "&Re-run Last Script", "Ctrl+R", w.rerun),
        ("&File", "cancel", "&Cancel Capture or Experiment", "Esc", w.runner.cancel),
        ("&File", SEPARATOR),
        ("&File", "export_graph", "&Export Graph (PNG/SVG/PDF)…", "Ctrl+E",
         w.export_graph_dialog),
        ("&File", "export_ledger", "Export &Ledger (CSV/Markdown)…", "Ctrl+Shift+E",
         w.export_ledger_dialog),
        ("&File", SEPARATOR),
        ("&File", "editor", "Editor &Command… (opens source lines)", "", w.editor_dialog),
        ("&File", SEPARATOR),
        ("&File", "quit", "&Quit", "Ctrl+Q", w.close),
        ("&View", "fit", "&Fit Graph", "F", view.fit),
        ("&View", "zoom_in", "Zoom &In", "Ctrl+=", view.zoom_in),
        ("&View", "zoom_out", "Zoom &Out", "Ctrl+-", view.zoom_out),
        ("&View", "find", "&Find Node, Buffer or Op…", "Ctrl+F", w.show_find),
        ("&View", "kernels_only", "&Kernels Only (one node per final kernel)", "Ctrl+K",
         w.toggle_kernels_only),
        ("&View", "eager_tint", "&Tint Modules by Compiled vs Eager (red: slower)",
         TINT_SHORTCUT, view.toggle_eager_tint),
        ("&View", "whole_kernel", "Show &Whole Kernel of the Selection", "K",
         view.show_whole_kernel),
        ("&View", "wide_code", "Wide &Code (the kernel pane takes the width; again: back)",
         "Ctrl+Shift+C", w.toggle_wide_code),
        ("&View", "reset_layout", "&Reset Layout (fits this screen)", "Ctrl+Shift+L",
         w.reset_layout),
        ("&View", "dark", "&Dark Theme", "Ctrl+Shift+D", w.toggle_dark),
        # its text names the shown graph's repeated blocks (_fold_action)
        ("&Modules", "fold_repeated", "&Fold Repeated Blocks", "R", view.fold_repeated_blocks),
        ("&Modules", "expand_box", "&Expand Box (under the mouse, or holding the selection)",
         "E", view.expand_box),
        ("&Modules", "collapse_module", "&Collapse Module Around Selection (again: next out)",
         "C", view.collapse_selected_module),
        ("&Modules", "expand_all", "Expand &All Modules", "0", view.expand_all_modules),
        ("&Modules", "focus", "F&ocus on Selection (its 2-hop neighbourhood; again: all)",
         "Shift+F", view.focus_selection),
        ("&Modules", SEPARATOR),
        *(("&Modules", f"depth_{k}", f"Collapse Modules to Depth &{k}", str(k),
           functools.partial(view.collapse_to_depth, k)) for k in (1, 2, 3, 4)),
        ("&View", "next_graph", "Next &Graph", "Ctrl+PgDown", w.next_graph),
        ("&View", "prev_graph", "Previous Gr&aph", "Ctrl+PgUp", w.previous_graph),
        ("&Fusion", "first", "&Before Fusion", "Home", stepper.go_first),
        ("&Fusion", "prev", "&Previous Step", "Left", stepper.go_prev),
        ("&Fusion", "next", "&Next Step", "Right", stepper.go_next),
        ("&Fusion", "last", "&Final", "End", stepper.go_last),
        ("&Fusion", SEPARATOR),
        ("&Fusion", "filter_ledger", "Filter &Ledger by Reason…", "Ctrl+L",
         w.focus_ledger_filter),
        ("&Fusion", "why_not", "&Why Not Fused? (two selected nodes)", "Ctrl+W",
         w.why_not_fused),
        # Each recompiles the open trace's script in a child; ExperimentActions enables them.
        ("&Experiments", "sweep_rounds", "&Sweep Fusion Rounds (runtime after round k)",
         "Ctrl+Shift+K", x.sweep_rounds),
        ("&Experiments", "force_pair", "&Force Selected Pair", "", x.force_selected),
        ("&Experiments", "forbid_pair", "F&orbid Selected Pair", "", x.forbid_selected),
        ("&Experiments", "keep_spills", "&Keep Spilling Fusions (benchmark fusion)", "",
         x.keep_spills),
        ("&Experiments", "ab_settings", "&A/B Settings…", "", x.ab_dialog),
        ("&Experiments", SEPARATOR),
        ("&Experiments", "advise_measure", "&Measure the Advisor's Best Candidates (replays)",
         "Ctrl+Shift+M", w.advise_measure),
        ("&Experiments", "advise_measure_all", "Measure the Advisor's Best Candidates of "
         "Eve&ry Graph", "", functools.partial(w.advise_measure, every_graph=True)),
        ("&Experiments", "try_pair", "&Try Selected Pair in the Advisor (replay, timed)",
         "Ctrl+Shift+Y", w.try_pair),
        ("&Experiments", "open_advice", "Open Measured Ad&vice (fusionviz advise --json)…", "",
         w.open_advice_dialog),
        ("&Experiments", SEPARATOR),
        ("&Experiments", "open_experiment_2", "&Open Experiment Folder…", "",
         x.open_experiment_dialog),
        ("&Help", "shortcut_sheet", "&Keyboard Shortcuts…", "Ctrl+/",
         w.help_actions.show_shortcuts),
        ("&Help", "pane_guide", "&What Is This Pane?", "F1", w.help_actions.show_pane_guide),
        ("&Help", SEPARATOR),
        ("&Help", "readme", "&Read the Guide (README)…", "", w.help_actions.open_docs),
        ("&Help", "about", "&About fusionviz", "", w.help_actions.show_about),
    )


def build_menus(window) -> dict[str, QAction]:
    """Create every action and menu on ``window``; return the actions by name."""
    menus, actions = {}, {}
    bar = window.menuBar()
    for menu_title, *entry in menu_entries(window):
        menu = menus.get(menu_title) or menus.setdefault(menu_title, bar.addMenu(menu_title))
        if entry == [SEPARATOR]:
            menu.addSeparator()
            continue
        name, text, shortcut, slot = entry
        action = QAction(text, window)
        action.setShortcut(QKeySequence(shortcut))
        action.triggered.connect(lambda _checked=False, f=slot: f())
        menu.addAction(action)
        window.addAction(action)
        actions[name] = action
    actions["kernels_only"].setCheckable(True)
    _tint_action(window.graph_view, actions["eager_tint"])
    _fold_action(window.graph_view, actions["fold_repeated"])
    menus["&Experiments"].setToolTipsVisible(True)  # disabled entries say why
    _recent_menu(window, menus["&File"])
    _docks_menu(window, menus["&View"])
    return actions


def _tint_action(view, action: QAction) -> None:
    """Checked while the graph view tints modules; enabled where the graph has eager
    figures to tint them by."""
    action.setCheckable(True)

    def sync() -> None:
        action.setChecked(view.tint.on)
        action.setEnabled(view.tint.available)

    view.sig_eager_tint_changed.connect(sync)
    sync()


def _fold_action(view, action: QAction) -> None:
    """Named for the shown graph's repeated blocks; disabled where it has none."""
    base = action.text()

    def sync() -> None:
        what = view.repeated_blocks_text()  # module paths from the trace
        action.setText(f"{base} ({menu_text(what)})" if what else base)
        action.setToolTip(tip(f"Fold Repeated Blocks ({what})" if what else ""))
        action.setEnabled(bool(view.folding.runs))

    view.sig_folding_changed.connect(sync)  # also on every new graph or trace
    sync()


def _recent_menu(window, file_menu) -> None:
    for title, paths, at in (("Open &Recent", window.recent_files, 2),
                             ("Recent &Captures", _captures, 3)):
        _paths_menu(window, file_menu, title, paths, at)


def _captures() -> list[str]:
    return [str(p) for p in storage.recent_captures()]


def _paths_menu(window, file_menu, title: str, paths, at: int) -> None:
    menu = file_menu.addMenu(title)
    file_menu.insertMenu(file_menu.actions()[at], menu)
    menu.setToolTipsVisible(True)

    def fill() -> None:
        menu.clear()
        listed = paths()
        for path in listed:
            action = menu.addAction(menu_text(os.path.basename(path)))
            action.setToolTip(tip(path))  # a downloaded file may be named with tags
            action.triggered.connect(lambda _checked=False, p=path: window.open_path(p))
        menu.setEnabled(bool(listed))

    file_menu.aboutToShow.connect(fill)  # also when it was empty (and disabled) before
    fill()


def _docks_menu(window, view_menu) -> None:
    view_menu.addSeparator()
    panes = view_menu.addMenu("&Panes")
    for k, dock in enumerate(window.docks.values(), start=1):
        toggle = dock.toggleViewAction()
        if k <= 10:  # Alt+1 … Alt+9, then Alt+0 (there is no Alt+10 key)
            toggle.setShortcut(QKeySequence(f"Alt+{k % 10}"))
        panes.addAction(toggle)
        window.addAction(toggle)
