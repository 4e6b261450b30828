"""synthetic_trace: deterministic, internally consistent, fast enough for benchmarks."""


import pytest

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import load_trace, save_trace


@pytest.fixture(scope="module")
def graph():
    return synthetic_trace(2000, seed=3, rounds=4).graphs[0]


def test_same_seed_same_trace_other_seed_other_trace():
    assert synthetic_trace(300, seed=1) == synthetic_trace(300, seed=1)
    assert synthetic_trace(300, seed=1) != synthetic_trace(300, seed=2)


def test_node_count_and_categories(graph):
    assert len(graph.nodes) == 2000
    assert len({n.name for n in graph.nodes}) == 2000
    cats = {n.category for n in graph.nodes}
    assert {"pointwise", "reduction", "extern"} <= cats


def test_edges_follow_reads_and_writes(graph):
    nodes = {n.name: n for n in graph.nodes}
    order = {n.name: i for i, n in enumerate(graph.nodes)}
    assert len(graph.edges) > len(graph.nodes) * 0.9
    for e in graph.edges:
        assert e.buffer in {a.buffer for a in nodes[e.src].writes}
        assert e.buffer in {a.buffer for a in nodes[e.dst].reads}
        assert order[e.src] < order[e.dst]  # nodes are in topological order
    # Some edges skip ahead (skip connections), most follow a chain.
    assert len({order[e.dst] - order[e.src] for e in graph.edges}) > 3


def test_rounds_only_merge_adjacent_groups(graph):
    groups = tuple((n.name,) for n in graph.nodes)
    for rnd in graph.rounds:
        assert rnd.groups_before == groups
        after = set(rnd.groups_after)
        fused = [c for c in rnd.candidates if c.outcome == "fused"]
        assert len(fused) == len(rnd.fusions) > 0
        assert len(rnd.groups_after) == len(groups) - len(rnd.fusions)
        for f in rnd.fusions:
            assert f.a in groups and f.b in groups
            assert tuple(sorted(f.a + f.b, key=lambda s: int(s[2:]))) in after
            assert f.bytes_saved > 0
        assert sorted(n for g in rnd.groups_after for n in g) == sorted(
            n for g in groups for n in g
        )
        assert [c.rank for c in rnd.candidates] == list(range(len(rnd.candidates)))
        assert all(not v.ok and v.reasons for v in rnd.verdicts)
        groups = rnd.groups_after
    assert graph.final_groups == groups


def test_kernels_cover_final_groups_once(graph):
    covered = [k.nodes for k in graph.kernels]
    assert sorted(covered) == sorted(graph.final_groups)
    assert {k.kind for k in graph.kernels} <= {"poi", "red", "per", "extern"}
    assert all(k.ms and k.ms > 0 and k.source for k in graph.kernels)
    cat = {n.name: n.category for n in graph.nodes}
    for k in graph.kernels:
        has_extern = any(cat[n] == "extern" for n in k.nodes)
        assert (k.kind == "extern") == has_extern


def test_outcomes_are_varied(graph):
    outcomes = {c.outcome for r in graph.rounds for c in r.candidates}
    assert {"fused", "stale", "rejected", "benchmark_slower", "spill"} <= outcomes


def test_round_trips_through_trace_io(tmp_path):
    trace = synthetic_trace(500, seed=5)
    save_trace(trace, tmp_path / "t.json.gz")
    assert load_trace(tmp_path / "t.json.gz", strict=True) == trace


def test_chains_set_the_depth():
    deep = synthetic_trace(600, chains=2).graphs[0]
    wide = synthetic_trace(600, chains=60).graphs[0]
    chain_edges = sum(int(e.dst[2:]) - int(e.src[2:]) == 2 for e in deep.edges)
    assert chain_edges >= 598 - 2  # every node but the two heads follows its chain
    assert sum(int(e.dst[2:]) - int(e.src[2:]) == 60 for e in wide.edges) >= 540


def test_empty_and_no_rounds():
    assert synthetic_trace(0).graphs[0].nodes == ()
    g = synthetic_trace(50, rounds=0).graphs[0]
    assert g.rounds == () and len(g.final_groups) == 50


def test_5k_node_trace_has_consistent_edges_and_groups():
    # (how fast: benchmarks/bench_model.py)
    graph = synthetic_trace(5000).graphs[0]
    names = {n.name for n in graph.nodes}
    assert len(names) == 5000
    assert all(e.src in names and e.dst in names and e.src != e.dst for e in graph.edges)
    assert sorted(n for g in graph.final_groups for n in g) == sorted(names)
