"""The comparison window: two traces of one script side by side, and what changed.

Opens an experiment folder (``experiment.json`` + one trace per variant, written by
``fusionviz experiment``): two synchronized graph views (``compare_sync``), tabs with
the metrics table, verdicts that changed, kernel and per-graph deltas, the round-sweep
chart and the experiment's report, and exports of the table as Markdown or CSV.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

from PySide6.QtCore import QSettings, Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QLabel,
    QMainWindow,
    QSplitter,
    QTabWidget,
    QToolBar,
    QVBoxLayout,
    QWidget,
)

from fusionviz.model.experiment import compare, ranks
from fusionviz.model.experiment.compare_entries import headline
from fusionviz.model.experiment.runs import Experiment, Variant, pair_outcome, sweep_rows
from fusionviz.model.trace import Trace
from fusionviz.model.whatif import WhatIf
from fusionviz.ui import desktop
from fusionviz.ui.charts.sweep import SweepChart
from fusionviz.ui.compare import tables
from fusionviz.ui.compare.sync import ViewSync
from fusionviz.ui.fusion_stepper import FusionStepper
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.plain import SafeBrowser, plain
from fusionviz.ui.view_state import ViewState

EXPORT_FORMATS = "Markdown report (*.md);;CSV table (*.csv)"


def rule_lines(trace: Trace) -> list[str]:
    """What each force/forbid rule a variant compiled under did (``pair_outcome``)."""
    whatif = WhatIf.from_config(trace.config)
    return [f"{verb} {a} × {b}: {pair_outcome(trace, (a, b))}"
            for verb, pairs in (("force", whatif.force), ("forbid", whatif.forbid))
            for a, b in pairs]


class ComparePane(QWidget):
    """One side: a title, its own fusion stepper and graph view over its own ViewState."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = ViewState(self)
        self.title = QLabel()
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.stepper = FusionStepper(self.state)
        self.view = GraphView(self.state)
        box = QVBoxLayout(self)
        box.setContentsMargins(2, 2, 2, 2)
        box.setSpacing(2)
        for w in (self.title, self.stepper, self.view):
            box.addWidget(w)
        box.setStretch(2, 1)

    def show_variant(self, variant: Variant, side: str) -> None:
        m = compare.metrics(variant.trace)
        ms = m["Compiled runtime (ms)"]
        timing = f"{ms:.4g} ms compiled · " if ms is not None else ""
        self.title.setText(f"<b>{side}: {escape(variant.label)}</b> &nbsp; <small>{timing}"
                           f"{m['Kernels']} kernels · {m['Fusion rounds']} rounds · "
                           f"{escape(variant.file)}</small>")
        if self.state.trace is not variant.trace:  # a big graph is laid out once, not per pick
            self.state.set_trace(variant.trace, variant.file)


class CompareWindow(QMainWindow):
    """Variant B of an experiment against variant A, with synchronized graph views."""

    sig_open_trace = Signal(str)
    """The user asked to open one side's trace in the explorer; argument: its path."""

    def __init__(self, experiment: Experiment, folder: str = "", parent=None) -> None:
        super().__init__(parent)
        self.experiment, self.folder = experiment, folder
        self.variants = experiment.variants
        self.comparison: compare.Comparison | None = None
        name = Path(experiment.script).name
        self.setWindowTitle(f"fusionviz — {experiment.kind} experiment: {name}")
        self.pane_a, self.pane_b = ComparePane(), ComparePane()
        self.sync = ViewSync(self.pane_a.view, self.pane_b.view, self)
        self._build_toolbar()
        self._build_tabs()
        split = QSplitter(Qt.Orientation.Horizontal)
        split.addWidget(self.pane_a)
        split.addWidget(self.pane_b)
        outer = QSplitter(Qt.Orientation.Vertical)
        outer.addWidget(split)
        outer.addWidget(self.tabs)
        self.setCentralWidget(outer)
        self.resize(1500, 950)
        outer.setSizes([560, 390])  # the graphs get the larger share
        self.show_pair(0, 1)

    # ---- construction --------------------------------------------------------------------
    def _build_toolbar(self) -> None:
        bar = QToolBar("Comparison")
        bar.setObjectName("compare_toolbar")
        self.combo_a, self.combo_b = QComboBox(), QComboBox()
        for combo in (self.combo_a, self.combo_b):
            combo.addItems([v.label for v in self.variants])
            combo.currentIndexChanged.connect(
                lambda _i: self.show_pair(self.combo_a.currentIndex(), self.combo_b.currentIndex()))
        bar.addWidget(QLabel(" A: "))
        bar.addWidget(self.combo_a)
        bar.addAction("⇄", self.swap).setToolTip("Swap A and B")
        bar.addWidget(QLabel(" B: "))
        bar.addWidget(self.combo_b)
        bar.addSeparator()
        bar.addAction("Export Report…", self.export_dialog).setToolTip(
            "The metrics table (seed-000 shape) with verdict and kernel changes, as "
            "Markdown; or the metrics table as CSV")
        bar.addAction("Open A in Explorer", lambda: self._open_side(self.combo_a))
        bar.addAction("Open B in Explorer", lambda: self._open_side(self.combo_b))
        self.addToolBar(bar)

    def _build_tabs(self) -> None:
        self.summary = QLabel()
        self.summary.setWordWrap(True)
        self.summary.setTextFormat(Qt.TextFormat.RichText)
        self.metrics_table = tables.make_table()
        self.verdict_table = tables.make_table()
        self.kernel_table = tables.make_table()
        self.graph_table = tables.make_table()
        self.entry_table = tables.make_table()
        self.entry_note = plain(QLabel())
        self.entry_note.setWordWrap(True)
        # report.md of a folder someone sent: no image loaded, no link followed, raw
        # HTML shown as text
        self.report = SafeBrowser()
        self.report.set_markdown(self.experiment.report or "(no report.md in this experiment)")
        self.tabs = QTabWidget()
        metrics = QWidget()
        box = QVBoxLayout(metrics)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.summary)
        box.addWidget(self.metrics_table, 1)
        self.tabs.addTab(metrics, "Metrics")
        self.tabs.addTab(self.verdict_table, "Verdicts")
        self.tabs.addTab(self.kernel_table, "Kernels")
        self.tabs.addTab(self.graph_table, "Graphs")
        entries = QWidget()
        box = QVBoxLayout(entries)
        box.setContentsMargins(4, 4, 4, 4)
        box.addWidget(self.entry_note)
        box.addWidget(self.entry_table, 1)
        self.entry_tab = entries
        self.tabs.addTab(entries, "Compiled vs eager")
        self.sweep_chart = self.sweep_table = None
        if self.experiment.kind == "sweep":
            self._build_sweep()
        self.tabs.addTab(self.report, "Report")
        self.verdict_table.cellClicked.connect(self._on_verdict_clicked)
        self.kernel_table.cellClicked.connect(self._on_kernel_clicked)
        self.graph_table.cellClicked.connect(
            lambda row, _col: self.pane_a.state.set_graph(tables.row_of(self.graph_table, row)))

    def _build_sweep(self) -> None:
        self.sweep_rows = sweep_rows(self.variants[1:])
        self.sweep_chart = SweepChart()
        self.sweep_chart.set_rows(self.sweep_rows, sweep_rows(self.variants[:1])[0])
        self.sweep_chart.sig_round_clicked.connect(lambda k: self.combo_b.setCurrentIndex(k + 1))
        self.sweep_table = tables.make_table()
        keys = list(self.sweep_rows[0])
        tables.fill_table(self.sweep_table, [k.replace("_", " ") for k in keys],
                          [tuple(r[k] for k in keys) for r in self.sweep_rows])
        self.sweep_table.cellClicked.connect(lambda row, _col: self.combo_b.setCurrentIndex(
            tables.row_of(self.sweep_table, row) + 1))
        page = QSplitter(Qt.Orientation.Horizontal)
        page.addWidget(self.sweep_chart)
        page.addWidget(self.sweep_table)
        page.setStretchFactor(0, 3)
        page.setStretchFactor(1, 2)
        self.tabs.insertTab(0, page, "Runtime after round k")
        self.tabs.setCurrentIndex(0)

    # ---- showing a pair ----------------------------------------------------------------
    def show_pair(self, ia: int, ib: int) -> None:
        """Compare variant ``ib`` (B) against variant ``ia`` (A)."""
        for combo, i in ((self.combo_a, ia), (self.combo_b, ib)):
            combo.blockSignals(True)
            combo.setCurrentIndex(i)
            combo.blockSignals(False)
        va, vb = self.variants[ia], self.variants[ib]
        self.comparison = c = compare.compare(va.trace, vb.trace, va.label, vb.label)
        self.pane_a.show_variant(va, "A")
        self.pane_b.show_variant(vb, "B")
        with self.sync.paused():  # each side starts on the kernels it ended with
            self.pane_a.stepper.go_last()
            self.pane_b.stepper.go_last()
        tables.fill_table(self.metrics_table, *tables.metric_rows(c))
        tables.set_tips(self.metrics_table, tables.metric_tips(c))
        tables.fill_table(self.verdict_table, *tables.verdict_rows(c, va.trace, vb.trace))
        tables.fill_table(self.kernel_table, *tables.kernel_rows(c))
        tables.fill_table(self.graph_table, *tables.graph_rows(c, va.trace, vb.trace))
        self._show_entries(c)
        self.tabs.setTabText(self.tabs.indexOf(self.verdict_table), f"Verdicts ({len(c.verdicts)})")
        self.tabs.setTabText(self.tabs.indexOf(self.kernel_table),
                             f"Kernels (+{len(c.added)} −{len(c.removed)})")
        text = summary_html(c, rule_lines(vb.trace))
        if self.experiment.kind == ranks.KIND:  # the question a rank comparison answers
            found = ranks.differences(va.trace, vb.trace, c)  # c: this pair's comparison
            verdict = ("<b>these ranks agree</b>: the same graphs, kernels and fusion "
                       "decisions" if not found else
                       f"<b>these ranks differ</b> ({len(found)}): {escape(found[0])}"
                       + (" …" if len(found) > 1 else ""))
            text = f"{verdict}<br>{text}"
        self.summary.setText(text)
        if self.sweep_chart is not None:
            self.sweep_chart.mark(ib - 1 if ia == 0 and ib > 0 else None)

    def _show_entries(self, c: compare.Comparison) -> None:
        tables.fill_table(self.entry_table, *tables.entry_rows(c))
        tables.mark_noisy(self.entry_table, c)
        callables = len({(d.name, d.kind) for d in c.entries})
        self.tabs.setTabText(self.tabs.indexOf(self.entry_tab),
                             f"Compiled vs eager ({callables})")
        self.entry_note.setText(
            compare.ENTRIES_LEGEND.replace("noisy:", "noisy (orange):")
            if c.entries else "Neither trace timed the callables it compiled against your "
            "program run eagerly (traces recorded before fusionviz did, or no callable "
            "was called again after compiling).")

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self.pane_a.view.fit()  # now that the views have their size; B follows A

    def swap(self) -> None:
        self.show_pair(self.combo_b.currentIndex(), self.combo_a.currentIndex())

    def _open_side(self, combo: QComboBox) -> None:
        self.sig_open_trace.emit(str(Path(self.folder) / self.variants[combo.currentIndex()].file))

    # ---- table clicks write the two view states ---------------------------------------------
    def _on_verdict_clicked(self, row: int, _col: int) -> None:
        v = self.comparison.verdicts[tables.row_of(self.verdict_table, row)]
        self.pane_a.state.set_graph(v.graph)
        pair = tables.pair_groups(v.pair)
        with self.sync.paused():  # each side shows the pair, even where one lacks a name
            self.pane_a.state.highlight_pair(pair)
            self.pane_b.state.highlight_pair(pair)

    def _on_kernel_clicked(self, row: int, _col: int) -> None:
        k = self.comparison.kernels[tables.row_of(self.kernel_table, row)]
        self.pane_a.state.set_graph(k.graph)
        with self.sync.paused():  # each side its own kernel ("" where it has none)
            self.pane_a.state.select_kernel(k.name_a)
            self.pane_b.state.select_kernel(k.name_b)

    # ---- export ----------------------------------------------------------------------------
    def export_dialog(self) -> None:
        path = desktop.save_file(self, QSettings(), "Export comparison", "comparison.md",
                                 EXPORT_FORMATS)
        if path:
            written = export_comparison(self.comparison, path, self.windowTitle())
            self.statusBar().showMessage(f"wrote {written}", 5000)


def summary_html(c: compare.Comparison, rules: list[str]) -> str:
    """The headline: B against A on runtime, kernels and compile time; rules' outcomes."""
    rows = {m: ch for m, _a, _b, ch in c.rows}
    parts = [f"{label} <b>{escape(str(rows.get(metric) or '–'))}</b>"
             for metric, label in (("Compiled runtime (ms)", "compiled runtime"),
                                   ("Kernels", "kernels"), ("FX compile time (s)", "compile time"),
                                   ("Net node reduction", "node reduction"))]
    head = (f"<b>{escape(c.label_b)}</b> vs <b>{escape(c.label_a)}</b>: " + ", ".join(parts)
            + f" · {len(c.verdicts)} verdicts changed · {len(c.added)} kernels added, "
            f"{len(c.removed)} removed")
    if rows.get(compare.BASELINE) == "differs":
        head += " · <b>eager is not the same baseline in A and B</b>"
    lines = [*rules, *entry_lines(c)]
    return head + "".join(f"<br>▸ {escape(line)}" for line in lines)


ENTRY_LINES = 3  # compiled callables in the headline; the rest in their tab


def entry_lines(c: compare.Comparison) -> list[str]:
    """Each compiled callable's forward on its main clock (device where taken): its
    compiled time from A to B and its speedup vs eager on each side."""
    first: dict = {}
    for d in c.entries:
        if d.part == "forward":
            first.setdefault((d.name, d.kind), d)  # device comes before wall
    lines = [headline(d, c.label_a, c.label_b) for d in first.values()]
    more = len(lines) - ENTRY_LINES
    return lines[:ENTRY_LINES] + ([f"… {more} more compiled callables under Compiled vs "
                                   "eager"] if more > 0 else [])


def export_comparison(c: compare.Comparison, path: str, title: str = "") -> str:
    """``.csv``: the metrics table; anything else: the Markdown report (table first)."""
    if path.lower().endswith(".csv"):
        Path(path).write_text(compare.table_csv(c), encoding="utf-8")
    else:
        if not Path(path).suffix:
            path += ".md"
        Path(path).write_text(compare.report_markdown(c, title), encoding="utf-8")
    return path
