"""The comparison's tables: metrics, verdicts that changed, kernel and per-graph deltas.

Row builders are plain functions over ``compare.Comparison`` and the two traces (so
tests can check them against the model); ``fill_table`` shows rows in a sortable
``QTableWidget`` with numbers formatted but sorted as numbers.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QAbstractItemView, QHeaderView, QTableWidget, QTableWidgetItem

from fusionviz.model.experiment.compare import (
    BASELINE,
    DYNAMO_EAGER,
    EAGER_ROWS,
    Comparison,
    eager_kind,
    eager_note,
    graph_time,
    within_noise,
)
from fusionviz.model.experiment.compare_entries import entry_table
from fusionviz.model.names import Names
from fusionviz.model.report.formatting import byte_size, cell
from fusionviz.model.trace import Graph, Trace
from fusionviz.ui.desktop import add_row_copy
from fusionviz.ui.plain import tip

FASTER, SLOWER = QColor("#2e9e4f"), QColor("#d9534f")
NOISY = QColor("#e08a1e")  # a figure whose samples disagree (eager_figures' rule)
_OUTCOME_COLORS = {"fused": FASTER, "rejected": SLOWER, "cycle": SLOWER,
                   "benchmark_slower": QColor("#e08a1e"), "spill": QColor("#e08a1e")}
Cell = str | int | float | None


# ---- rows (no Qt) ----------------------------------------------------------------------------
def metric_rows(c: Comparison) -> tuple[list[str], list[tuple[Cell, ...]]]:
    return ["metric", c.label_a, c.label_b, "change"], [tuple(r) for r in c.rows]


def pair_groups(label: str) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``"op0_op5 + op1"`` (``compare``'s pair label) → ``(("op0", "op5"), ("op1",))``."""
    sides = label.split(" + ")
    if len(sides) != 2:
        return None
    return tuple(sides[0].split("_")), tuple(sides[1].split("_"))


def why(graph: Graph | None, pair: tuple[tuple[str, ...], tuple[str, ...]] | None) -> str:
    """The reasons (with the check that gave each) of the last decision on ``pair``."""
    if graph is None or pair is None:
        return ""
    key = frozenset(pair)
    last = None
    for r in graph.rounds:
        for c in r.candidates:
            if frozenset((c.a, c.b)) == key:
                last = c
    if last is None:
        return ""
    text = "; ".join(f"{x.text} ({x.check})" if x.check else x.text for x in last.reasons)
    return ("forced: " if last.forced else "") + text


def _graph(trace: Trace, i: int) -> Graph | None:
    return trace.graphs[i] if 0 <= i < len(trace.graphs) else None


def verdict_rows(c: Comparison, a: Trace, b: Trace):
    """Pairs whose outcome changed, with the reasons each side gave (columns left out
    when no side recorded any, e.g. every change is fused ↔ not a candidate)."""
    headers = ["graph", "pair", "ops · module", c.label_a, c.label_b, f"why ({c.label_b})",
               f"why ({c.label_a})"]
    rows, names = [], {}
    for v in c.verdicts:
        groups = pair_groups(v.pair)
        if v.graph not in names:
            names[v.graph] = Names(_graph(a, v.graph) or _graph(b, v.graph))
        about = "  ×  ".join(names[v.graph].about(g) for g in groups) if groups else ""
        rows.append((v.graph, v.pair, about, v.outcome_a, v.outcome_b,
                     why(_graph(b, v.graph), groups), why(_graph(a, v.graph), groups)))
    keep = [j for j in range(len(headers)) if j < 5 or any(r[j] for r in rows)]
    return [headers[j] for j in keep], [tuple(r[j] for j in keep) for r in rows]


def kernel_status(name_a: str, name_b: str) -> str:
    if not name_a:
        return "added"
    if not name_b:
        return "removed"
    return "same nodes" if name_a == name_b else "renamed"


def _delta(a: float | None, b: float | None) -> tuple[float | None, float | None]:
    if a is None or b is None:
        return None, None
    return b - a, ((b - a) / a * 100 if a else None)


def kernel_rows(c: Comparison):
    headers = ["graph", "status", "nodes", f"kernel ({c.label_a})", "ms A",
               f"kernel ({c.label_b})", "ms B", "Δ ms", "Δ %"]
    rows = [(k.graph, kernel_status(k.name_a, k.name_b), ", ".join(k.nodes), k.name_a or "—",
             k.ms_a, k.name_b or "—", k.ms_b, *_delta(k.ms_a, k.ms_b)) for k in c.kernels]
    return headers, rows


def entry_rows(c: Comparison):
    """Each compiled callable's forward/backward on each clock, eager vs compiled in A
    and B (``compare_entries.entry_table``)."""
    headers, rows = entry_table(c.entries)  # A and B: the toolbar names them
    return headers, [tuple(r) for r in rows]


# entry_rows' figure columns: (column, side, what)
_ENTRY_FIGURES = ((3, "a", "compiled"), (4, "b", "compiled"), (6, "a", "eager"),
                  (7, "b", "eager"))


def mark_noisy(table: QTableWidget, c: Comparison) -> int:
    """Tint the entries table's noisy figures and say why in their tooltip; returns how
    many it marked."""
    marked = 0
    for row in range(table.rowCount()):
        d = c.entries[row_of(table, row)]
        for col, side, what in _ENTRY_FIGURES:
            v = getattr(d, side)
            fig = getattr(v, what) if v is not None else None
            item = table.item(row, col)
            if fig is not None and fig.noisy and item is not None:
                item.setForeground(NOISY)
                item.setToolTip(tip(f"noisy: {fig.text()}"))
                marked += 1
    return marked


def metric_tips(c: Comparison) -> dict[str, str]:
    """What the metrics table's eager rows are, for their tooltips."""
    baseline = ("What each side's eager figures timed: your program (the callable passed "
                "to torch.compile, run eagerly) or the graph Dynamo captured, run eagerly. "
                "Eager rows of two different baselines are not compared.")
    note = eager_note(c)
    return {BASELINE: baseline, DYNAMO_EAGER: "The forward graphs Dynamo captured, run "
            "eagerly: beside the program's own eager figure, where that is the baseline "
            "(the two differ where code takes another path under torch.compile).",
            **({m: note for m in EAGER_ROWS} if note else {})}


def set_tips(table: QTableWidget, tips: dict[str, str]) -> None:
    """Every cell of a row whose first cell is a key of ``tips`` gets that tooltip."""
    for row in range(table.rowCount()):
        first = table.item(row, 0)
        text = tips.get(first.text()) if first is not None else None
        plain_tip = tip(text) if text else ""
        for col in range(table.columnCount() if plain_tip else 0):
            item = table.item(row, col)
            if item is not None:
                item.setToolTip(plain_tip)


def graph_rows(c: Comparison, a: Trace, b: Trace):
    """Whole-graph deltas, one row per graph present in both traces."""
    headers = ["graph", "kind", "nodes", "rounds A", "rounds B", "kernels A", "kernels B",
               "compiled ms A", "compiled ms B", "Δ ms", "Δ %", "compile s A", "compile s B",
               "wall ms A", "wall ms B", "eager ms A", "eager ms B", "eager is"]
    rows = []
    for ga, gb in zip(a.graphs, b.graphs):
        ms_a, ms_b = graph_time(ga, "compiled_ms"), graph_time(gb, "compiled_ms")
        delta, pct = _delta(ms_a, ms_b)
        if ga.timing and gb.timing and within_noise(ga.timing.compiled_spread,
                                                    gb.timing.compiled_spread):
            pct = "within noise"  # the samples' (min, max) overlap
        kinds = eager_kind(ga), eager_kind(gb)
        rows.append((ga.index, ga.kind, len(ga.nodes), len(ga.rounds), len(gb.rounds),
                     len(ga.kernels), len(gb.kernels), ms_a, ms_b, delta, pct,
                     ga.compile_s, gb.compile_s, graph_time(ga, "compiled_wall_ms"),
                     graph_time(gb, "compiled_wall_ms"), graph_time(ga, "eager_ms"),
                     graph_time(gb, "eager_ms"),
                     kinds[0] if kinds[0] == kinds[1] else f"A: {kinds[0]}, B: {kinds[1]}"))
    return headers, rows



# ---- Qt ----------------------------------------------------------------------------------------
class _Item(QTableWidgetItem):
    """A cell shown formatted (a count of bytes in KiB/MiB) and sorted by its value
    (numbers before text, None last)."""

    def __init__(self, value: Cell, header: str = "") -> None:
        in_bytes = ("bytes" in header and isinstance(value, int)
                    and not isinstance(value, bool))
        super().__init__(byte_size(value) if in_bytes else cell(value))
        self.value = value
        if isinstance(value, (int, float)):
            self.setTextAlignment(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        self.setToolTip(tip(self.text()))  # labels, pairs, kernel names: as text

    def _key(self):
        v = self.value
        if isinstance(v, (int, float)):
            return (0, v, "")
        return (1 if v not in (None, "", "—") else 2, 0, str(v))

    def __lt__(self, other) -> bool:
        return self._key() < other._key() if isinstance(other, _Item) else super().__lt__(other)


def make_table() -> QTableWidget:
    table = QTableWidget()
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    table.setAlternatingRowColors(True)
    table.verticalHeader().hide()
    add_row_copy(table)
    table.horizontalHeader().setStretchLastSection(False)  # a stretched number reads badly
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
    return table


def fill_table(table: QTableWidget, headers: list[str], rows: list[tuple]) -> None:
    """Show ``rows``; each row's original index is kept on its first cell (UserRole)."""
    table.setSortingEnabled(False)
    table.clear()
    table.setColumnCount(len(headers))
    table.setHorizontalHeaderLabels(headers)
    table.setRowCount(len(rows))
    for i, row in enumerate(rows):
        for j, value in enumerate(row):
            item = _Item(value, headers[j])
            color = _color(headers[j], value)
            if color is not None:
                item.setForeground(color)
            if j == 0:
                item.setData(Qt.ItemDataRole.UserRole, i)
            table.setItem(i, j, item)
    table.setSortingEnabled(True)
    table.resizeColumnsToContents()
    for col in range(table.columnCount()):
        table.setColumnWidth(col, min(table.columnWidth(col), 360))


def _color(header: str, value: Cell) -> QColor | None:
    if isinstance(value, str) and header.startswith("vs eager"):
        return FASTER if value.endswith("faster") else SLOWER if value.endswith("slower") else None
    if isinstance(value, str) and header.endswith(" change") and value[:1] in ("+", "-"):
        return SLOWER if value.startswith("+") else FASTER  # times: less is better
    if isinstance(value, str):
        return _OUTCOME_COLORS.get(value)
    if header.startswith("Δ") and isinstance(value, (int, float)) and value:
        return SLOWER if value > 0 else FASTER  # these deltas are times: less is better
    return None


def row_of(table: QTableWidget, visual_row: int) -> int:
    """The original row index of what is shown at ``visual_row`` (after sorting)."""
    item = table.item(visual_row, 0)
    return item.data(Qt.ItemDataRole.UserRole) if item is not None else -1
