"""The Notices pane's lines (model/report/notices), on real traces."""

from __future__ import annotations

from pathlib import Path

from fusionviz.model.report.notices import notice_lines
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.validate import Problems, graph_problems, trace_problems

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
