"""A graph collapsed to its final kernels."""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.kernel_graph import kernel_graph
from fusionviz.model.module_view import ModuleTree, repeated_runs
from fusionviz.model.queries import kernel_of_node
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"
REAL_TRACES = sorted(DATA.glob("*.json.gz"))


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_one_node_per_final_group_named_after_its_kernel(path):
    for graph in load_trace(path).graphs:
        collapsed = kernel_graph(graph)
        final = graph.final_groups or graph.rounds[-1].groups_after
        assert len(collapsed.nodes) == len(final)
        assert sorted(m for n in collapsed.nodes for m in n.members) == \
            sorted(n.name for n in graph.nodes)
        kernel_of = kernel_of_node(graph)
        names = {n.name for n in collapsed.nodes}
        for node in collapsed.nodes:
            kernel = kernel_of.get(node.members[0])
            assert node.name.split("#")[0] == (kernel.name if kernel else node.members[0])
        owner = {m: n.name for n in collapsed.nodes for m in n.members}
        crossing = {(owner[e.src], owner[e.dst]) for e in graph.edges
                    if owner[e.src] != owner[e.dst]}
        assert {(e.src, e.dst) for e in collapsed.edges} == crossing
        for k in collapsed.kernels:  # kernels point at the collapsed nodes
            assert set(k.nodes) <= names
        assert collapsed.rounds == () and collapsed.timing == graph.timing
        (step,) = fusion_steps(collapsed)
        assert step.label == "final" and len(step.groups) == len(final)
        assert collapsed.warnings[0].startswith("kernels only:")


def test_a_fused_group_takes_its_members_ops_bytes_and_most_telling_category():
    graph = load_trace(DATA / "gpu_mlp_block.json.gz").graphs[1]
    collapsed = kernel_graph(graph)
    big = max(collapsed.nodes, key=lambda n: len(n.members))
    members = [n for n in graph.nodes if n.name in big.members]
    assert len(members) > 1 and big.type == f"{len(members)} nodes"
    assert set(big.ops) <= {op for m in members for op in m.ops}
    assert big.category == "reduction"  # reductions with pointwise members


def test_kernels_keep_their_module_so_repeated_blocks_fold_in_kernels_only():
    graph = load_trace(str(DATA / "gpu_gpt2_train.json.gz")).graphs[0]
    kernels = kernel_graph(graph)
    by_name = {n.name: n for n in graph.nodes}
    for node in kernels.nodes:  # each group in the deepest module holding its members
        paths = {by_name[m].module for m in node.members}
        assert all(not node.module or p == node.module or p.startswith(node.module + ".")
                   for p in paths)
        assert node.module or len(paths) > 1 or paths == {""}  # the root: members differ
    runs = repeated_runs(ModuleTree(kernels))
    assert any(len(r.paths) == 12 and r.parent == "blocks" for r in runs)
    launching = sum(1 for n in kernels.nodes if n.name.split("#")[0] in
                    {k.name for k in graph.kernels})
    assert f"{launching} launch one of its {len(graph.kernels)} kernels" in kernels.warnings[0]
