"""Where ``realize_opcount_threshold`` applies (#20, item 2), on a real CPU compile: a
pointwise body of many ops used twice is stored to memory for its size; the trace
records its op count, the advisor proposes the threshold just above it, and a replay
with that setting computes the body inside its users instead."""

import pytest

torch = pytest.importorskip("torch")

from torch._inductor.utils import fresh_inductor_cache  # noqa: E402

from fusionviz.cli.main import main  # noqa: E402
from fusionviz.model.advisor.candidates import rank  # noqa: E402
from fusionviz.model.capture.inprocess import capturing  # noqa: E402
from fusionviz.model.report.summary import graph_lines  # noqa: E402
from fusionviz.model.tracefile.io import load_trace  # noqa: E402

pytestmark = pytest.mark.torch


def _chain(x):
    h = x
    for _ in range(30):  # ~90 ops: over the threshold (30 on the GPU, 50 on the CPU)
        h = torch.sin(h) * 1.01 + 0.1
    return h.sum(0), h.amax(1)  # two users: lowering stores h or computes it in both


def test_a_body_stored_for_its_size_is_recorded_and_its_threshold_proposed(tmp_path,
                                                                          capsys):
    path = tmp_path / "chain.json.gz"
    torch._dynamo.reset()
    with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
            capturing(str(path)):
        torch.compile(_chain)(torch.randn(64, 128))
    trace = load_trace(path)
    (graph,) = trace.graphs
    (ops,) = graph.large_bodies
    assert ops > 50, graph.large_bodies
    assert f"lowering stored 1 buffer(s) for the size of their bodies (up to {ops} ops" \
        in "\n".join(graph_lines(graph))
    (setting,) = [c for c in rank(trace, graph) if "realize_opcount" in c.what]
    assert setting.config == (("realize_opcount_threshold", ops + 1),)
    assert setting.measurable and f"up to {ops} ops" in setting.why
    out = tmp_path / "inlined.json.gz"
    assert main(["replay", str(path), "--graph", "0", *setting.try_args, "-o",
                 str(out)]) == 0
    assert "pre-fusion nodes:" in capsys.readouterr().out  # listed among what differs
    inlined = load_trace(out).graphs[-1]
    assert inlined.large_bodies == ()
    # h is no buffer of its own now: each reduction computes it
    assert [n.category for n in inlined.nodes] == ["reduction", "reduction"]
    assert len(inlined.nodes) < len(graph.nodes)
