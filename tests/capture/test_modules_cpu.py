"""Module paths, boxes and folded blocks of a real compile on the CPU: a small model
with four levels of nesting and four repeated blocks (tests/data/scripts)."""

from __future__ import annotations

from fusionviz.model.module_view import ModuleTree, module_view, repeated_runs
from fusionviz.ui.graph.folding import Folding


def test_nested_blocks_carry_modules_fold_and_collapse(capture):
    trace = capture("nested_blocks.py", timing=False)  # (untimed: quicker)
    assert trace.script.status == "ok", trace.script.traceback
    assert [g.kind for g in trace.graphs] == ["forward", "backward"]
    for graph in trace.graphs:
        with_module = sum(1 for n in graph.nodes if n.module)
        assert with_module >= 0.95 * len(graph.nodes), (graph.kind, with_module, len(graph.nodes))
        tree = ModuleTree(graph)
        assert tree.max_depth >= 4  # h.2.attn.qkv
        (run,) = repeated_runs(tree)  # one class: the blocks fold even where Inductor
        assert run.paths == ("h.0", "h.1", "h.2", "h.3")  # partitioned them differently
        assert all("differ" in why for _, why in run.odd)
        folding = Folding()
        folding.set_graph(graph)
        assert folding.fold_repeated()
        (box,) = folding.view.boxes.values()
        assert box.title == "h.0–3 ×4"
        assert len(folding.view.names) < len(graph.nodes) / 2
        depth3 = module_view(graph, tree, tree.at_depth(3))
        assert {b.path for b in depth3.boxes.values()} >= {f"h.{k}.attn" for k in range(4)}
        assert folding.expand(box.key) and {b.path for b in folding.view.boxes.values()} == set(
            run.paths)
