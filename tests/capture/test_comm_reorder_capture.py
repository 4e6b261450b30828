"""The recording of post-fusion reordering passes must follow only the recorded
graph's own scheduler and never change what Inductor gets: real in-process compiles on
the CPU with ``reorder_for_compute_comm_overlap`` on (no process group needed: the
passes run, with no collective to move)."""

from __future__ import annotations

import functools

import pytest

torch = pytest.importorskip("torch")

from torch._inductor import config as inductor_config  # noqa: E402

from fusionviz.model.capture.inprocess import capturing  # noqa: E402

CALLS: list[int] = []


def generator_pass(snodes, tag=""):
    """A user pass that returns an iterator (Inductor reads the result once)."""
    CALLS.append(1)
    yield from snodes


def _compile(fn, args, passes, tmp_path):
    torch._dynamo.reset()
    with inductor_config.patch(force_disable_caches=True, fx_graph_cache=False,
                               reorder_for_compute_comm_overlap=True,
                               reorder_for_compute_comm_overlap_passes=passes), \
            capturing(str(tmp_path / "t.json.gz")) as rec:
        out = torch.compile(fn)(*args)
    return out, [g.to_graph() for g in rec.graphs]


def test_a_subgraphs_passes_are_not_the_graphs(tmp_path):
    def branchy(x):
        y = torch.relu(x) * 2
        return torch.cond(y.sum() > 0, lambda t: t.sin() + 1, lambda t: t.cos() - 1, (y,))

    x = torch.randn(32, 8)
    out, graphs = _compile(branchy, (x,), ["sink_waits"], tmp_path)
    torch.testing.assert_close(out, branchy(x))
    (graph,) = graphs
    names = {n.name for n in graph.nodes}
    # the cond's branches were scheduled (and reordered) by schedulers of their own
    assert [r.name for r in graph.reorders] == ["sink_waits"]
    assert {m for g in graph.reorders[0].order_after for m in g} <= names


def test_a_pass_that_returns_an_iterator_still_compiles_the_same_program(tmp_path):
    def f(x):
        return (torch.relu(x * 2.0 + 1.0).sum(dim=-1), x.cos())

    x = torch.randn(16, 8)
    CALLS.clear()
    named = functools.partial(generator_pass, tag="x")
    out, (graph,) = _compile(f, (x,), [named, "raise_comms"], tmp_path)
    torch.testing.assert_close(out, f(x))  # no kernel lost to the recording
    assert CALLS == [1]
    first, second = graph.reorders
    # a partial's name is its function's: the same on every rank (no address)
    assert first.name.endswith("test_comm_reorder_capture.generator_pass")
    assert "0x" not in first.name and second.name == "raise_comms"
    assert first.order_after == first.order_before == second.order_before
    assert graph.final_groups == second.order_after


def test_a_kernel_launched_twice_records_each_launch(tmp_path):
    """Inductor reuses one relu kernel after two matmuls: the timing records each of its
    launches within the call (what the Timeline draws), in order, inside its span."""
    from fusionviz.model.capture.inprocess import capturing as capturing_timed

    def f(a, b):
        x = torch.relu(a @ b)
        return torch.relu(torch.relu(x @ b) @ b).sum()

    torch._dynamo.reset()
    with inductor_config.patch(force_disable_caches=True, fx_graph_cache=False), \
            capturing_timed(str(tmp_path / "t.json.gz"), measure_runtime=True) as rec:
        torch.compile(f)(torch.randn(64, 64), torch.randn(64, 64))
    (graph,) = [g.to_graph() for g in rec.graphs]
    twice = [k for k in graph.kernels if k.calls == 2]
    assert twice, [(k.name, k.calls) for k in graph.kernels]
    for k in twice:
        (s0, e0), (s1, e1) = k.launches
        assert k.start_ms == s0 < e0 <= s1 < e1 == k.end_ms
    assert all(k.launches == () for k in graph.kernels if k.calls == 1)
