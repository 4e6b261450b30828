"""What in a loaded trace does not hold together: a file can parse and build and still
name nodes that are not there, repeat names, loop, or carry impossible numbers.

``graph_problems`` checks one graph's core (what every view reads at once; the
lazily built bulk is checked by its builders when read) and returns one readable
line per kind of problem, with a few examples. The window lists them as notices and
``fusionviz summary`` prints them; nothing is refused for them.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict

from fusionviz.model.trace import CATEGORIES, Graph

EXAMPLES = 3


def graph_problems(graph: Graph) -> list[str]:
    names = [n.name for n in graph.nodes]
    known = set(names)
    out: list[str] = []

    def say(what: str, items: list) -> None:
        if items:
            shown = ", ".join(str(x)[:80] for x in items[:EXAMPLES])
            more = f" (+{len(items) - EXAMPLES} more)" if len(items) > EXAMPLES else ""
            out.append(f"{what}: {shown}{more}")

    say("node names used twice", [n for n, c in Counter(names).items() if c > 1])
    say("edges naming nodes that are not in the graph",
        [f"{e.src} → {e.dst}" for e in graph.edges if e.src not in known or e.dst not in known])
    say("edges from a node to itself", [e.src for e in graph.edges if e.src == e.dst])
    say("edges that form a cycle, through", _on_cycles(graph, known))
    say("kernels computing nodes that are not in the graph",
        [k.name for k in graph.kernels if any(m not in known for m in k.nodes)])
    say("nodes of an unknown category",
        [f"{n.name} ({n.category})" for n in graph.nodes if n.category not in CATEGORIES])
    say("negative sizes", [n.name for n in graph.nodes if isinstance(n.bytes, int) and n.bytes < 0]
        + [k.name for k in graph.kernels if k.bytes is not None and k.bytes < 0])
    say("times that are not finite or are negative",
        [k.name for k in graph.kernels if not _ok_time(k.ms)] + [
            f"graph {f}" for f in ("compiled_ms", "eager_ms", "compiled_wall_ms",
                                   "compiled_device_ms", "eager_wall_ms", "eager_device_ms")
            if graph.timing is not None and not _ok_time(getattr(graph.timing, f))])
    return out


def _ok_time(ms) -> bool:
    return ms is None or (isinstance(ms, int | float) and math.isfinite(ms) and ms >= 0)


def _on_cycles(graph: Graph, known: set[str]) -> list[str]:
    """Nodes left over by a topological sort (Kahn): those on or behind a cycle."""
    indeg: Counter = Counter()
    out_edges: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        if e.src in known and e.dst in known and e.src != e.dst:
            out_edges[e.src].append(e.dst)
            indeg[e.dst] += 1
    ready = [n for n in known if not indeg[n]]
    seen = 0
    while ready:
        n = ready.pop()
        seen += 1
        for m in out_edges[n]:
            indeg[m] -= 1
            if not indeg[m]:
                ready.append(m)
    if seen == len(known):
        return []
    return sorted((n for n in known if indeg[n] > 0), key=_natural)


def _natural(name: str):
    digits = "".join(c for c in name if c.isdigit())
    return (int(digits) if digits else -1, name)
