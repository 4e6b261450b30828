"""The main window: docks, menus and shortcuts wiring the panels to one ViewState.

It owns no analysis: it opens traces (``window/opening``), starts captures
(``run/commands``, ``RunController``; experiments go through ``ExperimentActions``),
routes errors to ``show_error`` and remembers layout and recent files in QSettings
(``window/layout``, ``window/files``).
"""

from __future__ import annotations

import os

from PySide6.QtCore import QEvent, QSettings, Qt
from PySide6.QtWidgets import (
    QDockWidget,
    QLabel,
    QLineEdit,
    QMainWindow,
    QMessageBox,
    QPlainTextEdit,
    QTabBar,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model import validate
from fusionviz.model.report.script_status import script_failure
from fusionviz.model.validate import Problems
from fusionviz.model.whatif import WHAT_IFS
from fusionviz.ui import desktop, export
from fusionviz.ui.advisor.pane import AdvisorPane
from fusionviz.ui.charts.pane import ChartsPane
from fusionviz.ui.details_pane import DetailsPane
from fusionviz.ui.eager.pane import EagerPane
from fusionviz.ui.fusion_stepper import FusionStepper
from fusionviz.ui.graph.outline import ModuleOutline
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.graphs_list import GraphsList
from fusionviz.ui.help.actions import HelpActions
from fusionviz.ui.idle_work import IdleWork
from fusionviz.ui.kernel.pane import KernelPane
from fusionviz.ui.kernel.table import KernelTable
from fusionviz.ui.ledger.pane import LedgerPane
from fusionviz.ui.menus import build_menus
from fusionviz.ui.plain import SafeBrowser, menu_text, plain
from fusionviz.ui.problem_strip import ProblemStrip, WithStrip
from fusionviz.ui.run.commands import RunCommands
from fusionviz.ui.run.controller import RunController, RunProgress
from fusionviz.ui.run.experiments import ExperimentActions, WindowHooks
from fusionviz.ui.run.rank_chooser import RankChooser
from fusionviz.ui.theme import apply_theme, is_dark
from fusionviz.ui.view_state import ViewState
from fusionviz.ui.window.advisor_commands import AdvisorCommands
from fusionviz.ui.window.files import FileCommands
from fusionviz.ui.window.layout import WindowLayout
from fusionviz.ui.window.notices import WindowNotices
from fusionviz.ui.window.opening import TraceOpening


class MainWindow(TraceOpening, RunCommands, FileCommands, AdvisorCommands, WindowNotices,
                 QMainWindow):
    """Explorer window around one ``ViewState``: the docks, status bar and signals wired
    here; opening traces, runs, files, the Advisor's commands and Notices in its parts."""

    def __init__(self, state: ViewState | None = None, settings: QSettings | None = None):
        super().__init__()
        self.state = state or ViewState(self)
        self.settings = settings or QSettings()
        self.errors: list[str] = []
        self.runner = RunController(self)
        self._last_script = ("", {})
        self.setWindowTitle("fusionviz")
        self.setAcceptDrops(True)
        self.setDockNestingEnabled(True)
        self._build_center()
        self._build_docks()
        self._build_status()
        self._build_actions()
        self._connect()
        self._restore()

    # ---- construction ------------------------------------------------------------------
    def _build_center(self) -> None:
        self.graph_view = GraphView(self.state)
        self.stepper = FusionStepper(self.state)
        self.find_edit = QLineEdit()
        self.find_edit.setPlaceholderText("find node, buffer or op (Enter: next)…")
        self.find_edit.setClearButtonEnabled(True)
        self.find_bar = QToolBar("Find")
        self.find_bar.addWidget(self.find_edit)
        self.find_hits = QLabel()
        self.find_bar.addWidget(self.find_hits)
        self.find_bar.hide()
        self.find_edit.installEventFilter(self)
        close = self.find_bar.addAction("✕", self.hide_find)
        close.setToolTip("Close the find bar (Esc)")
        center = QWidget()
        box = QVBoxLayout(center)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        # Where the part of the trace a view shows does not hold together, the view says
        # so above itself (validate's problems by view); Notices lists them all.
        self.strips = {validate.GRAPH: ProblemStrip("This graph"),
                       validate.ROUNDS: ProblemStrip("This graph's fusion record"),
                       validate.KERNELS: ProblemStrip("This graph's kernel record"),
                       validate.DETAILS: ProblemStrip("This graph's node details"),
                       validate.ENTRIES: ProblemStrip("The compiled-vs-eager record")}
        for strip in self.strips.values():
            strip.sig_clicked.connect(self._front_notices)
        for w in (self.stepper, self.find_bar, self.strips[validate.GRAPH], self.graph_view):
            box.addWidget(w)
        # Comparisons open as closable tabs beside the explorer (the tab bar shows
        # only then), not as windows over it.
        self.views = QTabWidget()
        self.views.setDocumentMode(True)
        self.views.setTabsClosable(True)
        self.views.setTabBarAutoHide(True)
        self.views.addTab(center, "Explorer")
        self.views.tabBar().setTabButton(0, QTabBar.ButtonPosition.RightSide, None)
        self.views.tabCloseRequested.connect(self._close_view)
        self.views.currentChanged.connect(self._on_view_changed)
        self._explorer_state = None  # the docks' state, while a comparison is in front
        self.setCentralWidget(self.views)

    def show_view(self, widget: QWidget, title: str) -> None:
        """Show ``widget`` (a comparison) in a tab of its own and bring it to the front."""
        self.views.setCurrentIndex(self.views.addTab(widget, menu_text(title)))

    def _on_view_changed(self, index: int) -> None:
        """The explorer's docks belong to its tab: a comparison gets the whole window."""
        if not self._shown:
            return  # the first show arranges the docks, then comes back here
        if index > 0 and self._explorer_state is None:
            self._explorer_state = self.saveState()
            for dock in self.docks.values():
                if not dock.isFloating():
                    dock.hide()
        elif index == 0 and self._explorer_state is not None:
            self.restoreState(self._explorer_state)
            self._explorer_state = None

    def _close_view(self, index: int) -> None:
        if index > 0:
            widget = self.views.widget(index)
            self.views.removeTab(index)
            widget.close()

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)  # saveState/restoreState key
        dock.setWidget(widget)
        self.addDockWidget(area, dock)
        return dock

    def _build_docks(self) -> None:
        left, right = Qt.DockWidgetArea.LeftDockWidgetArea, Qt.DockWidgetArea.RightDockWidgetArea
        bottom = Qt.DockWidgetArea.BottomDockWidgetArea
        self.graphs_list = GraphsList(self.state)
        self.ledger = LedgerPane(self.state)
        self.notices = SafeBrowser()  # escaped lines; nothing loaded or followed
        self.output = QPlainTextEdit()
        self.output.setReadOnly(True)
        self.output.setMaximumBlockCount(5000)
        self.kernel_pane = KernelPane(self.state)
        self.details_pane = DetailsPane(self.state)
        self.details_pane.sig_open_source.connect(self.open_source)
        self.charts_pane = ChartsPane(self.state)
        self.kernel_table = KernelTable(self.state)
        self.eager_pane = EagerPane(self.state)
        self.advisor = AdvisorPane(self.state)
        self.module_outline = ModuleOutline(self.state, self.graph_view)
        self.docks = {
            "graphs": self._dock("Graphs", "dock_graphs", self.graphs_list, left),
            "modules": self._dock("Modules", "dock_modules", self.module_outline, left),
            "notices": self._dock("Notices", "dock_notices", self.notices, left),
            "kernel": self._dock("Kernel", "dock_kernel", self.kernel_pane, right),
            "details": self._dock("Details", "dock_details", WithStrip(
                self.details_pane, self.strips[validate.DETAILS]), right),
            "ledger": self._dock("Fusion ledger", "dock_ledger", WithStrip(
                self.ledger, self.strips[validate.ROUNDS]), bottom),
            "kernels": self._dock("Kernels", "dock_kernels", WithStrip(
                self.kernel_table, self.strips[validate.KERNELS]), bottom),
            "charts": self._dock("Charts", "dock_charts", self.charts_pane, bottom),
            "eager": self._dock("Compiled vs eager", "dock_eager", WithStrip(
                self.eager_pane, self.strips[validate.ENTRIES]), bottom),
            "advisor": self._dock("Advisor", "dock_advisor", self.advisor, bottom),
            "output": self._dock("Script output", "dock_output", self.output, bottom),
        }
        self.docks["advisor"].visibilityChanged.connect(self.advisor.set_on_screen)
        self.docks["eager"].visibilityChanged.connect(self.eager_pane.shown.set_on_screen)
        self.docks["kernels"].visibilityChanged.connect(self.kernel_table.shown.set_on_screen)
        self.advisor.sig_compare.connect(self._compare_replays)

    def _build_status(self) -> None:
        # In idle time after an open: build the lazily loaded rest of the trace, then
        # prepare every fusion step of the shown graph (first visits get instant).
        self.completer = IdleWork(self, pause_gc=True)
        self.completer.sig_progress.connect(self._on_completer_progress)
        self.completer.sig_done.connect(self._on_completer_done)
        # the idle reader and the panes report a bad part through the state: once each
        self.completer.sig_failed.connect(self.state.report_unreadable)
        self.state.sig_unreadable.connect(self._on_unreadable)
        self._unreadable: list[str] = []  # this trace's bad parts, as reported
        self.warmer = IdleWork(self)
        self._opening = False
        self._full_trace = None  # the trace as loaded, while kernels only are shown
        self._full_view: tuple = (-1,)  # its graph, step, selection, folds when hidden
        # (graph, its Problems, rounds and details checked); (trace, its Problems)
        self._checked: tuple = (None, Problems(), False)
        self._checks: dict[int, tuple] = {}  # the last few graphs' _checked, by id
        self._trace_checked: tuple = (None, Problems())
        self.env_label = plain(QLabel())  # torch, triton, device: as the trace says
        # One rank's trace of a multi-rank capture: switch the explorer to another rank.
        self.rank_selector = RankChooser()
        self.rank_selector.sig_open.connect(self.open_trace)
        self.notice_label = QLabel()
        self.progress = RunProgress(self.runner)
        bar = self.statusBar()
        bar.addWidget(self.progress)
        bar.addPermanentWidget(self.notice_label)
        bar.addPermanentWidget(self.rank_selector)
        bar.addPermanentWidget(self.env_label)

    def _build_actions(self) -> None:
        hooks = WindowHooks(
            start_run=self.start_run, capture_options_of=self.capture_options_of,
            show_error=self.show_error, open_trace=self.open_trace,
            why_not_fused=self.why_not_fused, show_view=self.show_view,
            try_pair=self.try_pair,
            show_status=lambda text: self.statusBar().showMessage(text, 10000))
        self.experiments = ExperimentActions(self.state, self.runner, hooks, self)
        self.help_actions = HelpActions(self)  # the Help menu's commands
        self.actions_by_name = build_menus(self)
        self.experiments.bind_actions(self.actions_by_name)
        self.ledger.sig_row_menu.connect(self._ledger_menu)
        self.graph_view.sig_node_menu.connect(self.experiments.popup_graph_menu)

    def _connect(self) -> None:
        self.state.sig_trace_changed.connect(self._on_trace_changed)
        self.state.sig_graph_changed.connect(self._on_graph_changed)
        self.find_edit.returnPressed.connect(self._on_find)
        self.graph_view.sig_hits_changed.connect(
            lambda n: self.find_hits.setText(f" {n} match{'es' if n != 1 else ''} "))
        self.runner.sig_output.connect(self.output.appendPlainText)
        self.progress.sig_text.connect(self._on_progress_text)
        self.runner.sig_finished.connect(self._on_run_finished)
        self.eager_pane.sig_measure_cudagraphs.connect(lambda script: self.run_script(
            script, **{**self.capture_options_of(script), "what_if": WHAT_IFS[:1]}))
        self.runner.sig_failed.connect(self._on_run_failed)

    # ---- errors, and reacting to the view state ---------------------------------------------
    def show_error(self, message: str) -> None:
        """Report an error without blocking: a non-modal box (tests read ``errors``)."""
        self.errors.append(message)
        self.statusBar().showMessage(message.splitlines()[0], 10000)
        box = QMessageBox(QMessageBox.Icon.Warning, "fusionviz", message.split("\n\n")[0],
                          QMessageBox.StandardButton.Ok, self)
        plain(box)  # the message quotes paths and names from the trace: never markup
        if "\n\n" in message:
            box.setDetailedText(message.split("\n\n", 1)[1])
        box.setModal(False)
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.show()

    def _on_trace_changed(self) -> None:
        trace = self.state.trace
        name = os.path.basename(self.state.path) if self.state.path else ""
        if name and self.kernels_only:
            name += " (kernels only)"
        self.setWindowTitle(f"fusionviz — {name}" if name else "fusionviz")
        env = trace.env if trace is not None else {}
        parts = [f"{k} {env[k]}" for k in ("torch", "triton") if env.get(k)]
        device = env.get("device_name") or env.get("device")
        if device:
            parts.append(str(device))
        self.env_label.setText(" · ".join(parts))
        if trace is not None and not trace.graphs and trace.script.status not in ("ok", "running"):
            self.graph_view.set_message(script_failure(trace.script, 0).split("\n\n")[0])
        self.rank_selector.show_ranks(self.state.path)
        self._show_notices()

    def _on_graph_changed(self, _index: int) -> None:
        self._prepare_steps()  # idle work, first the details check Notices waits for
        self._show_notices()
        if self.find_edit.text():
            self.graph_view.find(self.find_edit.text())

    # ---- commands -------------------------------------------------------------------------
    def show_find(self) -> None:
        self.find_bar.show()
        self.find_edit.setFocus()
        self.find_edit.selectAll()

    def hide_find(self) -> None:
        self.find_bar.hide()
        self.graph_view.setFocus()

    def eventFilter(self, watched, event) -> bool:  # noqa: N802 (Qt override)
        """Esc in the find field closes the find bar, also while Esc would cancel a run."""
        if watched is self.find_edit and event.type() in (
                QEvent.Type.ShortcutOverride, QEvent.Type.KeyPress) \
                and event.key() == Qt.Key.Key_Escape:
            event.accept()
            if event.type() == QEvent.Type.KeyPress:
                self.hide_find()
            return True
        return super().eventFilter(watched, event)

    def _on_find(self) -> None:
        text = self.find_edit.text()
        if text and text == getattr(self, "_last_find", None):
            self.graph_view.find_next()
        else:
            self.graph_view.find(text)
        self._last_find = text

    def focus_ledger_filter(self) -> None:
        self.docks["ledger"].show()
        self.docks["ledger"].raise_()
        self.ledger.reason.setFocus()
        self.ledger.reason.selectAll()

    def next_graph(self, step: int = 1) -> None:
        trace = self.state.trace
        if trace is not None and trace.graphs:
            self.state.set_graph((self.state.graph_index + step) % len(trace.graphs))

    def previous_graph(self) -> None:
        self.next_graph(-1)

    def _ledger_menu(self, row: dict, pos) -> None:
        """A ledger row's menu: what to try with its pair, then Copy Selected Rows."""
        menu = self.experiments.ledger_menu(row)
        menu.addSeparator()
        menu.addAction(self.ledger.row_copy)
        menu.popup(pos)

    def set_dark(self, dark: bool) -> None:
        apply_theme(dark)
        self.graph_view.set_dark(dark)
        self.settings.setValue("dark", dark)

    def toggle_dark(self) -> None:
        self.set_dark(not is_dark())

    def export_graph_dialog(self) -> None:
        path = desktop.save_file(self, self.settings, "Export graph", "graph.png",
                                 export.GRAPH_FORMATS)
        if path:
            self._try_export(export.export_graph, self.graph_view, path)

    def export_ledger_dialog(self) -> None:
        path = desktop.save_file(self, self.settings, "Export ledger", "ledger.csv",
                                 export.LEDGER_FORMATS)
        if path:
            self._try_export(export.export_ledger, self.ledger.shown_rows, path)

    def _try_export(self, fn, what, path: str) -> None:
        try:
            written = fn(what, path)
        except OSError as e:
            self.show_error(f"Export failed: {e}")
            return
        self.statusBar().showMessage(f"wrote {written}", 5000)

    # ---- layout persistence -----------------------------------------------------------------
    def _restore(self) -> None:
        self.window_layout = WindowLayout(self, self.docks, self.settings)
        self.window_layout.restore_geometry()
        self._shown = False
        self.set_dark(str(self.settings.value("dark", False)).lower() == "true")

    def save_layout(self) -> None:
        self.window_layout.save(self._explorer_state or self.saveState())

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        if self._shown:
            return
        # Dock arrangement waits for the first show: tabifying or restoring before the
        # window was ever laid out leaves stray, visible tab bars behind (Qt 6.11).
        self._shown = True
        self.window_layout.restore_docks()
        if not self.window_layout.restored:
            self.docks["notices"].setVisible(bool(self.notice_lines()))
        if self.views.currentIndex() > 0:  # a comparison opened before the first show
            self._on_view_changed(self.views.currentIndex())

    def reset_layout(self) -> None:
        """View ▸ Reset Layout: the first-run docks for this window and screen."""
        self.views.setCurrentIndex(0)
        self.window_layout.reset()
        self.docks["notices"].setVisible(bool(self.notice_lines()))

    def toggle_wide_code(self) -> None:
        """View ▸ Wide Code: the kernel pane takes the side docks' and the graph's width."""
        self.views.setCurrentIndex(0)
        self.window_layout.toggle_wide_code()

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.save_layout()
        self.completer.stop()
        self.warmer.stop()
        self.experiments.close_windows()
        if self.runner.running:
            self.runner.cancel()
            self.runner.wait(5000)
        super().closeEvent(event)
