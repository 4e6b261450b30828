"""layout: layered, downward, non-overlapping, few crossings, fast, deterministic."""

import random
from pathlib import Path

import numpy as np
import pytest

from fusionviz.model.layout.layering import DUMMY_BUDGET
from fusionviz.model.layout.sugiyama import count_crossings, layout
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import load_trace

REAL_TRACES = sorted((Path(__file__).parents[1] / "data").glob("*.json.gz"))


def _graph_of(graph):
    return [n.name for n in graph.nodes], [(e.src, e.dst) for e in graph.edges]


@pytest.fixture(scope="module")
def synthetic():
    return _graph_of(synthetic_trace(2000, seed=7).graphs[0])


def assert_no_overlaps(lay):
    gap = lay.node_width - 1e-6
    for k in np.unique(lay.layer):
        xs = np.sort(lay.x[lay.layer == k])
        assert (np.diff(xs) >= gap).all(), f"layer {k} has overlapping boxes"
    assert (lay.x - lay.node_width / 2 >= -1e-6).all()
    assert (lay.x + lay.node_width / 2 <= lay.width + 1e-6).all()
    assert (lay.y + lay.node_height / 2 <= lay.height + 1e-6).all()


def assert_edges_go_down(lay):
    half = lay.node_height / 2
    for (s, d), path in zip(lay.edges, lay.edge_paths, strict=True):
        assert lay.layer[s] < lay.layer[d]
        assert np.allclose(path[0], (lay.x[s], lay.y[s] + half))
        assert np.allclose(path[-1], (lay.x[d], lay.y[d] - half))
        assert (np.diff(path[:, 1]) > 0).all()
        # one bend per layer crossed, or straight: past DUMMY_BUDGET bend points per
        # node the longest edges stay one segment (real in the GPT-2 train step)
        assert len(path) in (2, lay.layer[d] - lay.layer[s] + 1)


def test_sweeps_remove_a_crossing_the_input_order_makes():
    # input order puts c left of d, but a feeds d and b feeds c
    names = ["a", "b", "c", "d"]
    edges = [("a", "d"), ("b", "c")]
    assert count_crossings(layout(names, edges, sweeps=0)) == 1
    assert count_crossings(layout(names, edges)) == 0


def test_complete_bipartite_has_its_one_unavoidable_crossing():
    lay = layout(["a", "b", "c", "d"], [("a", "c"), ("a", "d"), ("b", "c"), ("b", "d")])
    assert count_crossings(lay) == 1


def test_shuffled_tree_is_drawn_without_crossings():
    names = [f"t{i}" for i in range(63)]
    edges = [(f"t{(i - 1) // 2}", f"t{i}") for i in range(1, 63)]
    random.Random(0).shuffle(names)
    lay = layout(names, edges)
    assert count_crossings(lay) == 0
    assert sorted(lay.layer.tolist()) == sorted(int(np.log2(int(n[1:]) + 1)) for n in names)


def test_synthetic_graph_is_layered_downward_without_overlaps(synthetic):
    lay = layout(*synthetic)
    assert lay.names == tuple(synthetic[0])
    assert len(lay.edges) == len(lay.edge_paths) == len(synthetic[1])
    assert_no_overlaps(lay)
    assert_edges_go_down(lay)


def test_deep_narrow_graph(synthetic):
    lay = layout(*_graph_of(synthetic_trace(1500, chains=3, seed=2).graphs[0]))
    assert lay.layer.max() > 400  # thousands of layers is the real-model shape
    assert_no_overlaps(lay)
    assert_edges_go_down(lay)


def test_many_cycles_are_all_broken():
    names = [f"v{i}" for i in range(200)]
    rng = random.Random(3)
    edges = [(f"v{rng.randrange(200)}", f"v{rng.randrange(200)}") for _ in range(600)]
    lay = layout(names, edges)
    kept = [(a, b) for a, b in edges if a != b]
    assert len(lay.edges) == len(lay.edge_paths) == len(kept)
    half = lay.node_height / 2
    for (s, d), path in zip(lay.edges, lay.edge_paths, strict=True):
        assert lay.layer[s] != lay.layer[d]
        down = lay.layer[s] < lay.layer[d]
        assert np.allclose(path[0], (lay.x[s], lay.y[s] + (half if down else -half)))
        assert np.allclose(path[-1], (lay.x[d], lay.y[d] - (half if down else -half)))
        assert (np.diff(path[:, 1]) > 0).all() == down
    assert_no_overlaps(lay)


def test_bend_points_are_capped_by_drawing_the_longest_edges_straight():
    # a 400-deep chain whose head also feeds every node: ~80k bend points uncapped
    names = [f"c{i}" for i in range(400)]
    edges = [(f"c{i}", f"c{i + 1}") for i in range(399)]
    edges += [("c0", f"c{i}") for i in range(2, 400)]
    lay = layout(names, edges)
    bends = sum(len(p) - 2 for p in lay.edge_paths)
    assert 0 < bends <= DUMMY_BUDGET * len(names)
    half = lay.node_height / 2
    for (s, d), path in zip(lay.edges, lay.edge_paths, strict=True):
        assert lay.layer[s] < lay.layer[d] and (np.diff(path[:, 1]) > 0).all()
        assert np.allclose(
            path[[0, -1]], [(lay.x[s], lay.y[s] + half), (lay.x[d], lay.y[d] - half)]
        )
        assert len(path) in (2, lay.layer[d] - lay.layer[s] + 1)
    assert_no_overlaps(lay)


def test_breaking_thousands_of_cycles_stays_linear():
    names = [f"v{i}" for i in range(5000)]
    pairs = [(f"v{i}", f"v{i ^ 1}") for i in range(5000)]  # 2500 two-node cycles
    lay = layout(names, pairs)  # (how fast: benchmarks/bench_model.py)
    assert sorted(set(lay.layer.tolist())) == [0, 1]
    # each cycle is broken once: one node of every pair above the other
    for i in range(0, 5000, 2):
        assert {int(lay.layer[i]), int(lay.layer[i + 1])} == {0, 1}


def test_sweeps_cut_crossings_of_a_shuffled_graph(synthetic):
    names, edges = synthetic
    names = list(names)
    random.Random(1).shuffle(names)
    before = count_crossings(layout(names, edges, sweeps=0))
    after = count_crossings(layout(names, edges, sweeps=4))
    assert after < before / 10


def test_layers_are_longest_paths_with_sources_pulled_down():
    names = ["a", "b", "c", "d", "s"]
    edges = [("a", "b"), ("b", "c"), ("c", "d"), ("s", "d")]
    lay = layout(names, edges)
    assert lay.layer.tolist() == [0, 1, 2, 3, 2]  # s sits just above its consumer
    lay = layout(["a", "b", "c"], [("a", "c"), ("a", "b"), ("b", "c")])
    assert lay.layer.tolist() == [0, 1, 2]
    assert len(lay.edge_paths[0]) == 3  # a -> c bends once, in b's layer


def test_cycles_duplicates_unknown_names_and_isolated_nodes():
    names = ["a", "b", "c", "lonely"]
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("a", "b"), ("a", "ghost"), ("c", "c")]
    lay = layout(names, edges)
    assert lay.edges == ((0, 1), (1, 2), (2, 0), (0, 1))
    assert lay.layer.tolist()[:3] == [0, 1, 2]
    assert np.array_equal(lay.edge_paths[0], lay.edge_paths[3])
    back = lay.edge_paths[2]  # c -> a runs upward: from c's top to a's bottom
    half = lay.node_height / 2
    assert np.allclose(back[0], (lay.x[2], lay.y[2] - half))
    assert np.allclose(back[-1], (lay.x[0], lay.y[0] + half))
    assert_no_overlaps(lay)


def test_empty_and_edgeless():
    empty = layout([], [])
    assert empty.width == empty.height == 0 and empty.edges == ()
    lay = layout(["a", "b", "c"], [])
    assert lay.layer.tolist() == [0, 0, 0]
    assert_no_overlaps(lay)
    assert lay.width == pytest.approx(3 * 170 + 2 * 24)


def test_index_and_determinism(synthetic):
    a, b = layout(*synthetic), layout(*synthetic)
    assert np.array_equal(a.x, b.x) and np.array_equal(a.layer, b.layer)
    assert a.index(synthetic[0][10]) == 10
    with pytest.raises(KeyError):
        a.index("nope")


def test_spacing_options_are_honoured():
    lay = layout(
        ["a", "b", "c"],
        [("a", "c"), ("b", "c")],
        node_width=100,
        h_gap=10,
        node_height=20,
        v_gap=30,
    )
    assert abs(lay.x[1] - lay.x[0]) == pytest.approx(110)
    assert lay.y[2] - lay.y[0] == pytest.approx(50)
    assert lay.height == pytest.approx(70)


def test_5k_nodes_are_laid_out_without_overlaps_and_edges_point_down():
    # (how fast: benchmarks/bench_model.py)
    names, edges = _graph_of(synthetic_trace(5000).graphs[0])
    lay = layout(names, edges)
    assert len(lay.x) == 5000
    assert_no_overlaps(lay)
    index = {name: i for i, name in enumerate(names)}
    assert all(lay.layer[index[s]] < lay.layer[index[d]] for s, d in edges)


@pytest.mark.parametrize("path", REAL_TRACES, ids=lambda p: p.name)
def test_real_traces(path):
    for graph in load_trace(path).graphs:
        lay = layout(*_graph_of(graph))
        assert_no_overlaps(lay)
        assert_edges_go_down(lay)  # Inductor's scheduler graphs are acyclic
