"""The Notices pane's lines (model/report/notices), on real traces."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from fusionviz.model.report.notices import notice_lines
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.validate import (
    Problems,
    detail_problems,
    graph_problems,
    trace_problems,
)

DATA = Path(__file__).resolve().parents[1] / "data"


def test_a_failed_script_comes_first_and_a_graph_says_what_it_lacks():
    trace = load_trace(DATA / "gpu_mlp_block_bench.json.gz")
    lines = notice_lines(trace, None, trace_problems(trace))
    assert lines[0].startswith(f"Script status: {trace.script.status}. ")
    assert trace.script.status not in ("ok", "running")

    breaks = load_trace(DATA / "gpu_breaks.json.gz")
    graph = breaks.graphs[1]
    lines = notice_lines(breaks, graph, trace_problems(breaks), graph_problems(graph))
    assert [line for line in lines if line.startswith("graph ")] == [
        f"graph 1: {w}" for w in graph.warnings]
    assert any("no module paths" in line for line in lines)


def test_unreadable_parts_and_problems_are_listed_in_order():
    trace = load_trace(DATA / "gpu_gpt2_train.json.gz")
    graph = trace.graphs[0]
    assert notice_lines(trace, graph, trace_problems(trace), graph_problems(graph)) == []
    broken = Problems()
    broken("edges naming nodes that are not in the graph", ["op1 -> op999"])
    lines = notice_lines(trace, graph, broken, broken, ["x.json.gz: round 3"])
    assert lines == ["malformed, not shown: x.json.gz: round 3",
                     "trace does not hold together: edges naming nodes that are not "
                     "in the graph: op1 -> op999",
                     "graph 0 does not hold together: edges naming nodes that are not "
                     "in the graph: op1 -> op999"]


def test_the_summary_says_every_notice_the_window_shows():
    """``fusionviz summary`` prints the Notices pane's own lines (the script's status it
    says in its header): the trace's under the header, each graph's under the graph."""
    traces = [load_trace(DATA / name) for name in (
        "gpu_mlp_block_bench.json.gz", "gpu_breaks.json.gz",  # raised, busy, no modules
        "ranks/cpu_all_gather_bucketing/rank0.json.gz",  # a collective pass
        "ranks/cpu_ddp_buckets/rank0.json.gz")]  # timed on a busy machine
    untested = dataclasses.replace(traces[0], env={**traces[0].env, "torch": "2.16.0"})
    said = 0
    for trace in (*traces, untested):
        summary = summary_text(trace).splitlines()
        for graph in (None, *trace.graphs):
            problems = None if graph is None else Problems(graph_problems(graph),
                                                           detail_problems(graph))
            lines = notice_lines(trace, graph, trace_problems(trace), problems)
            if graph is not None:  # the graph's own, after the trace's
                lines = lines[len(notice_lines(trace, None, trace_problems(trace))):]
                assert all(f"  notice: {line}" in summary for line in lines), lines
            else:
                assert all(f"notice   {line}" in summary for line in lines
                           if not line.startswith("Script status: ")), lines
            said += len(lines)
    kinds = ("Captured with torch 2.16.0", " timing: timed while the machine was busy",
             ", before lowering: bucket_all_gathers", ": no module paths")
    text = "\n".join(summary_text(t) for t in (*traces, untested))
    assert said > 10 and all(k in text for k in kinds)
