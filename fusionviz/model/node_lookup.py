"""Find the nodes a user names on the command line: by Inductor's name (``op3``), a
buffer the node writes (``buf3``), or its readable name (``op3 · add · mlp.fc``, as
the window and ``fusionviz query`` show it), in one graph or across a trace's graphs.

A name that fits nothing raises ``NodeLookupError`` with close names to suggest; two
names that fit more than one graph raise it saying to choose one with ``--graph``.
"""

from __future__ import annotations

import difflib

from fusionviz.model.names import SEP, Names
from fusionviz.model.trace import Graph, Trace


class NodeLookupError(ValueError):
    """A name fits no node, or fits nodes of several graphs; ``suggestions`` lists
    close names (possibly none)."""

    def __init__(self, message: str, suggestions: list[str] | None = None) -> None:
        super().__init__(message)
        self.suggestions = suggestions or []


def find_node(graph: Graph, text: str, names: Names | None = None) -> str | None:
    """The pre-fusion node of ``graph`` that ``text`` names, or None."""
    text = " ".join(text.split())
    names = names or Names(graph)
    if text in names.nodes:
        return text
    raw = text.split(SEP.strip(), 1)[0].strip()  # a readable name starts with the raw one
    if raw != text and raw in names.nodes:
        return raw
    for node in graph.nodes:  # a buffer it writes (only when no node has that name)
        if any(w.buffer == text for w in node.writes):
            return node.name
    return None


def find_pair(trace: Trace, a: str, b: str, graph: int | None = None) -> tuple[Graph, str, str]:
    """The graph holding nodes named ``a`` and ``b``, and their node names; ``graph``
    (a graph index) narrows the search to that graph."""
    graphs = list(trace.graphs)
    if graph is not None:
        graphs = [g for g in graphs if g.index == graph]
        if not graphs:
            known = ", ".join(str(g.index) for g in trace.graphs) or "none"
            raise NodeLookupError(f"no graph {graph} in the trace (graphs: {known})")
    if not graphs:
        raise NodeLookupError("the trace recorded no compiled graphs")
    found = []
    for g in graphs:
        names = Names(g)
        found.append((g, find_node(g, a, names), find_node(g, b, names)))
    both = [(g, x, y) for g, x, y in found if x and y]
    if len(both) == 1:
        return both[0]
    if both:
        where = ", ".join(f"{g.index} ({g.kind})" for g, _, _ in both)
        raise NodeLookupError(f"{a} and {b} are in graphs {where}: choose one with --graph N")
    for text, side in ((a, 1), (b, 2)):
        if not any(hit[side] for hit in found):
            where = f"graph {graph}" if graph is not None else "any graph"
            raise NodeLookupError(f"no node {text!r} in {where}",
                                  _close_names(text, [g for g, _, _ in found]))
    in_a = ", ".join(str(g.index) for g, x, _ in found if x)
    in_b = ", ".join(str(g.index) for g, _, y in found if y)
    raise NodeLookupError(f"{a} is in graph {in_a} and {b} in graph {in_b}: nodes of "
                          "different graphs are never fused together")


def _close_names(text: str, graphs: list[Graph], n: int = 5) -> list[str]:
    """Raw and readable names close to ``text`` (raw names first, no repeats)."""
    raw = list(dict.fromkeys(node.name for g in graphs for node in g.nodes))
    close = difflib.get_close_matches(text, raw, n=n, cutoff=0.6)
    if len(close) < n:
        labels = list(dict.fromkeys(Names(g).label(node.name) for g in graphs
                                    for node in g.nodes))
        close += [m for m in difflib.get_close_matches(text, labels, n=n, cutoff=0.5)
                  if m.split(SEP, 1)[0] not in close][: n - len(close)]
    return close
