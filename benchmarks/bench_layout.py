"""Time fusionviz's layered layout on synthetic scheduler graphs and count crossings.

Run: ``python benchmarks/bench_layout.py [--sizes 1000 5000 20000] [--repeats 3]``.
Prints one row per (graph, method): median wall time of ``--repeats`` runs and edge
crossings between adjacent layers. "wide" graphs have ~sqrt(n)/3 parallel chains,
"deep" ones 5 (the shape of real models); a networkx multipartite layout over
topological generations is timed on the same graphs when networkx is installed.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import time

import numpy as np

from fusionviz.model.layout.sugiyama import Layout, count_crossings, layout
from fusionviz.model.synthetic import synthetic_trace


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 5000, 20000])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    print(
        f"{'graph':<12} {'nodes':>6} {'edges':>6} {'method':<26} {'time s':>8} {'crossings':>10}"
    )
    for n in args.sizes:
        for shape, chains in (("wide", None), ("deep", 5)):
            graph = synthetic_trace(n, chains=chains).graphs[0]
            names = [node.name for node in graph.nodes]
            edges = [(e.src, e.dst) for e in graph.edges]
            _bench_graph(shape, names, edges, args.repeats)


def _bench_graph(shape, names, edges, repeats) -> None:
    for sweeps in (4, 1):
        run = functools.partial(layout, names, edges, sweeps=sweeps)
        seconds, lay = _timed(run, repeats)
        _row(
            shape, names, edges, f"fusionviz sweeps={sweeps}", seconds, count_crossings(lay)
        )
    nx_row = _networkx(names, edges, repeats)
    if nx_row is not None:
        _row(shape, names, edges, "networkx multipartite", *nx_row)


def _row(shape, names, edges, method, seconds, crossings) -> None:
    print(
        f"{shape:<12} {len(names):>6} {len(edges):>6} {method:<26} {seconds:>8.3f} {crossings:>10}"
    )


def _timed(run, repeats: int):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def _networkx(names, edges, repeats: int):
    """(median seconds, crossings) of networkx's multipartite layout, or None."""
    try:
        import networkx as nx
    except ImportError:
        return None

    def run():
        g = nx.DiGraph()
        g.add_nodes_from(names)
        g.add_edges_from(edges)
        for depth, generation in enumerate(nx.topological_generations(g)):
            for node in generation:
                g.nodes[node]["layer"] = depth
        return g, nx.multipartite_layout(g, subset_key="layer", align="horizontal")

    seconds, (g, pos) = _timed(run, repeats)
    return seconds, count_crossings(_as_layout(names, edges, g, pos))


def _as_layout(names, edges, g, pos) -> Layout:
    """networkx positions as a Layout whose edges are straight lines cut at each layer."""
    layer = np.array([g.nodes[n]["layer"] for n in names])
    xs = np.array([pos[n][0] for n in names])
    x = (xs - xs.min()) * 1e4  # only the left-to-right order matters for crossings
    pitch = 100.0
    y = layer * pitch + 22.0
    index = {n: i for i, n in enumerate(names)}
    pairs = [(index[a], index[b]) for a, b in edges]
    paths = []
    for s, d in pairs:
        ys = np.concatenate(
            [[y[s] + 22], np.arange(layer[s] + 1, layer[d]) * pitch + 22, [y[d] - 22]]
        )
        t = (ys - ys[0]) / (ys[-1] - ys[0])
        paths.append(np.column_stack([x[s] + t * (x[d] - x[s]), ys]))
    return Layout(
        names=tuple(names),
        x=x,
        y=y,
        layer=layer,
        edges=tuple(pairs),
        edge_paths=tuple(paths),
        width=float(x.max()),
        height=float(y.max()),
        pitch=pitch,
    )


if __name__ == "__main__":
    main()
