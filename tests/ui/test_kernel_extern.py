"""Extern kernels' facts in the window: the kernel table grouped by op on a real GPT-2
train step (H100), an older trace that says its facts were not recorded, and the facts, the fp32 flag
and its warning mark on a real CPU compile that records them (tests/data)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from fusionviz.model.report.extern_facts import NOT_RECORDED, extern_facts
from fusionviz.model.report.kernel_table import COLUMNS
from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.charts.pane import ChartsPane
from fusionviz.ui.kernel.groups import MS, NAME
from fusionviz.ui.kernel.pane import KernelPane
from fusionviz.ui.kernel.table import KernelTable
from fusionviz.ui.view_state import ViewState

DATA = Path(__file__).resolve().parents[1] / "data"
GPT2 = load_trace(DATA / "gpu_gpt2_train.json.gz")
EXTERN = load_trace(DATA / "cpu_extern_ops.json.gz")
# each block's attention output projection, 768 → 768 over 8×256 tokens, in bf16
PROJ_GROUP = "12 × addmm 2048×768×768 bf16"
PROJ = {name for name, f in extern_facts(GPT2.graphs[0], GPT2.env).items()
        if f.signature == "addmm 2048×768×768 bf16"}


def _state(trace, graph: int = 0) -> ViewState:
    state = ViewState()
    state.set_trace(trace)
    state.set_graph(graph)
    return state


@pytest.fixture
def gpt2_table(qtbot):
    table = KernelTable(_state(GPT2))
    qtbot.addWidget(table)
    table.show()
    return table


def test_grouped_by_op_the_blocks_linears_are_one_row(gpt2_table, qtbot):
    table = gpt2_table
    assert table.view_box.currentIndex() == 0  # each kernel, as before, by default
    assert table.table.isVisible() and not table.groups.isVisible()
    table.view_box.setCurrentIndex(1)
    assert table.groups.isVisible() and not table.table.isVisible()
    tree = table.groups
    groups = dict(tree.group_rows())
    forward = GPT2.graphs[0]
    # the attention output projection: one Linear per block, one shape, bf16
    names = [k.name for k in forward.kernels if k.name.startswith("extern_kernels.addmm")
             and k.name in PROJ]
    assert sorted(groups[PROJ_GROUP]) == sorted(names) and len(names) == 12
    assert sorted(n for kernels in groups.values() for n in kernels) == sorted(
        k.name for k in forward.kernels)
    assert table.count.text() == f"{len(forward.kernels)} kernels in {len(groups)} groups"
    # slowest group first, its time the sum of its kernels'
    ms = [tree.proxy.index(i, MS).data(Qt.ItemDataRole.UserRole)
          for i in range(tree.proxy.rowCount())]
    assert ms == sorted(ms, reverse=True)
    addmm = list(groups).index(PROJ_GROUP)
    assert ms[addmm] == pytest.approx(sum(k.ms for k in forward.kernels if k.name in names))
    assert float(tree.proxy.index(addmm, MS).data()) == pytest.approx(ms[addmm], rel=1e-3)
    # another column sorts by its numbers
    tree.sortByColumn(MS + 1, Qt.SortOrder.AscendingOrder)  # % of graph
    shares = [tree.proxy.index(i, MS + 1).data(Qt.ItemDataRole.UserRole)
              for i in range(tree.proxy.rowCount())]
    assert shares == sorted(shares)
    # selecting a kernel in a group selects it everywhere, and back
    addmm = [text for text, _ in tree.group_rows()].index(PROJ_GROUP)
    first = tree.proxy.index(0, 0, tree.proxy.index(addmm, 0))
    with qtbot.waitSignal(table.state.sig_kernel_changed) as blocker:
        tree.setCurrentIndex(first)
    assert blocker.args == [first.data(NAME)] and first.data(NAME) in names
    table.state.select_kernel(names[5])
    assert tree.current_kernel() == names[5]
    table.filter.setText("attn.proj")
    shown = dict(tree.group_rows())
    rows = {r["name"]: r for r in table.model.rows}
    assert shown and all("attn.proj" in rows[n]["module"] for ns in shown.values() for n in ns)
    assert table.count.text().endswith(f"in {len(shown)} groups")
    table.view_box.setCurrentIndex(0)
    assert table.table.isVisible() and table.proxy.rowCount() < len(forward.kernels)


def test_an_older_trace_says_its_extern_facts_were_not_recorded(qtbot):
    bert = load_trace(DATA / "gpu_bert_fp16_infer.json.gz")  # recorded before
    state = _state(bert)
    pane = KernelPane(state)
    qtbot.addWidget(pane)
    state.select_kernel(next(k.name for k in bert.graphs[0].kernels if k.backend == "extern"))
    assert NOT_RECORDED in pane.views[0].facts.text()


def test_facts_and_the_fp32_flag_of_a_real_cpu_compile(qtbot):
    state = _state(EXTERN, graph=1)
    table, pane = KernelTable(state), KernelPane(state)
    qtbot.addWidget(table)
    qtbot.addWidget(pane)
    mixed = EXTERN.graphs[1]
    gate = next(k.name for k in mixed.kernels
                if any(n.module == "gate" for n in mixed.nodes if n.name in k.nodes))
    model = table.model
    row = next(i for i, r in enumerate(model.rows) if r["name"] == gate)
    dtype = model.index(row, [c[0] for c in COLUMNS].index("dtype"))
    assert dtype.data() == "fp32 ⚠"
    assert "runs in float32" in dtype.data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(row, 0).data(Qt.ItemDataRole.DecorationRole) is not None
    others = [i for i, r in enumerate(model.rows) if r["name"] != gate]
    assert all(model.index(i, 0).data(Qt.ItemDataRole.DecorationRole) is None for i in others)
    state.select_kernel(gate)
    facts = pane.views[0].facts.text()
    assert "⚠ float32:</b> aten.addmm runs in float32 while this graph computes in bfloat16" \
        in facts
    for text in ("aten.addmm", "fp32&nbsp;→&nbsp;fp32", "[32, 128] fp32 × [128, 8] fp32",
                 "2·M·N·K + M·N", "FLOP/s", "read and written"):
        assert text in facts, text
    charts = ChartsPane(state)
    qtbot.addWidget(charts)
    chart = charts.kernel_chart
    tips = dict(zip(chart.names, chart.bars._tips, strict=True))
    assert "FLOPs: 65.8 kFLOP per launch" in tips[gate] and "⚠ float32" in tips[gate]
