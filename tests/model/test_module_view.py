"""Module boxes and folded repeated blocks on real GPT-2 and Llama train steps (H100)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.model.module_view import (
    BOX,
    ModuleTree,
    module_view,
    repeated_runs,
    run_decisions,
)
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"
GPT2 = load_trace(DATA / "gpu_gpt2_train.json.gz")
LLAMA = load_trace(DATA / "gpu_llama_train.json.gz")
GRAPHS = [*GPT2.graphs, *LLAMA.graphs]
IDS = ["gpt2-forward", "gpt2-backward", "llama-forward", "llama-backward"]


@pytest.mark.parametrize("graph", GRAPHS, ids=IDS)
def test_repeated_blocks_are_found_and_the_odd_first_block_is_flagged(graph):
    runs = repeated_runs(ModuleTree(graph))
    layers = 12 if graph in GPT2.graphs else 4
    assert runs[0].paths == tuple(f"blocks.{i}" for i in range(layers))
    assert runs[0].title == f"blocks.0–{layers - 1} ×{layers}"
    # blocks.0 shares its first norm's nodes with the embedding (attributed to the
    # model, not the block): folded with the others, and flagged
    (odd, why), = runs[0].odd
    assert odd == "blocks.0" and "than blocks.1" in why and "differ" in why


@pytest.mark.parametrize("graph", GRAPHS, ids=IDS)
def test_a_folded_view_accounts_for_every_node_and_edge(graph):
    tree = ModuleTree(graph)
    runs = tuple(repeated_runs(tree))
    view = module_view(graph, tree, frozenset(), runs)
    assert len(view.names) < len(graph.nodes) / 2
    assert set(view.view_of) == {n.name for n in graph.nodes}
    assert set(view.view_of.values()) == set(view.names)
    (box,) = view.boxes.values()
    inside = [m for p in runs[0].paths for m in tree.members[p]]
    assert set(box.nodes) >= set(inside) and len(box.nodes) == len(inside) + box.between
    assert {n for n, v in view.view_of.items() if v == box.key} == set(box.nodes)
    crossing = sum(1 for e in graph.edges if view.view_of[e.src] != view.view_of[e.dst])
    assert sum(view.edge_count.values()) == crossing  # edges between boxes: aggregated
    assert all(a != b for a, b in view.edges)


def test_residual_adds_between_folded_blocks_join_the_fold():
    forward = GPT2.graphs[0]
    tree = ModuleTree(forward)
    view = module_view(forward, tree, frozenset(), tuple(repeated_runs(tree)))
    (box,) = view.boxes.values()
    joined = set(box.nodes) - {m for p in box.run.paths for m in tree.members[p]}
    assert len(joined) == box.between > 10
    nodes = {n.name: n for n in forward.nodes}
    assert all(not nodes[m].module.startswith("blocks.") for m in joined)


def test_collapsing_to_depth_two_shows_one_box_per_layer_with_counted_edges():
    forward = GPT2.graphs[0]
    tree = ModuleTree(forward)
    view = module_view(forward, tree, tree.at_depth(2))
    layer_boxes = sorted(b.path for b in view.boxes.values() if b.path.startswith("blocks."))
    assert layer_boxes == sorted(f"blocks.{i}" for i in range(12))
    assert all(view.boxes[BOX + p].module_class == "Block" for p in layer_boxes)
    assert max(view.edge_count.values()) > 1


def test_decisions_inside_folded_blocks_are_matched_block_to_block():
    backward = GPT2.graphs[1]
    tree = ModuleTree(backward)
    run = repeated_runs(tree)[0]
    agreed = run_decisions(backward, tree, run)
    assert agreed.blocks == 12 and agreed.same > 5
    # blocks.0 lacks one node (attributed to the model): its pair is no candidate there
    assert agreed.differ and all(
        split["not a candidate"] == ("blocks.0",) and len(split) == 2
        for _, split in agreed.differ)
    # the same graph with one block's fusion turned down: that decision now differs
    block = set(tree.members["blocks.5"])
    rounds = list(backward.rounds)
    for ri, r in enumerate(rounds):
        hit = next((c for c in r.candidates if c.outcome == "fused"
                    and set(c.a) | set(c.b) <= block), None)
        if hit is not None:
            cands = tuple(replace(c, outcome="rejected") if c is hit else c for c in r.candidates)
            rounds[ri] = replace(r, candidates=cands)
            break
    changed = run_decisions(replace(backward, rounds=tuple(rounds)), tree, run)
    assert changed.same == agreed.same - 1
    (pair, split), = [d for d in changed.differ if "rejected" in d[1]]
    assert split["rejected"] == ("blocks.5",) and len(split["fused"]) == 11
