"""The main window: docks, menus and shortcuts wiring the panels to one ViewState.

It owns no analysis: it opens traces, starts captures (``RunController``; experiments
go through ``ExperimentActions``), routes errors to ``show_error`` and remembers
layout and recent files in QSettings.
"""

from __future__ import annotations

import os
from dataclasses import replace
from html import escape
from pathlib import Path

from PySide6.QtCore import QEvent, QSettings, Qt
from PySide6.QtWidgets import (
    QComboBox,
    QDockWidget,
    QInputDialog,
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

from fusionviz.model import lazy, validate
from fusionviz.model.errors import TraceError
from fusionviz.model.experiment.ranks import rank_siblings
from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.gc_pause import gc_paused
from fusionviz.model.kernel_graph import kernel_graph
from fusionviz.model.queries import load_warning
from fusionviz.model.report.formatting import comm_pass_text
from fusionviz.model.report.script_status import script_failure
from fusionviz.model.report.torch_versions import unverified_note
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.tracefile.save_as import save_trace_as
from fusionviz.model.validate import (
    Problems,
    detail_problems,
    graph_problems,
    trace_problems,
)
from fusionviz.model.whatif import WHAT_IFS
from fusionviz.ui import desktop, editor, export
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
from fusionviz.ui.ledger.why_not import WhyNotDialog
from fusionviz.ui.menus import build_menus
from fusionviz.ui.plain import SafeBrowser, menu_text, plain
from fusionviz.ui.problem_strip import ProblemStrip, WithStrip
from fusionviz.ui.run.controller import CAPTURE, RANKS, RunController, RunProgress
from fusionviz.ui.run.experiments import ExperimentActions, WindowHooks
from fusionviz.ui.theme import apply_theme, is_dark
from fusionviz.ui.view_state import ViewState
from fusionviz.ui.window.layout import WindowLayout

MAX_RECENT = 10
TRACE_FILTER = "fusionviz traces (*.json *.json.gz *.gz);;All files (*)"
_COMPLETING = "Reading the rest of the trace (node details, ledgers)…"


class MainWindow(QMainWindow):
    """Explorer window around one ``ViewState``."""

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
        self._trace_checked: tuple = (None, Problems())
        self.env_label = plain(QLabel())  # torch, triton, device: as the trace says
        # One rank's trace of a multi-rank capture: switch the explorer to another rank.
        self.rank_selector = QComboBox()
        self.rank_selector.setToolTip("This trace is one rank of a multi-process capture: "
                                      "pick another rank to explore")
        self.rank_selector.hide()
        self.rank_selector.currentIndexChanged.connect(self._on_rank_chosen)
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

    # ---- opening things ------------------------------------------------------------------
    def open_path(self, path: str, capture_options: dict | None = None) -> bool:
        """A ``.py`` file is captured, an experiment folder compared, anything else is
        opened as a trace."""
        if path.endswith(".py"):
            return self.run_script(path, **(capture_options or {}))
        if os.path.isdir(path):
            return self.experiments.open_experiment(path) is not None
        return self.open_trace(path)

    def open_trace(self, path: str) -> bool:
        self.views.setCurrentIndex(0)  # the explorer's tab, also from a comparison
        self.completer.stop()
        self.warmer.stop()
        self.set_kernels_only(False)
        self._unreadable = []
        self.state.forget_unreadable()
        self._opening = True  # the steps are prepared after the rest is read
        try:
            # No GC while a trace is built and laid out, then frozen (see gc_pause).
            # The bulk (node details, ledgers) is built on first read and by the
            # completer in idle time: a 20k-node trace is on screen in half the time.
            with gc_paused(freeze=True):
                trace = load_trace(path, lazy=True)
                self.state.set_trace(trace, path)
        except TraceError as e:
            self.show_error(f"Cannot open the trace: {e}")
            return False
        finally:
            self._opening = False
        self.add_recent(path)
        self._output_of(path)
        self.completer.start(lazy.complete(trace))
        return True

    def _output_of(self, path: str) -> None:
        """The Script output pane keeps the output of the run that wrote ``path`` (or of
        a run still going); another trace's script output is not known: it says so."""
        ran = self.runner.out_path
        if self.runner.running or (ran and Path(ran).resolve() in (
                Path(path).resolve(), *Path(path).resolve().parents)):
            return
        self.output.setPlainText(
            f"No script output for {Path(path).name}: a trace does not keep its script's "
            "output. It shows here while fusionviz runs a script (File > Open and Capture "
            "Script).")

    # ---- kernels only -------------------------------------------------------------------
    @property
    def kernels_only(self) -> bool:
        return self._full_trace is not None

    def toggle_kernels_only(self) -> None:
        self.set_kernels_only(not self.kernels_only)

    def set_kernels_only(self, on: bool) -> None:
        """Show every graph collapsed to its final kernels (or the pre-fusion nodes)."""
        if on != self.kernels_only and self.state.trace is not None:
            index, path = self.state.graph_index, self.state.path
            if on:  # the step and the folds of the full graph, for the way back
                self._full_view = (index, self.state.step, self.state.selected_nodes,
                                   self.graph_view.folding.snapshot())
                self._full_trace = self.state.trace
                shown = replace(self._full_trace, graphs=tuple(
                    kernel_graph(g) for g in self._full_trace.graphs))
            else:
                shown, self._full_trace = self._full_trace, None
            self.state.set_trace(shown, path)
            self.state.set_graph(index)
            if not on and self._full_view[0] == index:
                _index, step, selected, folds = self._full_view
                self.graph_view.restore_folding(folds)
                self.state.set_step(step)
                self.state.select_nodes(selected)
        self.actions_by_name["kernels_only"].setChecked(self.kernels_only)

    def _on_completer_progress(self, done: int, total: int) -> None:
        self.statusBar().showMessage(f"{_COMPLETING} {100 * done // max(total, 1)}%")

    def _on_completer_done(self) -> None:
        if self.statusBar().currentMessage().startswith(_COMPLETING):
            self.statusBar().clearMessage()
        self._show_notices()  # the rounds, all read now, are checked too
        self._prepare_steps()

    def _prepare_steps(self) -> None:
        graph = self.state.graph
        if graph is not None and not self.completer.running and not self._opening:
            self.warmer.start(self._steps_to_prepare(graph), delay_ms=0)

    def _steps_to_prepare(self, graph):
        steps = fusion_steps(graph)
        for k in range(len(steps)):
            if self.state.graph is not graph:
                return
            steps[k]
            yield None
            self.graph_view.prepare_step(k)
            yield None
            self.ledger.prepare_step(k)
            yield None

    def _on_unreadable(self, message: str) -> None:
        """The first bad part of a trace in a dialog; any further one in Notices and the
        status bar (a click that meets another bad part does not stop the user again)."""
        path = self.state.path
        where = message if path and message.startswith(path) else f"{path}: {message}"
        self._unreadable.append(where)
        if len(self._unreadable) == 1:
            self.show_error("Part of the trace is malformed; what could be read is shown."
                            f"\n\n{where}\n\nAny further malformed part is listed under "
                            "Notices.")
        else:
            self.errors.append(where)
            self.statusBar().showMessage(f"Another malformed part (see Notices): {where}",
                                         10000)
            self._show_notices()

    def run_script(self, script: str, **options) -> bool:
        """Capture ``script`` (options as ``runner.capture_argv`` takes them)."""
        if not self.start_run(script, "capturing", **options):
            return False
        self._last_script = (script, options)
        self.add_recent(script)
        return True

    def start_run(self, script: str, doing: str, **options) -> bool:
        """Start a child run (a capture, or ``job=EXPERIMENT``) with its progress shown;
        False, and why, when one is running already."""
        if self.runner.running:
            self.show_error("A capture or experiment is running; cancel it first (Esc).")
            return False
        self.output.clear()
        self.progress.started(script, doing)
        try:
            self.runner.start(script, **options)
        except OSError as e:  # the data folder cannot be written, …
            self.progress.stop()
            self.show_error(f"Cannot start the run: {e.strerror or e}.\n\n"
                            "Check that the data folder (FUSIONVIZ_DATA_DIR) is writable.")
            return False
        return True

    def capture_options_of(self, script: str) -> dict:
        """The options ``script`` was last captured with in this session ({} if never)."""
        last, options = self._last_script
        same = bool(last) and os.path.abspath(last) == os.path.abspath(script)
        return dict(options) if same else {}

    def rerun(self) -> None:
        script, options = self._last_script
        if script:
            self.run_script(script, **options)

    def _on_progress_text(self, text: str) -> None:
        if self.state.graph is None:
            self.graph_view.set_message(f"{text}\n\n(Esc cancels; the graphs captured so far "
                                        "are kept)")

    def _on_run_finished(self, path: str) -> None:
        if self.runner.job is not CAPTURE:
            return  # an experiment: ExperimentActions opens its comparison
        problem = self.runner.write_problem
        if not self.open_trace(path):
            return
        script = self.state.trace.script
        if problem:  # the file holds its last good state, not how the run ended
            self.show_error(f"The trace could not be written to the end ({problem}). "
                            f"Shown: what {path} held before that.")
        elif script.status not in ("ok", "running"):
            self.show_error(script_failure(script, len(self.state.trace.graphs)))

    def _on_run_failed(self, message: str) -> None:
        if self.state.graph is None:  # not the progress of a run that is over
            self.graph_view.set_message(message.split("\n\n")[0])
        self.show_error(message)

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

    # ---- reacting to the view state ---------------------------------------------------------
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
        self._show_ranks()
        self._show_notices()

    def _show_ranks(self) -> None:
        siblings = rank_siblings(self.state.path) if self.state.path else []
        here = [i for i, (_label, path) in enumerate(siblings)
                if os.path.abspath(path) == os.path.abspath(self.state.path)]
        self.rank_selector.blockSignals(True)
        self.rank_selector.clear()
        for label, path in siblings:
            self.rank_selector.addItem(label, str(path))
        if here:
            self.rank_selector.setCurrentIndex(here[0])
        self.rank_selector.blockSignals(False)
        self.rank_selector.setVisible(bool(here))

    def _on_rank_chosen(self, index: int) -> None:
        path = self.rank_selector.itemData(index)
        if path and os.path.abspath(path) != os.path.abspath(self.state.path or ""):
            self.open_trace(path)

    def _on_graph_changed(self, _index: int) -> None:
        self._show_notices()
        self._prepare_steps()
        if self.find_edit.text():
            self.graph_view.find(self.find_edit.text())

    def notice_lines(self) -> list[str]:
        """Everything the user should know the trace lacks or hit, one line each."""
        trace = self.state.trace
        if trace is None:
            return []
        lines = [f"Not recorded on this torch: {m}" for m in trace.capabilities.missing]
        untested = unverified_note(str(trace.env.get("torch", "")))
        lines += [untested.capitalize()] if untested else []
        lines += list(trace.warnings)
        lines += [f"{p.where}: {p.message}" for p in trace.problems]
        lines += [f"malformed, not shown: {where}" for where in self._unreadable]
        if self._trace_checked[0] is not trace:
            self._trace_checked = (trace, trace_problems(trace))
        lines += [f"trace does not hold together: {p}" for p in self._trace_checked[1]]
        graph = self.state.graph
        if graph is not None:
            lines += [f"graph {graph.index}: {w}" for w in graph.warnings]
            lines += [f"graph {graph.index}, before lowering: {comm_pass_text(cp)}"
                      for cp in graph.comm_passes]
            if self._checked[0] is not graph:  # once per graph shown
                self._checked = (graph, graph_problems(graph), False)
            if not self._checked[2] and not self.completer.running and not self._opening:
                # the rounds are read lazily, on the idle path: checked once all is read
                more = detail_problems(graph, quiet_if_unreadable=True)
                self._checked = (graph, Problems(self._checked[1], more), True)
            lines += [f"graph {graph.index} does not hold together: {p}"
                      for p in self._checked[1]]
            timing = graph.timing
            for note in (timing.note, load_warning(timing)) if timing is not None else ():
                if note:
                    lines.append(f"graph {graph.index} timing: {note}")
        if trace.script.status not in ("ok", "running"):
            lines.insert(0, f"Script status: {trace.script.status}. {trace.script.message}")
        return lines

    def _show_notices(self) -> None:
        lines = self.notice_lines()
        trace = self.state.trace
        html = "".join(f"<p>⚠ {escape(line)}</p>".replace("\n", "<br>")  # a line's own lines
                       for line in lines) or "<p>No notices.</p>"
        if trace is not None and trace.script.traceback:
            html += f"<pre>{escape(trace.script.traceback)}</pre>"
        self.notices.setHtml(html)
        views = {**(self._checked[1].views if self._checked[0] is self.state.graph
                    and self.state.graph is not None else {}),
                 **(self._trace_checked[1].views if self._trace_checked[0] is trace
                    and trace is not None else {})}
        for view, strip in self.strips.items():
            strip.set_problems(views.get(view, []))
        self.notice_label.setText(f"⚠ {len(lines)} notice{'s' if len(lines) != 1 else ''}"
                                  if lines else "")
        if lines:
            self.docks["notices"].show()

    def _front_notices(self) -> None:
        self.docks["notices"].show()
        self.docks["notices"].raise_()

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

    # -- the advisor ----------------------------------------------------------------------
    def _show_advisor(self) -> None:
        self.docks["advisor"].show()
        self.docks["advisor"].raise_()

    def advise_measure(self, every_graph: bool = False) -> None:
        """Measure the shown graph's best candidates in the Advisor pane (or every
        graph's, one after another)."""
        if self.state.graph is None:
            self.show_error("Open a trace first: the Advisor replays its graphs.")
            return
        self._show_advisor()
        if every_graph:
            self.advisor.measure_all()
        else:
            self.advisor.measure_best()

    def try_pair(self, pair: tuple[str, str] | None = None) -> None:
        """Replay the shown graph with ``pair`` (or the two selected nodes) fused, timed
        beside baseline replays, in the Advisor pane."""
        pair = pair or (tuple(self.state.selected_nodes)
                        if len(self.state.selected_nodes) == 2 else None)
        if self.state.graph is None or pair is None:
            self.show_error("Select two nodes first (click one, Ctrl+click the other), or "
                            "right-click a row of the fusion ledger.")
            return
        self._show_advisor()
        if not self.advisor.try_pair(*pair):
            self.show_error(self.advisor.status.text() or "The Advisor is measuring already: "
                            "wait for it or cancel it.")

    def open_advice_dialog(self) -> None:
        path = desktop.open_file(self, self.settings, "Open Measured Advice",
                                 "fusionviz advise --json (*.json);;All files (*)")
        if path:
            self.open_advice(path)

    def open_advice(self, path: str) -> bool:
        """Show a ``fusionviz advise --measure K --json`` document (``advice.json``)
        measured on the open trace, in the Advisor pane."""
        if self.state.trace is None:
            self.show_error("Open the trace the advice was measured on first.")
            return False
        try:
            shown = self.advisor.open_advice(path)
        except (TraceError, OSError, ValueError) as e:
            self.show_error(f"Cannot open the advice {path}: {e}")
            return False
        self._show_advisor()
        self.statusBar().showMessage(f"Measured advice for {shown} graph(s) opened from "
                                     f"{path}", 10000)
        return True

    def _compare_replays(self, folder: str, variant: int) -> None:
        view = self.experiments.open_experiment(folder)
        if view is not None:
            view.show_pair(0, variant)

    def why_not_fused(self) -> WhyNotDialog | None:
        sel = self.state.selected_nodes
        if self.state.graph is None or len(sel) != 2:
            self.show_error("Select two nodes first (click one, Ctrl+click the other).")
            return None
        try:
            dialog = WhyNotDialog(self.state.graph, sel[0], sel[1], self,
                                  on_try=lambda _checked=False, a=sel[0], b=sel[1]: self.try_pair((a, b)))
        except TraceError as e:  # a round's ledger is malformed
            self.state.report_unreadable(str(e))
            return None
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog

    def set_dark(self, dark: bool) -> None:
        apply_theme(dark)
        self.graph_view.set_dark(dark)
        self.settings.setValue("dark", dark)

    def toggle_dark(self) -> None:
        self.set_dark(not is_dark())

    def open_trace_dialog(self) -> None:
        path = desktop.open_file(self, self.settings, "Open trace", TRACE_FILTER)
        if path:
            self.open_trace(path)

    def capture_ranks_dialog(self) -> None:
        """Capture a script that calls torch.distributed on N ranks (torchrun)."""
        path = desktop.open_file(self, self.settings, "Capture script on several ranks",
                                 "Python (*.py)")
        if not path:
            return
        n, ok = QInputDialog.getInt(self, "Ranks", "Processes (torchrun --nproc-per-node):",
                                    2, 2, 64)
        if ok:
            self.capture_ranks(path, n)

    def capture_ranks(self, script: str, nproc: int, **options) -> bool:
        """Every rank captured into a folder of the data folder; its comparison opens
        when the job ends."""
        return self.start_run(script, f"capturing {nproc} ranks of", job=RANKS, nproc=nproc,
                              **options)

    def save_trace_as_dialog(self) -> None:
        if not self.state.path:
            self.show_error("No trace is open: open or capture one first.")
            return
        name = os.path.basename(self.state.path)
        path = desktop.save_file(self, self.settings, "Save trace as", name, TRACE_FILTER)
        if path:
            self.save_trace_as(path)

    def save_trace_as(self, path: str) -> bool:
        """Copy the open trace to ``path`` (compressed or not by its suffix)."""
        try:
            save_trace_as(self.state.path, path)
        except OSError as e:
            self.show_error(f"Cannot save the trace to {path}: {e.strerror or e}.\n\n"
                            "Choose another folder or free some space.")
            return False
        self.add_recent(path)
        self.statusBar().showMessage(f"trace saved as {path}", 10000)
        return True

    def open_source(self, file: str, line: int) -> bool:
        """Open a source line of the script in the user's editor (File ▸ Editor Command…)."""
        trace = self.state.trace
        problem = editor.open_source(file, line, trace.script.path if trace else "",
                                     self.settings, confirm=self.confirm_outside)
        if problem:
            self.show_error(problem)
        return not problem

    def confirm_outside(self, path: str) -> bool:
        """Whether to open a source file the trace names outside its script's folder."""
        box = QMessageBox(QMessageBox.Icon.Question, "fusionviz",
                          f"Open a file outside the captured script's folder?\n\n{path}",
                          QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
                          self)
        plain(box)  # the path comes from the trace
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Open

    def editor_dialog(self) -> None:
        command, ok = QInputDialog.getText(
            self, "Editor command", "Command that opens a source line ({file} and {line} "
            f"are filled in; empty: the desktop's default):\n{editor.EXAMPLES}",
            text=editor.editor_command(self.settings))
        if ok:
            editor.set_editor_command(command, self.settings)

    def open_script_dialog(self) -> None:
        path = desktop.open_file(self, self.settings, "Open script", "Python (*.py)")
        if path:
            self.run_script(path)

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

    # ---- recent files, drag and drop, layout persistence -------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        recent = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent", recent[:MAX_RECENT])

    def dragEnterEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 (Qt override)
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                break

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
