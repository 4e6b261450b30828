"""The profiled train step's window (``capture/step_profile``), in this process: opened
by the 2nd call of the first compiled graph, closed by its next, and dropped when a
graph is compiled inside it (its timing would need a profiler of its own)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fusionviz.model.capture import step_profile  # noqa: E402
from fusionviz.model.capture.inprocess import capturing  # noqa: E402

pytestmark = pytest.mark.torch


def test_a_graph_compiled_inside_the_step_drops_it_and_the_next_step_is_profiled(
        tmp_path, monkeypatch):
    # a job of several ranks, as far as the window is concerned (one process here)
    monkeypatch.setattr(step_profile, "in_lockstep", lambda: True)
    torch._dynamo.reset()
    with torch._inductor.config.patch(force_disable_caches=True), capturing(
            str(tmp_path / "t.json.gz")) as rec:
        first = torch.compile(lambda x: (x.sin() + 1).relu())
        second = torch.compile(lambda x: x.cos() * 2)
        x = torch.randn(64)
        first(x)  # graph 0 compiled: the first graph's 1st call
        first(x)  # its 2nd: the window opens
        second(x)  # graph 1 compiled inside the window: dropped
        assert rec.step.prof is None and rec.step.timeline is None
        first(x)  # its 3rd: a new window
        second(x)
        first(x)  # its 4th: closed
    step = rec.step.timeline
    assert step.window == "from the 3rd call of graph 0 to the 4th call of graph 0"
    calls = [s for s in step.spans if s.lane == "compute"]
    assert [s.graph for s in calls] == [0, 1] and calls[0].start_ms == 0
    assert calls[0].end_ms <= calls[1].start_ms <= step.duration_ms
    torch._dynamo.reset()
