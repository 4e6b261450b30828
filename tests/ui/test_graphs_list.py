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
