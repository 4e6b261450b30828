"""The Dynamo graph run eagerly (``capture/baseline.py``): where a side has no eager
figure, the graph's timing says why in words, never as a number."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from fusionviz.model.capture.baseline import measure_eager  # noqa: E402
from fusionviz.model.trace import Timing  # noqa: E402

pytestmark = pytest.mark.torch


def _graph(fn):
    return torch.fx.symbolic_trace(fn)


def test_a_backward_without_an_eager_figure_says_why():
    timing = Timing(compiled_ms=1.0)
    # no input requires grad: the first call built no autograd graph
    plain = measure_eager(_graph(lambda x: torch.relu(x) * 2), [torch.randn(64, 64)],
                          grad_enabled=True, cuda=False)
    assert plain.backward is None and plain.forward.wall
    forward = plain.apply(timing, "forward")
    assert forward.eager_ms > 0 and forward.eager_source == "Dynamo graph, eager forward"
    back = plain.apply(timing, "backward")
    assert back.eager_ms is None
    assert back.eager_source.startswith("none: the Dynamo graph's first call built no "
                                        "autograd graph")
    # an input requires grad but the outputs are cut from it: nothing to run backward
    cut = measure_eager(_graph(lambda x: (x * 2).detach() + 1),
                        [torch.randn(64, 64, requires_grad=True)], grad_enabled=True,
                        cuda=False)
    back = cut.apply(timing, "backward")
    assert back.eager_ms is None and "reached no tensor that requires grad" in back.eager_source
    # and one that has a backward gets its figure
    real = measure_eager(_graph(lambda x: torch.relu(x).sum()),
                         [torch.randn(64, 64, requires_grad=True)], grad_enabled=True,
                         cuda=False)
    back = real.apply(timing, "backward")
    assert back.eager_ms > 0 and back.eager_source == "Dynamo graph, eager autograd backward"
