"""The Advisor pane (#20): what in the shown graph may be worth changing, ranked by
estimate (``fusionviz.model.advisor.candidates``), each with the ``fusionviz replay``
command that tries it and how to apply it; **Measure** replays and times the best K
(``advisor.run``: progress, Cancel) and puts the measured ones first, wins beyond the
noise at the top; **Measure All Graphs** does so for every graph in turn. Above the
table, the whole step (``advisor.step_table``): each change measured, added up over
the graphs. "Try in the Advisor" on a ledger row or the graph's selected pair
measures that one pair (``try_pair``). Selecting a pair selects its nodes (graph,
Details); right-click a row: copy its replay command (also Ctrl+C), or compare its
replay with the baseline replay (``sig_compare``: the comparison view).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QMenu,
    QProgressBar,
    QPushButton,
    QSpinBox,
    QSplitter,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.advisor.candidates import Candidate, rank
from fusionviz.model.advisor.document import read_measured
from fusionviz.model.advisor.measure import (
    SCRIPT_NOTE,
    VERDICTS,
    Measured,
    Measurement,
    gain_text,
)
from fusionviz.model.advisor.step import step_line
from fusionviz.model.errors import TraceError
from fusionviz.model.report.formatting import byte_size, clip
from fusionviz.model.trace import Graph
from fusionviz.model.tracefile import bounded
from fusionviz.ui.advisor.run import MeasureRun
from fusionviz.ui.advisor.step_table import StepTable
from fusionviz.ui.plain import menu_text, plain, tip
from fusionviz.ui.view_state import ViewState

COLUMNS = ("#", "measured", "estimate", "bytes saved", "candidate", "why", "how to apply")
WIN, WORSE = QColor(40, 150, 60), QColor(200, 60, 40)
SHOWN = 200  # rows; a big graph's scan verdicts run into the thousands


class AdvisorPane(QWidget):
    sig_compare = Signal(str, int)
    """(an experiment folder, a variant): compare that replay with the baseline replay."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self.candidates: list[Candidate] = []
        self.rows: list[tuple[Candidate, Measured | None]] = []  # as the table shows them
        self.measured: dict[int, Measurement] = {}  # graph index -> its measurement
        self.folders: dict[int, str] = {}  # graph index -> its replays' folder
        self.run: MeasureRun | None = None
        self.queue: list[Graph] = []  # graphs Measure All Graphs has still to measure
        self._shown_for = None  # the graph the table was filled for
        self.on_screen = False  # its dock is shown and in front (set_on_screen)
        self.header = plain(QLabel())
        self.header.setWordWrap(True)
        self.count = QSpinBox()
        self.count.setRange(1, 20)
        self.count.setValue(3)
        self.count.setToolTip("How many of the best candidates to replay and time")
        self.measure_button = QPushButton("&Measure")
        self.measure_button.setToolTip(tip(
            "Replay this graph without your script, once per candidate and beside baseline "
            "replays, and time each (device time on a GPU, wall time on the CPU). A win "
            "counts only beyond max(3 x noise, 1%). Each replay compiles the graph: tens "
            "of seconds each."))
        self.measure_button.clicked.connect(self.measure_best)
        self.all_button = QPushButton("Measure &All Graphs")
        self.all_button.setToolTip(tip(
            "Measure the best candidates of every graph, one graph after another; the "
            "whole-step table adds up what each change did on every graph."))
        self.all_button.clicked.connect(self.measure_all)
        self.cancel_button = QPushButton("Cancel")
        self.cancel_button.clicked.connect(self.cancel)
        self.progress = QProgressBar()
        self.progress.setFormat("%v of %m replays")
        self.status = plain(QLabel())
        bar = QHBoxLayout()
        bar.addWidget(QLabel("Best"))
        bar.addWidget(self.count)
        bar.addWidget(self.measure_button)
        bar.addWidget(self.all_button)
        bar.addWidget(self.cancel_button)
        bar.addWidget(self.progress)
        bar.addWidget(self.status, 1)
        self._show_running(False)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setHorizontalHeaderLabels(COLUMNS)
        self.table.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.table.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.table.verticalHeader().hide()
        self.table.horizontalHeader().setStretchLastSection(True)
        self.table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.table.customContextMenuRequested.connect(self._menu)
        self.table.currentCellChanged.connect(self._show_on_graph)
        QShortcut(QKeySequence.StandardKey.Copy, self.table, self.copy_command)
        self.step_table = StepTable(WIN, WORSE)
        self.step_table.sig_graph.connect(self._show_graph)
        self.split = split = QSplitter(Qt.Orientation.Vertical)
        split.addWidget(self.step_table)
        split.addWidget(self.table)
        split.setStretchFactor(1, 3)
        box = QVBoxLayout(self)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.header)
        box.addLayout(bar)
        box.addWidget(split, 1)
        state.sig_graph_changed.connect(lambda _i: self.refresh())
        state.sig_trace_changed.connect(self._forget_measurements)

    def set_on_screen(self, on: bool) -> None:
        """Its dock's tab was brought to the front (or hidden): QDockWidget's
        visibilityChanged, which a widget behind another tab does not get wrong."""
        self.on_screen = on
        self.refresh()

    def refresh(self) -> None:
        """Rank the shown graph's candidates (once per graph, and only when on screen:
        it reads every round's ledger and every node's details)."""
        if self.on_screen and self._state.graph is not self._shown_for:
            self._rank()

    def _rank(self) -> None:
        graph = self._shown_for = self._state.graph
        self.candidates = []
        if graph is None:
            self.header.setText("No graph.")
        else:
            try:
                self.candidates = rank(self._state.trace, graph)
            except TraceError as e:  # a malformed part: said once, where it is met
                self._state.report_unreadable(str(e))
                self.header.setText("Part of this graph's record cannot be read; "
                                    "see Notices.")
            else:
                self.header.setText(self._header_text())
        self._fill()

    def _header_text(self) -> str:
        graph = self._state.graph
        m = self.measured.get(graph.index)
        estimate = ("ranked by estimate, not measured. A pair's estimate is the bytes fusing "
                    "would save at the GPU's peak bandwidth (an upper bound)")
        if m is None:
            return (f"Graph {graph.index} ({graph.kind}): {len(self.candidates)} candidate(s) "
                    f"{estimate}. Measure replays and times the best ones. Select a pair to see "
                    "it on the graph; right-click a row for its replay command.")
        if m.problem:
            return f"Graph {graph.index}: nothing measured: {m.problem}. Candidates {estimate}."
        replayed = [r for r in m.results if r.verdict != "not measured"]
        timed = [r for r in m.results if r.ms is not None]
        wins = [r for r in m.results if r.verdict == "win"]
        base = ", ".join(f"{b:.3f}" for b in m.baselines)
        return (f"Graph {graph.index} ({graph.kind}): {len(replayed)} candidate(s) replayed, "
                f"{len(timed)} timed ({m.clock}, {m.jobs} replay(s) at a time, baseline "
                f"replays {base} ms, "
                f"{m.seconds:.0f} s{SCRIPT_NOTE if m.source == 'script' else ''}): "
                f"{len(wins)} win(s) beyond max(3 x noise, 1%), shown "
                f"first. The other {len(self.candidates) - len(m.results)} are {estimate}. "
                "Right-click a measured row to compare its replay with the baseline's."
                + self._step_text())

    def _step_text(self) -> str:
        measured = {i: m for i, m in self.measured.items() if m.baselines}
        return f" Whole step: {step_line(measured)}." if measured else ""

    def _fill(self) -> None:
        graph = self._state.graph
        m = self.measured.get(graph.index) if graph is not None else None
        done = sorted(m.results if m else (), key=lambda r: (
            VERDICTS.index(r.verdict) if r.verdict in VERDICTS else len(VERDICTS),
            -(r.gain_ms or 0)))
        seen = {r.candidate.try_args for r in done}
        self.rows = [(r.candidate, r) for r in done]
        self.rows += [(c, None) for c in self.candidates if c.try_args not in seen]
        shown = self.rows[:SHOWN]
        self.table.setRowCount(len(shown))
        for row, (c, r) in enumerate(shown):
            said = "" if r is None else (f"{r.verdict} {gain_text(r)}" if r.gain_ms is not None
                                         else r.verdict)
            cells = (str(row + 1), said, f"{c.ms:.3f} ms" if c.ms is not None else "?",
                     byte_size(c.bytes_saved, none=""), c.what,
                     c.why, c.apply)
            for col, text in enumerate(cells):
                item = QTableWidgetItem(clip(text, 300))
                item.setToolTip(tip(r.detail if col == 1 and r is not None and r.detail
                                    else text))
                if col in (0, 2, 3):
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                          | Qt.AlignmentFlag.AlignVCenter)
                if col == 1 and r is not None and r.verdict in ("win", "slower",
                                                                 "changed results"):
                    item.setForeground(QBrush(WIN if r.verdict == "win" else WORSE))
                self.table.setItem(row, col, item)
        self.table.resizeColumnsToContents()

    def _fill_step(self) -> None:
        """The whole-step table, a few rows high above the candidates."""
        self.step_table.fill(self.measured)
        total = sum(self.split.sizes())
        if self.step_table.rowCount() and total:
            top = min(self.step_table.fitting_height(3), total * 2 // 5)
            self.split.setSizes([top, total - top])

    def _show_graph(self, index: int) -> None:
        """Show the graph whose ``Graph.index`` is ``index`` (a whole-step row)."""
        trace = self._state.trace
        at = next((k for k, g in enumerate(trace.graphs) if g.index == index), None) \
            if trace is not None else None
        if at is not None:
            self._state.set_graph(at)

    def _show_on_graph(self, row: int, *_cells) -> None:
        """A pair's nodes selected: the graph and Details show them."""
        if 0 <= row < len(self.rows) and self.rows[row][0].nodes:
            self._state.select_nodes(self.rows[row][0].nodes)

    # -- measuring ----------------------------------------------------------------------
    def measure_best(self) -> bool:
        """Replay and time the best ``count`` candidates of the shown graph."""
        graph = self._state.graph
        if graph is None or self.run is not None:
            return False
        if self._shown_for is not graph:  # not ranked yet (the pane was behind a tab)
            self._rank()
        return self._start(graph, self.candidates, self.count.value())

    def measure_all(self) -> bool:
        """Measure the best ``count`` candidates of every graph, one graph after another
        (those that cannot be replayed are said and skipped)."""
        trace = self._state.trace
        if trace is None or self.run is not None:
            return False
        self.queue = list(trace.graphs)
        return self._next_graph()

    def _next_graph(self) -> bool:
        """Start measuring the next graph of the queue that has something to measure."""
        while self.queue:
            graph = self.queue.pop(0)
            try:
                candidates = rank(self._state.trace, graph)
            except TraceError as e:
                self._state.report_unreadable(str(e))
                continue
            if self._start(graph, candidates, self.count.value()):
                return True
        return False

    def try_pair(self, a: str, b: str) -> bool:
        """Measure one pair of the shown graph (from the ledger, the graph, Why Not)."""
        graph = self._state.graph
        if graph is None or self.run is not None:
            return False
        try:
            ranked = rank(self._state.trace, graph)
        except TraceError as e:
            self._state.report_unreadable(str(e))
            return False
        known = next((c for c in ranked if c.kind == "pair" and a in c.nodes
                      and b in c.nodes), None)
        pair = known or Candidate(
            kind="pair", what=f"{a} with {b}", why="chosen in the window", bytes_saved=None,
            ms=None, apply="not reachable by configuration unless Inductor's reason names a "
            "setting", nodes=(a, b), force=((a, b),))
        return self._start(graph, [pair], 1)

    def _start(self, graph: Graph, candidates: list[Candidate], count: int) -> bool:
        trace = self._state.trace
        self.run = MeasureRun(trace, self._state.path, graph, candidates, count, parent=self)
        self.run.sig_line.connect(lambda line: self.status.setText(clip(line, 200)))
        self.run.sig_progress.connect(self._on_progress)
        self.run.sig_done.connect(self._on_done)
        self.progress.setRange(0, max(1, self.run.total))
        self.progress.setValue(0)
        self._show_running(True)
        more = f"; {len(self.queue)} graph(s) after it" if self.queue else ""
        self.status.setText(f"Replaying graph {graph.index}: {self.run.total} replays "
                            f"planned (each compiles the graph){more}")
        self.run.start()
        return True

    def cancel(self) -> None:
        self.queue = []
        if self.run is not None:
            self.run.cancel()
            self.status.setText("Cancelling: stopping the replays…")

    def _on_progress(self, ended: int, total: int) -> None:
        self.progress.setRange(0, max(1, total))
        self.progress.setValue(ended)

    def _on_done(self, m: Measurement) -> None:
        run, self.run = self.run, None
        self._show_running(False)
        if run is not None and self._state.trace is run.trace:  # not another trace now
            old = self.measured.get(m.graph)
            if old is not None and not m.problem and len(m.results) < len(old.results):
                # one pair tried: kept beside what was measured before
                kept = [r for r in old.results if r.candidate.try_args
                        not in {x.candidate.try_args for x in m.results}]
                m.results = [*m.results, *kept]
            self.measured[m.graph] = m
            self.folders[m.graph] = str(Path(run.folder) / f"graph_{m.graph}")
        wins = sum(r.verdict == "win" for r in m.results)
        self.status.setText(f"Graph {m.graph}: " + (
            m.problem or f"{len(m.results)} measured, {wins} win(s)"))
        self._shown_for = None
        self.refresh()
        self._fill_step()
        if run is not None and self._state.trace is run.trace and not run.cancelled:
            self._next_graph()

    def _show_running(self, running: bool) -> None:
        self.measure_button.setEnabled(not running)
        self.all_button.setEnabled(not running)
        self.count.setEnabled(not running)
        self.cancel_button.setVisible(running)
        self.progress.setVisible(running)

    def _forget_measurements(self) -> None:
        self.cancel()
        self.measured.clear()
        self.folders.clear()
        self._fill_step()

    def open_advice(self, path: str) -> int:
        """Show what ``fusionviz advise --measure K -o DIR`` measured on the open trace
        (``DIR/advice.json``; its replays beside it, in ``DIR/graph_N``); the number of
        graphs shown. TraceError/OSError when the file is not one of this trace."""
        found = read_measured(bounded.read_json(Path(path)), self._state.trace)
        for index, m in found.items():
            folder = Path(path).parent / f"graph_{index}"
            m.results = [replace(r, trace=str(folder / Path(r.trace).name))
                         if r.trace and (folder / Path(r.trace).name).is_file() else r
                         for r in m.results]
            self.measured[index] = m
            self.folders[index] = str(folder)
        self._shown_for = None
        self.refresh()
        self._fill_step()
        return len(found)

    # -- commands -----------------------------------------------------------------------
    def command(self, row: int) -> str:
        """The ``fusionviz replay`` command that tries the candidate of ``row``."""
        c, graph = self.rows[row][0], self._state.graph
        out = f"replay_graph{graph.index}.json.gz"
        return shlex.join(["fusionviz", "replay", self._state.path, "--graph",
                           str(graph.index), *c.try_args, "-o", out])

    def copy_command(self) -> None:
        row = self.table.currentRow()
        if 0 <= row < len(self.rows):
            QGuiApplication.clipboard().setText(self.command(row))

    def comparison(self, row: int) -> tuple[str, int] | None:
        """(experiment folder, variant) comparing the replay of ``row`` with the baseline
        replay (``measure.write_comparison``'s order), None when it has no replay."""
        graph = self._state.graph
        measured = self.rows[row][1] if 0 <= row < len(self.rows) else None
        m = self.measured.get(graph.index) if graph is not None else None
        folder = self.folders.get(graph.index) if graph is not None else None
        if measured is None or m is None or not folder or not measured.trace \
                or not (Path(folder) / "experiment.json").is_file():
            return None
        replays = [r for r in m.results if r.trace and Path(r.trace).is_file()]
        return (folder, replays.index(measured) + 1) if measured in replays else None

    def compare(self) -> None:
        found = self.comparison(self.table.currentRow())
        if found is not None:
            self.sig_compare.emit(*found)

    def _menu(self, pos) -> None:
        row = self.table.rowAt(pos.y())
        if not 0 <= row < len(self.rows):
            return
        self.table.selectRow(row)
        menu = QMenu(self)
        menu.addAction(menu_text("Copy the replay command that tries it"), self.copy_command)
        compare = menu.addAction("Compare its replay with the baseline replay", self.compare)
        compare.setEnabled(self.comparison(row) is not None)
        menu.popup(self.table.viewport().mapToGlobal(pos))
