"""``--what-if reduce-overhead``: the user's callable compiled again with CUDA graphs and
timed as a third side, never recorded and never touching the user's Dynamo cache.

Real in-process compiles on the CPU: Inductor compiles the variant with
``triton.cudagraphs`` on and skips CUDA graphs for a CPU graph (counting the skip),
which is exactly what the note must then say. The GPU path is tested on a committed
H200 trace (``tests/model/test_eager_cudagraphs.py``).
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from torch._dynamo.eval_frame import _debug_get_cache_entry_list  # noqa: E402
from torch._inductor import config as inductor_config  # noqa: E402

from fusionviz.model.capture import entries  # noqa: E402
from fusionviz.model.capture.eager_program import measure_program  # noqa: E402
from fusionviz.model.capture.inprocess import capturing  # noqa: E402

pytestmark = pytest.mark.torch


def user_step(x, w):
    return torch.relu(x @ w).sum()


def _inputs():
    torch.manual_seed(0)
    w = torch.randn(32, 32, requires_grad=True)
    return torch.randn(16, 32), w


def test_the_variant_is_timed_as_a_third_side_and_never_recorded(tmp_path):
    real_compile = torch.compile
    torch._dynamo.reset()
    x, w = _inputs()
    with inductor_config.patch(force_disable_caches=True, fx_graph_cache=False), \
            capturing(str(tmp_path / "t.json.gz")) as rec:
        compiled = torch.compile(user_step)
        compiled(x, w).backward()
        recorded = [(g.kind, g.compile_id) for g in rec.graphs]
        cache = len(_debug_get_cache_entry_list(user_step.__code__))
        graphed, why = entries._cudagraphs_variant(real_compile, rec, user_step, (), {})
        assert why == "" and graphed is not None
        res = measure_program(user_step, compiled, ((x, w), {}), [], grad=True, cuda=False,
                              graphed=graphed)
        after = [(g.kind, g.compile_id) for g in rec.graphs]
    assert recorded == [("forward", "0/0"), ("backward", "0/0")]
    assert after == recorded  # the variant's forward and backward graphs: muted
    assert len(_debug_get_cache_entry_list(user_step.__code__)) == cache == 1
    assert rec.muted == 0
    for samples in (res.graphed_forward, res.graphed_backward):
        assert len(samples.wall) >= 5 and all(ms > 0 for ms in samples.wall)
    assert len(res.compiled_forward.wall) == len(res.graphed_forward.wall)
    # a CPU graph cannot be a CUDA graph: Inductor skips it, and the note says so
    assert res.graphed_note.startswith("Inductor skipped CUDA graphs for "), res.graphed_note


def test_a_failing_variant_costs_only_its_own_figures():
    x, w = _inputs()

    def broken(*args):
        raise RuntimeError("no graphs today")

    import contextlib

    res = measure_program(user_step, user_step, ((x, w), {}), [], grad=True, cuda=False,
                          graphed=(broken, contextlib.nullcontext))
    assert res.graphed_forward is None and res.graphed_backward is None
    assert res.graphed_note == "could not run under CUDA graphs: RuntimeError: no graphs today"
    assert len(res.eager_forward.wall) >= 5 and len(res.compiled_backward.wall) >= 5


@pytest.mark.parametrize(("kwargs", "expected"), [
    ({}, {"mode": "reduce-overhead"}),
    ({"mode": "max-autotune-no-cudagraphs"}, {"mode": "max-autotune"}),
    ({"options": {"max_autotune": True}, "dynamic": False},
     {"options": {"max_autotune": True, "triton.cudagraphs": True}, "dynamic": False}),
])
def test_the_variant_is_compiled_as_the_user_compiled_it_with_cuda_graphs_on(kwargs,
                                                                           expected):
    seen = {}

    def fake_compile(fn, **kw):
        seen.update(kw)
        return fn

    class Rec:
        mute = staticmethod(lambda: None)

    (fn, _), why = entries._cudagraphs_variant(fake_compile, Rec(), user_step, (), kwargs)
    assert why == "" and seen == expected
    assert fn.__code__ is not user_step.__code__ and fn(*_inputs()) == user_step(*_inputs())
    none, why = entries._cudagraphs_variant(fake_compile, Rec(), user_step, (),
                                            {"backend": "aot_eager"})
    assert none is None and "backend 'aot_eager'" in why
