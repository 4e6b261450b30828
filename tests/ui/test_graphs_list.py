"""The graphs list says what its times are: device or wall, samples, spread, launches."""

from __future__ import annotations

from pathlib import Path

from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui.graphs_list import GraphsList
from fusionviz.ui.view_state import ViewState

DATA = Path(__file__).resolve().parents[1] / "data"


def test_profiled_gpu_times_are_labelled_device_times_with_their_samples(qtbot):
    state = ViewState()
    widget = GraphsList(state)
    qtbot.addWidget(widget)
    trace = load_trace(DATA / "gpu_gpt2_train.json.gz")
    state.set_trace(trace)
    forward, t = widget.topLevelItem(0), trace.graphs[0].timing
    assert forward.text(6) == f"{t.compiled_ms:.3f}" and forward.text(7) == f"{t.eager_ms:.3f}"
    assert "device time per call (CUDA profiler), median of 5" in forward.toolTip(6)
    assert f">eager {t.eager_ms:.3f} ms" in forward.toolTip(7)
    assert "of your program, eager forward" in forward.toolTip(7)
    launches = sum(k.calls for k in trace.graphs[0].kernels)
    assert launches > 12 * len(trace.graphs[0].kernels) // 10  # per-layer kernels
    assert f"80 kernels launched {launches} times per call" in forward.toolTip(3)


def test_cpu_times_are_wall_times(qtbot):
    state = ViewState()
    widget = GraphsList(state)
    qtbot.addWidget(widget)
    state.set_trace(load_trace(DATA / "cpu_mlp_block.json.gz"))
    assert "wall time per call" in widget.topLevelItem(0).toolTip(6)


def test_ddp_optimizer_pieces_sit_under_one_row_per_side(qtbot):
    """A frame Dynamo's DDP optimizer split into 4 pieces (2 gloo ranks, CPU): one row
    per side sums its pieces, each piece's row says which it is and what its bucket
    holds, and a click on a side's row shows its first piece."""
    state = ViewState()
    widget = GraphsList(state)
    qtbot.addWidget(widget)
    trace = load_trace(DATA / "ranks" / "cpu_ddp_buckets" / "rank0.json.gz")
    state.set_trace(trace)
    assert widget.rootIsDecorated() and widget.topLevelItemCount() == 2
    forward, backward = widget.topLevelItem(0), widget.topLevelItem(1)
    assert forward.text(0) == "#0–3 forward" and backward.text(0) == "#4–7 backward"
    assert forward.text(1) == "4 pieces (DDP optimizer)"
    assert [forward.child(i).text(0) for i in range(forward.childCount())] == [
        f"#{i} forward [{trace.graphs[i].compile_id}]" for i in range(4)]
    piece = forward.child(1)
    assert piece.text(1) == "piece 2 of 4 (DDP optimizer: a bucket of 2 parameters, 1.0 MiB)"
    assert "- layers.1.weight" in piece.toolTip(1)
    compiled = sum(g.timing.compiled_ms for g in trace.graphs[:4])
    assert forward.text(6) == f"{compiled:,.3f}"
    # only the frame's last forward piece carries its reasons (if any): not every piece
    assert all(not g.break_reasons for g in trace.graphs[:3])
    widget.setCurrentItem(backward)
    assert state.graph_index == 4
    state.set_graph(6)
    assert widget.currentItem() is backward.child(2)
