"""The eager baseline of a graph that went through Inductor's lowering patterns."""

from __future__ import annotations

import functools

import pytest
import torch
import torch.fx

from fusionviz.model.capture.eager import NoEagerForm, eager_graph

post_grad = pytest.importorskip("torch._inductor.fx_passes.post_grad")


def _graph_calling(handler) -> torch.fx.GraphModule:
    """What max-autotune's post-grad pass leaves: ``a@b + c@d`` as one lowering call
    (Inductor inserts the handler bound to its match, wrapped as the handler)."""
    fn = functools.wraps(handler)(functools.partial(handler, None))
    graph = torch.fx.Graph()
    a, b, c, d = (graph.placeholder(n) for n in "abcd")
    out = graph.call_function(fn, (), {"mat1": a, "mat2": b, "mat3": c, "mat4": d})
    graph.output(graph.call_function(torch.relu, (out,)))
    return torch.fx.GraphModule(torch.nn.Module(), graph)


@pytest.mark.skipif(not hasattr(post_grad, "mm_plus_mm"), reason="no mm_plus_mm pattern")
def test_a_lowering_call_is_expanded_back_to_its_aten_ops():
    gm = _graph_calling(post_grad.mm_plus_mm)
    args = [torch.randn(8, 16), torch.randn(16, 4), torch.randn(8, 5), torch.randn(5, 4)]
    with pytest.raises(AttributeError, match="get_dtype"):
        gm(*args)  # the lowering function itself needs Inductor IR
    runnable = eager_graph(gm)
    expected = torch.relu(args[0] @ args[1] + args[2] @ args[3])
    torch.testing.assert_close(runnable(*args), expected)
    targets = [n.target for n in runnable.graph.nodes if n.op == "call_function"]
    assert torch.relu in targets and not any(hasattr(t, "func") for t in targets)
    assert any(hasattr(n.target, "func") for n in gm.graph.nodes)  # the original untouched


def test_a_plain_graph_is_returned_as_is_and_an_unknown_lowering_is_refused():
    gm = torch.fx.symbolic_trace(torch.nn.Linear(3, 2))
    assert eager_graph(gm) is gm

    def lowering_only(x):
        raise AssertionError("never run")

    lowering_only._inductor_lowering_function = True
    graph = torch.fx.Graph()
    graph.output(graph.call_function(lowering_only, (graph.placeholder("x"),)))
    with pytest.raises(NoEagerForm, match="lowering_only"):
        eager_graph(torch.fx.GraphModule(torch.nn.Module(), graph))
