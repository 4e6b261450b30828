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
    state.set_trace(load_trace(DATA / "gpu_gpt2_train.json.gz"))
    forward = widget.topLevelItem(0)
    assert forward.text(5) == "2.230" and forward.text(6) == "4.226"
    assert "device time per call (CUDA profiler), median of 3" in forward.toolTip(5)
    assert forward.toolTip(6).startswith("eager 4.226 ms")
    assert forward.toolTip(6).endswith("of Dynamo graph, eager forward")
    assert "80 kernels launched 201 times per call" in forward.toolTip(2)


def test_cpu_times_are_wall_times(qtbot):
    state = ViewState()
    widget = GraphsList(state)
    qtbot.addWidget(widget)
    state.set_trace(load_trace(DATA / "cpu_mlp_block.json.gz"))
    assert "wall time per call" in widget.topLevelItem(0).toolTip(5)
