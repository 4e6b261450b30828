"""The record equals what Inductor did: generated module and __fusion log agree with it."""

import logging

import pytest

torch = pytest.importorskip("torch")

from torch._inductor.utils import fresh_inductor_cache, run_and_get_code  # noqa: E402

from fusionviz.model.capture.inprocess import capturing  # noqa: E402
from fusionviz.model.capture.kernels import module_sources  # noqa: E402

pytestmark = pytest.mark.torch


class _FusionLog(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.fused: list[tuple[str, str]] = []

    def emit(self, record):
        if record.msg == "fusing %s with %s":
            self.fused.append(tuple(str(a) for a in record.args))


def _model(x, w):
    h = torch.tanh(x @ w)
    a = (h * 2.0).softmax(dim=-1)
    b = torch.sin(h).sum(dim=0)
    return a * b + h.mean(dim=1, keepdim=True)


def test_record_matches_module_and_fusion_log(tmp_path):
    logger = logging.getLogger("torch._inductor.scheduler.__fusion")
    handler, level = _FusionLog(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    torch._dynamo.reset()
    try:
        with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True):
            with capturing(str(tmp_path / "t.json")) as rec:
                _, codes = run_and_get_code(
                    torch.compile(_model), torch.randn(64, 32), torch.randn(32, 48)
                )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    trace = rec.trace()
    assert len(trace.graphs) == 1 and len(codes) == 1
    graph, code = trace.graphs[0], codes[0]
    generated = module_sources(code)
    recorded = {k.name: k.source for k in graph.kernels if k.backend != "extern"}
    assert recorded and recorded.keys() == generated.keys()
    for name, src in recorded.items():
        assert src and src in code, name
    externs = [k for k in graph.kernels if k.backend == "extern"]
    assert [k.name.split(":")[0] for k in externs] == ["extern_kernels.mm"]
    assert "extern_kernels.mm(" in code
    logged = set(handler.fused)
    fused = {("_".join(f.a), "_".join(f.b)) for r in graph.rounds for f in r.fusions}
    assert logged and fused == logged
