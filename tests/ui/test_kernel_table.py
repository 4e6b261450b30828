"""The kernel table on a real GPT-2 train step (H100): sorts by every column, filters,
and selecting a row selects the kernel everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from fusionviz.model.report.kernel_table import COLUMNS, kernel_rows
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.kernel.table import SORT, KernelTable
from fusionviz.ui.view_state import ViewState

TRACE = load_trace(Path(__file__).resolve().parents[1] / "data" / "gpu_gpt2_train.json.gz")


@pytest.fixture
def table(qtbot):
    state = ViewState()
    t = KernelTable(state)
    qtbot.addWidget(t)
    state.set_trace(TRACE)
    return t


def test_it_opens_slowest_first_with_every_kernel(table):
    forward = TRACE.graphs[0]
    names = table.shown_names()
    assert sorted(names) == sorted(k.name for k in forward.kernels)
    ms = {k.name: k.ms for k in forward.kernels}
    assert ms[names[0]] == max(ms.values())
    assert table.count.text() == f"{len(forward.kernels)} kernels"


@pytest.mark.parametrize("column", range(len(COLUMNS)), ids=[c[0] for c in COLUMNS])
def test_every_column_sorts_by_its_value(table, column):
    table.table.sortByColumn(column, Qt.SortOrder.AscendingOrder)
    proxy = table.proxy
    values = [proxy.index(r, column).data(SORT) for r in range(proxy.rowCount())]
    assert values == sorted(values)
    table.table.sortByColumn(column, Qt.SortOrder.DescendingOrder)
    values = [proxy.index(r, column).data(SORT) for r in range(proxy.rowCount())]
    assert values == sorted(values, reverse=True)


def test_a_sort_keeps_the_selected_kernel_and_the_order_of_equal_values(table):
    """The model sorts its own rows: the selection follows its kernel to its new row, and
    kernels with equal values keep their order (stable, as the proxy's sort was)."""
    chosen = table.shown_names()[7]
    table.state.select_kernel(chosen)
    kind = next(i for i, c in enumerate(COLUMNS) if c[0] == "kind")
    for order in (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder):
        before = table.shown_names()
        table.table.sortByColumn(kind, order)
        names = table.shown_names()
        assert names[table.table.currentIndex().row()] == chosen
        assert table.table.selectionModel().selectedRows()[0].row() == names.index(chosen)
        kinds = {r["name"]: r["kind"] for r in table.model.rows}
        for k in set(kinds.values()):  # within a kind, the order the rows had before
            assert [n for n in names if kinds[n] == k] == [n for n in before if kinds[n] == k]
    table.table.sortByColumn(-1, Qt.SortOrder.AscendingOrder)  # unsorted: call order
    assert table.shown_names() == [k.name for k in TRACE.graphs[0].kernels]
    table.filter.setText("attn")  # sorted and filtered: a row is still found by name
    table.table.sortByColumn(kind, Qt.SortOrder.AscendingOrder)
    shown = table.shown_names()
    table.state.select_kernel(shown[-1])
    assert table.table.currentIndex().row() == len(shown) - 1


def test_filtering_by_module_and_selecting_a_row_selects_the_kernel(table, qtbot):
    table.filter.setText("attn.qkv")
    rows = [r for r in kernel_rows(TRACE.graphs[0]) if "attn.qkv" in r["module"]]
    assert rows and sorted(table.shown_names()) == sorted(r["name"] for r in rows)
    assert table.count.text() == f"{len(rows)} of {len(TRACE.graphs[0].kernels)} kernels"
    with qtbot.waitSignal(table.state.sig_kernel_changed) as blocker:
        table.select_row(0)
    assert blocker.args == [table.shown_names()[0]]
    # a kernel chosen elsewhere is selected in the table
    table.filter.clear()
    other = table.shown_names()[5]
    table.state.select_kernel(other)
    assert table.shown_names()[table.table.currentIndex().row()] == other


def test_rows_say_where_in_the_model_and_how_fast(table):
    rows = kernel_rows(TRACE.graphs[0])
    assert sum(r["share"] for r in rows if r["share"]) == pytest.approx(100.0)
    qkv = next(r for r in rows if r["module"] == "blocks.*.attn.qkv")
    assert qkv["launches"] == 12 and qkv["gb_s"] > 0 and len(qkv["nodes"].split(", ")) == 12


def test_its_columns_fit_as_qt_fits_them_and_a_graph_shown_again_keeps_its_rows(table):
    """Widths measured from the widest cells equal resizeColumnsToContents's (capped)."""
    backward = TRACE.graphs[1]
    table.state.set_graph(1)
    fitted = [table.table.columnWidth(c) for c in range(len(COLUMNS))]
    rows = table.model.in_call_order  # the rows kept for the graph (shown sorted)
    table.table.resizeColumnsToContents()
    assert fitted == [min(table.table.columnWidth(c), 320) for c in range(len(COLUMNS))]
    assert len(rows) == len(backward.kernels)
    table.state.set_graph(0)
    table.state.set_graph(1)
    assert table.model.in_call_order is rows and table.table.columnWidth(0) == fitted[0]


def test_in_the_window_it_lists_a_graph_when_its_tab_comes_to_the_front(window, qtbot):
    path = Path(__file__).resolve().parents[1] / "data" / "gpu_gpt2_train.json.gz"
    assert window.open_trace(str(path)), window.errors
    kernels = window.kernel_table
    assert not kernels.shown.on_screen and kernels.model.rowCount() == 0  # behind the ledger
    window.state.set_graph(1)
    window.state.select_kernel(window.state.graph.kernels[3].name)
    window.docks["kernels"].raise_()
    assert kernels.model.rowCount() == len(window.state.graph.kernels)
    current = kernels.table.currentIndex()
    assert kernels.proxy.index(current.row(), 0).data() == window.state.kernel
