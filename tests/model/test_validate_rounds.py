"""A trace that parses and builds but does not hold together is said so: every name a
round, a candidate, a fusion or a kernel group uses, every time, size, outcome and
status (issue #19: 536 clearly broken fuzzed traces opened silently). Real traces, each
broken one way; the committed traces have no such problem."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.model.report.query import query_document
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace, save_trace
from fusionviz.model.validate import detail_problems, graph_problems, trace_problems

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "gpu_mlp_block_bench.json.gz"  # benchmark decisions, several rounds


@pytest.fixture(scope="module")
def real():
    return load_trace(str(TRACE))


def _with_round(trace, **changes):
    g = trace.graphs[0]
    r = replace(g.rounds[0], **changes)
    return replace(trace, graphs=(replace(g, rounds=(r, *g.rounds[1:])), *trace.graphs[1:]))


def _problems(trace) -> list[str]:
    return trace_problems(trace) + [p for g in trace.graphs
                                    for p in graph_problems(g) + detail_problems(g)]


@pytest.mark.parametrize("path", sorted(DATA.glob("*.json.gz")), ids=lambda p: p.name)
def test_committed_traces_hold_together(path):
    assert _problems(load_trace(str(path))) == []


def test_each_broken_reference_or_number_is_named(real, tmp_path):
    g = real.graphs[0]
    r = g.rounds[0]
    c, *rest = r.candidates
    ghost = ("op_ghost",)
    k = g.kernels[0]
    cases = {
        "rounds naming nodes that are not in the graph": _with_round(
            real, groups_after=(*r.groups_after, ghost)),
        "candidates of an unknown outcome": _with_round(
            real, candidates=(replace(c, outcome="exploded"), *rest)),
        "candidates whose sides are not among the round's groups": _with_round(
            real, candidates=(replace(c, a=c.a + c.b), *rest)),
        "round sizes negative or over": _with_round(
            real, candidates=(replace(c, bytes_saved=10 ** 40), *rest)),
        "round times that are not finite": _with_round(real, wall_s=math.inf),
        "kernel groups naming nodes that are not in the graph": replace(real, graphs=(
            replace(g, kernels=(replace(k, groups=(ghost,)), *g.kernels[1:])),
            *real.graphs[1:])),
        "compile or fusion times that are not finite": replace(real, graphs=(
            replace(g, compile_s=math.nan, fusion_s=math.inf), *real.graphs[1:])),
        "sizes over": replace(real, graphs=(
            replace(g, kernels=(replace(k, bytes=10 ** 40), *g.kernels[1:])),
            *real.graphs[1:])),
        "a script status fusionviz does not know": replace(
            real, script=replace(real.script, status="exploded")),
        "final groups naming nodes that are not in the graph": replace(real, graphs=(
            replace(g, final_groups=(*g.final_groups, ghost)), *real.graphs[1:])),
        "a graph kind fusionviz does not know": replace(real, graphs=(
            replace(g, kind="sideways"), *real.graphs[1:])),
        # a count, a spread, a rank, a score and a source line, each impossible alone
        "numbers that cannot be (kernel)": replace(real, graphs=(
            replace(g, kernels=(replace(k, n_regs=-7), *g.kernels[1:])), *real.graphs[1:])),
        "numbers that cannot be (spread)": replace(real, graphs=(
            replace(g, kernels=(replace(k, ms_spread=(0.1, math.nan)), *g.kernels[1:])),
            *real.graphs[1:])),
        "numbers that cannot be (rank)": _with_round(
            real, candidates=(replace(c, rank=10 ** 20), *rest)),
        "numbers that cannot be (score)": _with_round(
            real, candidates=(replace(c, score={**c.score, "memory_score": math.inf}), *rest)),
        "numbers that cannot be (origin)": replace(real, graphs=(
            replace(g, nodes=(replace(g.nodes[0], origins=(
                replace(g.nodes[0].origins[0], line=-3),)), *g.nodes[1:])),
            *real.graphs[1:])),
        "script numbers that are not finite": replace(
            real, script=replace(real.script, exit_code=2 ** 63 - 1)),
    }
    for what, broken in cases.items():
        found = [p for p in _problems(broken) if p.startswith(what.split(" (")[0])]
        assert len(found) == 1, (what, _problems(broken))
        # said by summary and by query, also after a round trip through the file
        path = tmp_path / "broken.json.gz"
        save_trace(broken, str(path))
        again = load_trace(str(path))
        assert found[0] in summary_text(again, rounds=True), what
        doc = query_document(again, str(path))
        said = [p["message"] for p in doc["problems"]] + [
            p for row in doc["graphs"] for p in row["problems"]]
        assert found[0] in said, what
