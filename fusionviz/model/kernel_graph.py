"""A graph collapsed to its final kernels: one node per fused group, edges between them.

For a big graph the pre-fusion view shows thousands of nodes; the kernel graph shows
what runs: one node per final group, named after its kernel, with the category, ops
and bytes of its members and the edges between groups. It is an ordinary ``Graph``
(no fusion rounds: it is the end state), so every view of a graph can show it.
"""

from __future__ import annotations

from dataclasses import replace

from fusionviz.model.queries import kernel_of_node
from fusionviz.model.trace import Edge, Graph, Node

# A group is shown as its most telling member category.
_CATEGORY_ORDER = ("template", "collective", "extern", "foreach", "reduction", "pointwise", "other", "nop")
MAX_OPS = 6


def kernel_graph(graph: Graph) -> Graph:
    """``graph`` with each final group as one node (named after its kernel)."""
    groups = graph.final_groups or (graph.rounds[-1].groups_after if graph.rounds else ())
    nodes = {n.name: n for n in graph.nodes}
    grouped = {name for g in groups for name in g}
    groups = tuple(groups) + tuple((n.name,) for n in graph.nodes if n.name not in grouped)
    kernel_of = kernel_of_node(graph)
    names: list[str] = []
    taken: set[str] = set()
    owner: dict[str, str] = {}
    new_nodes = []
    for members in groups:
        present = [nodes[m] for m in members if m in nodes]
        if not present:
            continue
        kernel = kernel_of.get(present[0].name)
        name = _unique(kernel.name if kernel is not None else present[0].name, taken)
        names.append(name)
        taken.add(name)
        for m in members:
            owner[m] = name
        new_nodes.append(_group_node(name, present, kernel))
    edges: dict[tuple[str, str], int] = {}
    for e in graph.edges:
        a, b = owner.get(e.src), owner.get(e.dst)
        if a is not None and b is not None and a != b:
            edges[a, b] = edges.get((a, b), 0) + e.bytes
    kernels = tuple(replace(k, nodes=tuple(dict.fromkeys(owner[n] for n in k.nodes
                                                         if n in owner)),
                            groups=())
                    for k in graph.kernels)
    launching = sum(1 for members in groups if members and members[0] in kernel_of)
    note = (f"kernels only: {len(new_nodes)} final groups of {len(graph.nodes)} nodes; "
            f"{launching} launch one of its {len(graph.kernels)} kernels (the same kernel "
            f"serves groups of the same code), {len(new_nodes) - launching} launch none "
            "(views, reinterprets and no-ops) "
            "(View → Kernels Only, Ctrl+K, shows the pre-fusion nodes and the rounds)")
    return replace(graph, nodes=tuple(new_nodes),
                   edges=tuple(Edge(a, b, "", size) for (a, b), size in edges.items()),
                   rounds=(), final_groups=tuple((n,) for n in names), kernels=kernels,
                   fusion_s=0.0, warnings=(note, *graph.warnings))


def _group_node(name: str, members: list[Node], kernel) -> Node:
    category = min((m.category for m in members),
                   key=lambda c: _CATEGORY_ORDER.index(c) if c in _CATEGORY_ORDER else 99)
    ops = tuple(dict.fromkeys(op for m in members for op in m.ops))[:MAX_OPS]
    first = members[0]
    module = _common_module(members)
    return Node(
        name=name,
        type=f"{len(members)} nodes" if len(members) > 1 else first.type,
        category=category,
        numel=first.numel,
        rnumel=first.rnumel,
        ops=ops,
        bytes=kernel.bytes if kernel is not None and kernel.bytes else sum(m.bytes for m in members),
        extern_kernel=first.extern_kernel if len(members) == 1 else "",
        members=tuple(m.name for m in members),
        module=module,
        module_class=next((m.module_class for m in members if m.module == module), ""),
    )


def _common_module(members: list[Node]) -> str:
    """The deepest module holding every member (a kernel fused across blocks: their
    parent), so kernels fold into repeated blocks as their nodes do."""
    paths = [m.module.split(".") for m in members if m.module]
    if len(paths) < len(members) or not paths:
        return ""
    common = []
    for parts in zip(*paths):
        if len(set(parts)) > 1:
            break
        common.append(parts[0])
    return ".".join(common)


def _unique(name: str, taken: set[str]) -> str:
    if name not in taken:
        return name
    k = 2
    while f"{name}#{k}" in taken:
        k += 1
    return f"{name}#{k}"
