"""What-if experiments from the explorer: the Experiments menu, the ledger and graph
context menus, running ``fusionviz experiment`` as a child and opening its comparison.

The run goes through the window's ``RunController`` (job ``EXPERIMENT``: progress and
Cancel as for a capture); its argv comes from ``experiment.runs.experiment_argv``. Every
experiment recompiles the open trace's script, so all of them are disabled, with the
reason as tooltip, when no trace is open or its script is not on this machine.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, QPoint, Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu, QWidget

from fusionviz.model.experiment.runs import read_experiment
from fusionviz.model.trace import Trace
from fusionviz.ui import desktop
from fusionviz.ui.compare.window import CompareWindow
from fusionviz.ui.ledger.pane import row_pair
from fusionviz.ui.plain import menu_text, tip
from fusionviz.ui.run.ab_dialog import ABDialog
from fusionviz.ui.run.controller import EXPERIMENT, RANKS, RunController
from fusionviz.ui.view_state import ViewState

# action name (in ui/menus.py) → what it needs besides a runnable script
ACTIONS = {"sweep_rounds": "", "force_pair": "pair", "forbid_pair": "pair",
           "keep_spills": "gpu", "ab_settings": ""}
_NEED_PAIR = "Select two nodes first (click one, Ctrl+click the other)."
_NEED_GPU = ("Benchmark fusion times Triton kernels; this trace compiled for the CPU's C++ "
             "backend, which Inductor does not benchmark (no spill veto to lift).")
DOING = {"sweep": "sweeping fusion rounds of", "force": "forcing a pair in",
         "forbid": "forbidding a pair in", "keep_spills": "timing spilling fusions of",
         "ab": "A/B settings on"}


def blocker(trace: Trace | None) -> str:
    """Why no experiment can run on ``trace`` ("" when one can)."""
    if trace is None:
        return "Open a trace or capture a script first."
    path = trace.script.path
    if not path:
        return "This trace does not name the script it came from."
    if not os.path.isfile(path):
        return f"The trace's script is not on this machine: {path}"
    return ""


def device_of(trace: Trace) -> str:
    """The device the trace compiled for, so variants compile for the same one."""
    devices = {g.device.split(":")[0] for g in trace.graphs}
    return "cuda" if "cuda" in devices else ("cpu" if devices == {"cpu"} else "auto")


def _cpp_only(trace: Trace) -> bool:
    return device_of(trace) == "cpu" and trace.config.get("cpu_backend", "cpp") != "triton"


def ledger_rule(row: dict) -> tuple[str, str] | None:
    """The pair rule for a ledger row: one pre-fusion node of each side (a rule matches
    any candidate that joins the group holding one to the group holding the other)."""
    pair = row_pair(row)
    if pair is None or not pair[0] or not pair[1]:
        return None
    return pair[0][0], pair[1][0]


@dataclass(frozen=True)
class WindowHooks:
    """What the experiments need of the window they run for."""

    start_run: Callable[..., bool]
    """(script, doing, job=, **options): start a child run with progress; False if not."""
    capture_options_of: Callable[[str], dict]
    """The options a script was last captured with in this session."""
    show_error: Callable[[str], None]
    show_status: Callable[[str], None]
    open_trace: Callable[[str], bool]
    why_not_fused: Callable[[], object]
    show_view: Callable[[QWidget, str], None]
    """Show a comparison in the window (a tab of its own) under a title."""
    try_pair: Callable[[tuple[str, str]], None]
    """Replay the shown graph with the pair fused and time it (the Advisor pane)."""


class ExperimentActions(QObject):
    """Runs experiments on the trace in ``state`` and opens their comparison windows.

    ``bind_actions`` hands it the menu actions it enables and disables; the window
    shows its context menus (``ledger_menu``, ``popup_graph_menu``).
    """

    def __init__(self, state: ViewState, runner: RunController, hooks: WindowHooks,
                 parent: QWidget) -> None:
        super().__init__(parent)
        self.state, self.runner, self.hooks, self.parent_widget = state, runner, hooks, parent
        self.actions: dict[str, QAction] = {}
        self.compare_windows: list[CompareWindow] = []
        self.dialog: ABDialog | None = None
        self._texts: dict[str, str] = {}  # menu texts before a selected pair was added
        runner.sig_finished.connect(self._on_finished)
        state.sig_trace_changed.connect(self.update_actions)
        state.sig_selection_changed.connect(self.update_actions)

    def bind_actions(self, actions: dict[str, QAction]) -> None:
        """The menu actions named in ``ACTIONS``, enabled from now on as they apply."""
        self.actions = actions
        self.update_actions()

    # ---- enabling ---------------------------------------------------------------------------
    def why_not(self, need: str = "") -> str:
        trace = self.state.trace
        why = blocker(trace)
        if not why and need == "pair" and len(self.state.selected_nodes) != 2:
            why = _NEED_PAIR
        if not why and need == "gpu" and _cpp_only(trace):
            why = _NEED_GPU
        return why

    def update_actions(self) -> None:
        sel = self.state.selected_nodes
        for name, need in ACTIONS.items():
            action = self.actions.get(name)
            if action is None:
                continue
            why = self.why_not(need)
            action.setEnabled(not why)
            text = self._texts.setdefault(name, action.text())
            said = text.replace("&", "")  # the tooltip: the entry without its shortcut key
            if need == "pair" and len(sel) == 2:
                text = f"{text} ({menu_text(sel[0])} × {menu_text(sel[1])})"
                said = f"{said} ({sel[0]} × {sel[1]})"
            action.setText(text)
            # node names and the script's path are the trace's: shown as text
            action.setToolTip(tip(why or said))
            action.setStatusTip(why)

    # ---- the experiments --------------------------------------------------------------------
    def run(self, kind: str, **options) -> bool:
        """Start experiment ``kind`` on the open trace's script; False (and why) if not."""
        why = self.why_not("")
        if why:
            self.hooks.show_error(why)
            return False
        trace = self.state.trace
        script = trace.script.path
        options.setdefault("device", device_of(trace))
        # Variants compile as the explored capture did (mode, benchmark fusion).
        captured = self.hooks.capture_options_of(script)
        if captured.get("mode"):
            options.setdefault("mode", captured["mode"])
        if (captured.get("benchmark_fusion") or trace.config.get("benchmark_fusion")) \
                and kind != "ab":
            options.setdefault("benchmark_fusion", True)
        return self.hooks.start_run(script, DOING.get(kind, f"{kind} experiment on"),
                                    job=EXPERIMENT, kind=kind, script_args=trace.script.argv,
                                    **options)

    def sweep_rounds(self) -> bool:
        return self.run("sweep")

    def keep_spills(self) -> bool:
        why = self.why_not("gpu")
        if why:
            self.hooks.show_error(why)
            return False
        return self.run("keep_spills")

    def force_selected(self) -> bool:
        return self._selected_pair("force")

    def forbid_selected(self) -> bool:
        return self._selected_pair("forbid")

    def _selected_pair(self, kind: str) -> bool:
        sel = self.state.selected_nodes
        if len(sel) != 2:
            self.hooks.show_error(_NEED_PAIR)
            return False
        return self.run(kind, pairs=[tuple(sel)], graph=self.state.graph_index)

    def ab_dialog(self) -> ABDialog | None:
        why = self.why_not("")
        if why:
            self.hooks.show_error(why)
            return None
        self.dialog = ABDialog(self.state.trace.config, self.parent_widget)
        self.dialog.sig_run.connect(lambda a, b: self.run("ab", config=b, config_a=a))
        self.dialog.show()
        return self.dialog

    # ---- context menus (built here, shown non-blocking with popup) ------------------------
    def pair_menu(self, pair: tuple[str, str] | None, title: str = "") -> QMenu:
        """Force / forbid ``pair`` (or disabled entries saying what is missing)."""
        menu = QMenu(title, self.parent_widget)
        menu.setToolTipsVisible(True)
        why = blocker(self.state.trace) or ("" if pair else _NEED_PAIR)
        label = f"{pair[0]} × {pair[1]}" if pair else "selected pair"
        for kind, text in (("force", "Force"), ("forbid", "Forbid")):
            action = menu.addAction(f"{text} {menu_text(label)} (recompile and compare)")
            action.setEnabled(not why)
            action.setToolTip(tip(why or f"Recompile with fusion of {label} "
                                  f"{'forced where legal' if kind == 'force' else 'forbidden'}"))
            action.triggered.connect(lambda _c=False, k=kind: self.run(
                k, pairs=[pair], graph=self.state.graph_index))
        advise = menu.addAction(f"Try {menu_text(label)} in the Advisor (replay this graph "
                                "alone, timed)")
        advise.setEnabled(pair is not None and self.state.graph is not None)
        advise.setToolTip(tip("Compile only this graph again with the pair fused, without "
                              "your script, and time it beside baseline replays"))
        advise.triggered.connect(lambda _c=False: self.hooks.try_pair(pair))
        menu.addSeparator()
        sweep = menu.addAction("Sweep Fusion Rounds", self.sweep_rounds)
        sweep.setEnabled(not blocker(self.state.trace))
        return menu

    def ledger_menu(self, row: dict) -> QMenu:
        return self.pair_menu(ledger_rule(row))

    def graph_menu(self, _node: str) -> QMenu:
        sel = self.state.selected_nodes
        menu = self.pair_menu(tuple(sel) if len(sel) == 2 else None)
        why = menu.addAction("Why Not Fused?", self.hooks.why_not_fused)
        why.setEnabled(len(sel) == 2)
        return menu

    def popup_graph_menu(self, node: str, pos: QPoint) -> None:
        self.graph_menu(node).popup(pos)

    # ---- results -----------------------------------------------------------------------------
    def _on_finished(self, path: str) -> None:
        if self.runner.job in (EXPERIMENT, RANKS):  # a folder of captures to compare
            self.open_experiment(path, written=True, cancelled=self.runner.cancelled)
            if self.runner.write_problem:
                self.hooks.show_error("Some rank's trace could not be written to the end: "
                                      f"{self.runner.write_problem}")

    def open_experiment(self, folder: str, *, written: bool = False,
                        cancelled: bool = False) -> CompareWindow | None:
        """Open the comparison of an experiment folder in a tab of the window; an
        explorer with nothing open gets the experiment's baseline trace too.
        ``written``: the experiment was just run (the status bar says so);
        ``cancelled``: the user stopped it (so no dialog says that it did not finish)."""
        try:
            experiment = read_experiment(folder)
        except ValueError as e:
            self.hooks.show_error(f"Cannot open the experiment: {e}")
            return None
        failed = [f"{v.label} ({v.trace.script.status})" for v in experiment.variants
                  if v.trace.script.status != "ok"]
        if failed and not cancelled:
            what = "ranks" if experiment.kind == "ranks" else "captures of the experiment"
            self.hooks.show_error(f"Some {what} did not finish cleanly: {', '.join(failed)}; "
                                  "their numbers may be partial.")
        view = CompareWindow(experiment, folder)
        view.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        view.sig_open_trace.connect(self.hooks.open_trace)
        view.destroyed.connect(lambda _o=None, v=view: self._forget(v))
        self.compare_windows.append(view)
        if self.state.trace is None and experiment.variants:
            self.hooks.open_trace(str(Path(folder) / experiment.variants[0].file))
        self.hooks.show_view(view, f"{experiment.kind}: {Path(experiment.script).name}")
        done = ("cancelled; what each capture had recorded is in" if cancelled
                else "written to" if written else "opened from")
        self.hooks.show_status(f"{experiment.kind} experiment ({len(experiment.variants)} "
                               f"captures) {done} {folder}; its comparison is in its own tab")
        return view

    def close_windows(self) -> None:
        """Close the comparisons and the A/B dialog (the explorer is closing)."""
        for view in list(self.compare_windows):
            view.close()
        self.compare_windows.clear()
        if self.dialog is not None:
            self.dialog.close()

    def _forget(self, view: CompareWindow) -> None:
        if view in self.compare_windows:
            self.compare_windows.remove(view)

    def open_experiment_dialog(self) -> None:
        folder = desktop.open_folder(self.parent_widget, self.parent_widget.settings,
                                     "Open experiment folder")
        if folder:
            self.open_experiment(folder)
