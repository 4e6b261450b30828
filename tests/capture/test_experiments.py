"""What-if experiments with real CPU compiles: round sweep, forbid/force, A/B, no caches."""

import json
from pathlib import Path

import pytest

from fusionviz.model.experiment import runs as experiments
from fusionviz.model.run.runner import run_capture
from fusionviz.model.whatif import WhatIf

pytestmark = pytest.mark.torch

SCRIPT = str(Path(__file__).parents[1] / "data" / "scripts" / "whatif_ops.py")


def _by_ops(trace, *ops):
    return next(n.name for n in trace.graphs[0].nodes if set(ops) <= set(n.ops))


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, monkeypatch_module, capture):
    # Inductor's caches switched on in the environment must not serve a variant.
    monkeypatch_module.setenv("TORCHINDUCTOR_FX_GRAPH_CACHE", "1")
    monkeypatch_module.setenv("TORCHINDUCTOR_AUTOGRAD_CACHE", "1")
    out = tmp_path_factory.mktemp("sweep")
    exp = experiments.sweep_rounds(SCRIPT, str(out), device="cpu")
    # its baseline is run_capture(SCRIPT, out, device="cpu"): the session's capture
    # of whatif_ops.py, made once
    capture.keep("whatif_ops.py", exp.variants[0].trace)
    return out, exp


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_round_sweep_gives_one_variant_per_round_until_fusion_ends(sweep):
    out, exp = sweep
    base, *variants = exp.variants
    rounds = base.trace.graphs[0].rounds
    fused = [len(r.fusions) for r in rounds]
    last = experiments.last_fusing_round(base.trace)
    # whatif_ops fuses in rounds 1-3; the round that fused nothing ends the loop and
    # the loop-reordering round after it fuses nothing either
    assert last >= 3 and fused[last - 1] > 0 and not any(fused[last:]) and len(rounds) > last
    assert len(variants) == last + 1  # after rounds 0 … last, not the rounds after it
    nodes = [len(v.trace.graphs[0].final_groups) for v in variants]
    assert nodes == sorted(nodes, reverse=True)  # monotone non-increasing
    assert nodes[0] == len(base.trace.graphs[0].nodes) > nodes[-1]
    for k, v in enumerate(variants):
        assert len(v.trace.graphs[0].rounds) == k  # every variant's scheduler really ran
        assert v.trace.config["fusionviz.stop_after_round"] == k
    kernels = lambda t: [(k.name, k.nodes) for k in t.graphs[0].kernels]  # noqa: E731
    assert kernels(variants[-1].trace) == kernels(base.trace)
    meta = json.loads((out / "experiment.json").read_text())
    assert [m["label"] for m in meta["variants"]][:2] == ["baseline", "after round 0"]
    report = (out / "report.md").read_text()
    assert "| after round 0 |" in report and "Net node reduction" in report
    assert f"after round {last + 1} |" not in report
    assert f"{last + 1}" in report.split("fused nothing")[0].rsplit("The baseline's", 1)[1]
    assert f"stopped after round {last}, so the sweep ends there" in report
    rows = experiments.sweep_rows(variants)
    assert [r["nodes"] for r in rows] == nodes
    assert rows[0]["est_bytes"] > rows[-1]["est_bytes"]


def test_forbid_and_force_rules(capture, tmp_path):
    base = capture("whatif_ops.py")  # the round sweep's baseline, when it ran first
    g = base.graphs[0]
    sub, relu, sin, cos = (_by_ops(base, *o) for o in (("sub",), ("relu",), ("sin",), ("cos",)))
    assert any({relu, sub} <= set(grp) for grp in g.final_groups)  # fused by default
    rules = WhatIf(forbid=((relu, sub),), force=((sin, relu), (cos, sin)))
    var = run_capture(SCRIPT, str(tmp_path / "var.json.gz"), device="cpu", whatif=rules)
    vg = var.graphs[0]
    assert not any({relu, sub} <= set(grp) for grp in vg.final_groups)
    for r in vg.rounds:
        for c in r.candidates:
            if {relu, sub} <= set(c.a) | set(c.b) and c.outcome != "stale":
                assert c.outcome != "fused"
    # the same values up to float32 summation order: a.sum(dim=1) adds 64 values up to
    # ~7 (4.5e-4 seen once, 5e-6 relative)
    assert vg.timing.max_abs_diff is not None and vg.timing.max_abs_diff < 1e-3
    assert experiments.pair_outcome(var, (relu, sub)).startswith(("rejected", "never"))
    assert experiments.pair_outcome(var, (sin, relu)).startswith("fused")
    forced = [c for r in vg.rounds for c in r.candidates if c.forced]
    assert forced and forced[0].rank == 0
    illegal = experiments.pair_outcome(var, (cos, sin))
    assert illegal.startswith("illegal") and "returned False" in illegal
    assert var.script.status == "ok"


def test_ab_with_a_config_key_gives_the_report_table(tmp_path):
    exp = experiments.ab(SCRIPT, str(tmp_path), {"max_fusion_size": 1}, device="cpu")
    a, b = exp.variants
    assert b.trace.config["max_fusion_size"] == 1
    assert sum(len(r.fusions) for r in b.trace.graphs[0].rounds) == 0
    assert "| Net node reduction | 3 | 0 | -3 |" in exp.report
    assert (tmp_path / "report.csv").read_text().startswith("metric,default,max_fusion_size=1")


def test_rules_limited_to_one_graph(capture, tmp_path):
    base = capture("graph_break")
    fused = [(g.index, f) for g in base.graphs for r in g.rounds for f in r.fusions]
    gi, f = fused[-1]
    rule = (f.a[0], f.b[0])
    script = base.script.path
    var = run_capture(script, str(tmp_path / "v.json.gz"), device="cpu",
                      whatif=WhatIf(forbid=(rule,), graph=gi))
    assert var.config["fusionviz.rules_graph"] == gi
    for g, bg in zip(var.graphs, base.graphs):
        joined = any(set(rule) <= set(grp) for grp in g.final_groups)
        if g.index == gi:
            assert not joined
        else:  # other graphs compile exactly as in the baseline
            assert g.final_groups == bg.final_groups
