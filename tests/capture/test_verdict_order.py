"""Verdicts keep the pair in the order Inductor checked it (#19, item 5).

When the second node of a candidate pair is a template (or a foreach node), Inductor's
``get_possible_fusions`` asks ``can_fuse(node2, node1)`` too, after ``can_fuse(node1,
node2)`` said no. A real compile where that happens on the CPU: a linear layer as a
C++ GEMM template (max-autotune, frozen weights) whose input is a ``sin``: the record
holds both questions, each on the pair in the order it was asked, with its answer.
"""

import pytest

torch = pytest.importorskip("torch")

from torch._inductor import scheduler  # noqa: E402
from torch._inductor.utils import fresh_inductor_cache  # noqa: E402

from fusionviz.model.capture.inprocess import capturing  # noqa: E402

pytestmark = pytest.mark.torch


class _SinLinearRelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(64, 64)

    def forward(self, a):
        return torch.relu(self.lin(a.sin()))


def test_a_pair_inductor_checks_in_reverse_is_recorded_in_that_order(tmp_path, monkeypatch):
    asked = []
    real = scheduler.Scheduler.can_fuse

    def spy(self, node1, node2, *args, **kwargs):
        ok = real(self, node1, node2, *args, **kwargs)
        asked.append((tuple(n.get_name() for n in node1.get_nodes()),
                      tuple(n.get_name() for n in node2.get_nodes()), node1.is_template(),
                      bool(ok)))
        return ok

    monkeypatch.setattr(scheduler.Scheduler, "can_fuse", spy)
    torch._dynamo.reset()
    with torch.no_grad(), fresh_inductor_cache(), torch._inductor.config.patch(
            force_disable_caches=True, max_autotune=True, max_autotune_gemm_backends="CPP",
            freezing=True), capturing(str(tmp_path / "t.json")) as rec:
        torch.compile(_SinLinearRelu().eval())(torch.randn(64, 64))
    reverse = [(a, b, ok) for a, b, template, ok in asked if template and not ok]
    if not reverse:
        pytest.skip("no C++ GEMM template on this CPU: Inductor asked nothing in reverse")
    graph = rec.trace().graphs[-1]
    said = {(v.a, v.b): v.ok for r in graph.rounds for v in r.verdicts}
    said.update({(c.a, c.b): c.outcome == "fused" for r in graph.rounds for c in r.candidates})
    for a, b, ok in reverse:  # (template, its input's producer): asked and recorded so
        assert said.get((a, b)) is ok, (a, b, sorted(said))
        assert (b, a) in said, "the first question, in its own order, is kept too"


def test_a_reason_logged_with_the_pair_swapped_is_marked(tmp_path, monkeypatch):
    """Triton's backend checks a (reduction, pointwise) pair as (pointwise, reduction)
    (``SIMDScheduling.can_fuse``: "swap args to hit the case above"), so Inductor's log
    reads "cannot fuse <pointwise> with <reduction>" for the scheduler's question
    can_fuse(<reduction>, <pointwise>). No model here reaches it on a GPU (7 real
    models, 7,850 lines: benchmarks/verdict_order.py), so the C++ backend of a real
    CPU compile is made to answer that way: the record keeps the scheduler's order and
    marks the reason, and ``why`` says so."""
    from torch._inductor.codegen.cpp import CppScheduling

    from fusionviz.model.report.why_report import reason_text

    real = CppScheduling.can_fuse_vertical

    def swapped_check(self, node1, node2):
        if node1.is_reduction() and not node2.is_reduction():
            scheduler.WhyNoFuse(node2, node1)("nodes numel incompatibility")
            return False
        return real(self, node1, node2)

    monkeypatch.setattr(CppScheduling, "can_fuse_vertical", swapped_check)
    torch._dynamo.reset()
    with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
            capturing(str(tmp_path / "t.json")) as rec:
        torch.compile(lambda x: torch.softmax(x * 2.0, dim=-1))(torch.randn(32, 64))
    reasons = [(c.a, c.b, r) for g in rec.trace().graphs for rd in g.rounds
               for c in (*rd.verdicts, *rd.candidates) for r in c.reasons
               if r.text == "nodes numel incompatibility"]
    assert reasons, "the swapped check was reached"
    assert all(r.swapped for _, _, r in reasons)
    assert "Inductor's log names the pair the other way round" in reason_text(reasons[0][2])
    others = [r for g in rec.trace().graphs for rd in g.rounds
              for c in (*rd.verdicts, *rd.candidates) for r in c.reasons
              if r.text != "nodes numel incompatibility"]
    assert not any(r.swapped for r in others)
