"""What the advisor measures and how it says so (#20, items 3 and 4), on real traces:
the pairs worth a replay (not those Inductor fused in the end anyway, not those no rule
can force), the settings it proposes, the measurement plan, the outputs check, and the
measured document read back beside its trace (an H100 measurement of a Llama step)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from fusionviz.model.advisor.candidates import rank
from fusionviz.model.advisor.document import measured_document, read_measured
from fusionviz.model.advisor.measure import (
    Measured,
    Measurement,
    plan,
    results_changed,
)
from fusionviz.model.errors import TraceError
from fusionviz.model.trace import Timing
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"
LLAMA = DATA / "advice" / "gpu_llama_train.json.gz"  # measured on an H100: advice.json
GPT2 = DATA / "gpu_gpt2_train.json.gz"


@pytest.fixture(scope="module")
def gpt2():
    return load_trace(GPT2)


def test_no_pair_inductor_fused_in_the_end_is_proposed(gpt2):
    for graph in gpt2.graphs:
        kernel_of = {n: i for i, g in enumerate(graph.final_groups) for n in g}
        pairs = [c for c in rank(gpt2, graph) if c.kind == "pair"]
        assert pairs
        for c in pairs:
            a, b = c.force[0]
            assert kernel_of.get(a, -1) != kernel_of.get(b, -2), c.what


def test_pairs_no_rule_can_force_are_listed_but_not_measured(gpt2):
    pairs = [c for c in rank(gpt2, gpt2.graphs[0]) if c.kind == "pair"]
    structural = [c for c in pairs if "intermediate nodes between" in c.why
                  or "numel/rnumel mismatch" in c.why]
    assert structural and not any(c.measurable for c in structural)
    assert all("nor by forcing it" in c.apply for c in structural)
    assert all(c.measurable for c in pairs if c not in structural and c.bytes_saved)


def test_settings_proposed_for_a_gpu_train_step(gpt2):
    configs = {c.what: c for g in gpt2.graphs for c in rank(gpt2, g) if c.kind == "config"}
    tuning = configs["coordinate_descent_tuning=True"]
    assert tuning.try_args == ("--config", "coordinate_descent_tuning=True")
    assert "generated Triton kernels take" in tuning.why
    assert configs["max_autotune=True"].try_args == ("--config", "max_autotune=True")


@pytest.mark.parametrize("count, order", [
    (1, [None, 0, None]), (2, [None, 0, 1, None]), (3, [None, 0, 1, None, 2, None]),
])
def test_every_candidate_is_timed_next_to_a_baseline(count, order):
    assert plan(count) == order


@pytest.mark.parametrize("base, candidate, changed", [
    (1e-3, 2e-3, False), (1e-3, 1e-2, True), (0.0, 1e-6, False), (0.0, 1e-3, True),
    (1e-3, math.nan, True), (math.nan, math.nan, False), (math.nan, 1.0, False),
    (None, 1.0, False),
])
def test_outputs_count_as_changed_beyond_four_times_the_baselines(base, candidate, changed):
    said = results_changed(Timing(compiled_ms=1.0, max_abs_diff=base),
                           Timing(compiled_ms=1.0, max_abs_diff=candidate))
    assert bool(said) == changed, said


def test_an_h100_measurement_reads_back_beside_its_trace():
    trace = load_trace(LLAMA)
    found = read_measured(json.loads((DATA / "advice" / "advice.json").read_text()), trace)
    assert sorted(found) == [0, 1]
    forward = found[0]
    assert forward.clock == "device time" and forward.jobs == 8 and len(forward.baselines) == 3
    assert {r.verdict for r in forward.results} >= {"within noise", "not generated"}
    # measured by a fusionviz that proposed the mode: rebuilt from its replay arguments
    (backward,) = found[1].results
    assert backward.candidate.mode == "max-autotune-no-cudagraphs"
    assert backward.verdict == "changed results" and backward.gain_ms > 0


def test_a_document_round_trips_and_refuses_another_trace():
    trace = load_trace(LLAMA)
    graph = trace.graphs[0]
    cands = rank(trace, graph)
    m = Measurement(graph.index, "device time", baselines=[1.0, 1.01], jobs=4, results=[
        Measured(cands[1], "win", 1.0, 0.9, 0.1, 0.02, "kernels 49 -> 48", "r.json.gz",
                 (49, 48))])
    doc = json.loads(json.dumps(measured_document("t.json.gz", [(graph, cands, m)])))
    assert doc["graphs"][0]["nodes"] == len(graph.nodes)
    (back,) = read_measured(doc, trace)[0].results
    assert back.candidate == cands[1] and back.verdict == "win" and back.kernels == (49, 48)
    other = load_trace(DATA / "cpu_replay_block.json.gz")
    with pytest.raises(TraceError, match="another trace"):
        read_measured(doc, other)
    for bad in ({}, {"schema": "fusionviz.advise/1", "measured": False, "graphs": []},
                {**doc, "graphs": [{"kind": "forward"}]}):
        with pytest.raises(TraceError):
            read_measured(bad, trace)
    # a replay argument that is not one: skipped, never an exit
    doc["graphs"][0]["measured"][0]["try"] = ["fusionviz", "replay", "t", "--graph", "0",
                                              "--config", "no equals sign"]
    assert read_measured(doc, trace)[0].results == []


def test_a_setting_that_decided_refusals_is_proposed():
    trace = load_trace(DATA / "cpu_replay_block.json.gz")  # refusals under the threshold
    (setting,) = [c for c in rank(trace, trace.graphs[1]) if c.kind == "config"]
    assert setting.try_args == ("--config", "score_fusion_memory_threshold=1")
    assert "refusal(s)" in setting.why


def test_a_producer_and_consumer_never_asked_about_are_a_candidate():
    from fusionviz.model.trace import Access, Graph, Node, Trace

    mb = 1 << 20
    nodes = (Node("op0", "SchedulerNode", "pointwise", writes=(Access("buf0", 8 * mb),)),
             Node("op1", "SchedulerNode", "pointwise", reads=(Access("buf0", 8 * mb),),
                  writes=(Access("buf1", 1024),)),
             Node("op2", "SchedulerNode", "pointwise", reads=(Access("buf0", 8 * mb),),
                  writes=(Access("buf2", 1024),)))
    graph = Graph(index=0, kind="inference", device="cuda:0", backend="triton", nodes=nodes,
                  final_groups=(("op0", "op2"), ("op1",)))
    trace = Trace(env={"peak_dram_gb_s": 1000.0}, graphs=(graph,))
    (never,) = [c for c in rank(trace, graph) if c.kind == "pair"]
    assert never.force == (("op0", "op1"),) and "never a candidate" in never.why
    assert never.bytes_saved == 8 * mb and never.measurable  # op2 reads it too: one read


def test_graphs_the_budget_did_not_reach_are_said_not_failed(tmp_path, capsys):
    from fusionviz.cli.main import main

    assert main(["advise", str(LLAMA), "--measure", "2", "--budget", "0", "--json",
                 "-o", str(tmp_path)]) == 0
    graphs = json.loads(capsys.readouterr().out)["graphs"]
    assert [g["problem"] for g in graphs] == ["not measured: the time budget (--budget 0 s) "
                                              "ran out before this graph"] * 2
    assert not list(tmp_path.glob("graph_*/replay_*"))  # nothing was started
