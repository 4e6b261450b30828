"""The graph seen through its ``nn.Module`` hierarchy: collapsed modules and folded
repeated blocks become one box each, with their edges aggregated.

``ModuleTree`` indexes which pre-fusion nodes each module path holds (a node belongs
to its own module and every ancestor). ``repeated_runs`` finds sibling modules with
the same structure (``h.0`` … ``h.11``). ``module_view`` builds what the graph view
lays out for a given set of collapsed modules and folded runs: the visible nodes
(real nodes and boxes), the edges between them with their counts, and where each
real node went. Pure Python: the graph view, tests and reports share it.
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cached_property

import numpy as np

from fusionviz.model.names import main_ops
from fusionviz.model.trace import Graph

BOX = "▣ "  # view names of boxes start with it; node names never do
NEAR = 0.85  # siblings without a class this close in structure are folded (and flagged)
SAME_SHAPE = 0.6  # ... or with this share of their submodule names in common


@dataclass(frozen=True)
class Run:
    """Consecutive sibling modules of one structure: ``h.1`` … ``h.11``."""

    parent: str  # "h" ("" for children of the root)
    paths: tuple[str, ...]  # in index order
    odd: tuple[tuple[str, str], ...] = ()  # (sibling, how it differs) next to the run

    @property
    def key(self) -> str:
        return BOX + self.title

    @property
    def title(self) -> str:
        first, last = self.paths[0], self.paths[-1].rsplit(".", 1)[-1]
        return f"{first}–{last} ×{len(self.paths)}"


@dataclass(frozen=True)
class Box:
    """One visible item standing for many nodes: a collapsed module or a folded run."""

    key: str  # its view name
    path: str  # the module path (a run: its first module)
    module_class: str
    nodes: tuple[str, ...]  # the pre-fusion nodes inside
    run: Run | None = None
    between: int = 0  # nodes outside the module(s) that sit only between its nodes

    @property
    def title(self) -> str:
        return self.run.title if self.run else self.path


@dataclass
class ModuleView:
    """What the graph view lays out."""

    names: list[str]  # visible nodes: real node names and box keys
    edges: list[tuple[str, str]]  # unique, no self loops
    edge_count: dict[tuple[str, str], int]  # real edges each visible edge stands for
    view_of: dict[str, str]  # real node -> the visible node showing it
    boxes: dict[str, Box] = field(default_factory=dict)


class ModuleTree:
    """Module paths of one graph and the nodes each holds (its own and its children's)."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.nodes = {n.name: n for n in graph.nodes}
        members: dict[str, list[str]] = defaultdict(list)
        self.module_class: dict[str, str] = {}
        self.children: dict[str, list[str]] = defaultdict(list)
        for n in graph.nodes:
            if not n.module:
                continue
            parts = n.module.split(".")
            for k in range(1, len(parts) + 1):
                members[".".join(parts[:k])].append(n.name)
            if n.module_class:
                self.module_class.setdefault(n.module, n.module_class)
        self.members = {p: tuple(v) for p, v in members.items()}
        for p in self.members:
            parent = p.rsplit(".", 1)[0] if "." in p else ""
            self.children[parent].append(p)

    def __bool__(self) -> bool:
        return bool(self.members)

    @staticmethod
    def depth(path: str) -> int:
        return path.count(".") + 1 if path else 0

    def at_depth(self, k: int) -> frozenset[str]:
        """The modules ``k`` levels down (collapsing them shows the model to depth k)."""
        return frozenset(p for p in self.members if self.depth(p) == k)

    @property
    def max_depth(self) -> int:
        return max((self.depth(p) for p in self.members), default=0)

    def outermost(self, module: str, among: frozenset[str]) -> str | None:
        """The outermost of ``module`` and its ancestors that is in ``among``."""
        parts = module.split(".") if module else []
        for k in range(1, len(parts) + 1):
            path = ".".join(parts[:k])
            if path in among:
                return path
        return None

    def count_shown(self, collapsed: frozenset[str], folded: tuple[Run, ...]) -> int:
        """How many items ``module_view`` shows at most (before nodes join boxes): one
        per box, one per node outside every box; cheap, for choosing a first view."""
        among = frozenset(collapsed) | {p for r in folded for p in r.paths}
        run_of = {p: r.key for r in folded for p in r.paths}
        items, boxes = 0, set()
        for module, count in self.module_counts.items():
            path = self.outermost(module, among) if module else None
            if path is None:
                items += count
            else:
                boxes.add(run_of.get(path, path))
        return items + len(boxes)

    @cached_property
    def by_module(self) -> dict[str, list[str]]:
        """Module path -> its own nodes (not its children's), in graph order."""
        out: dict[str, list[str]] = defaultdict(list)
        for n in self.graph.nodes:
            out[n.module].append(n.name)
        return dict(out)

    @cached_property
    def node_names(self) -> list[str]:
        return [n.name for n in self.graph.nodes]

    @cached_property
    def order(self) -> dict[str, int]:
        return {n: k for k, n in enumerate(self.node_names)}

    @cached_property
    def edge_src(self) -> np.ndarray:
        return self._edge_index[0]

    @cached_property
    def edge_dst(self) -> np.ndarray:
        return self._edge_index[1]

    @cached_property
    def _edge_index(self) -> tuple[np.ndarray, np.ndarray]:
        """Node indices of every edge between known nodes (self loops included)."""
        index = {n: k for k, n in enumerate(self.node_names)}
        pairs = [(index[e.src], index[e.dst]) for e in self.graph.edges
                 if e.src in index and e.dst in index]
        arr = np.asarray(pairs, np.int64).reshape(-1, 2)
        return arr[:, 0], arr[:, 1]

    def member_index(self, path: str) -> np.ndarray:
        """Graph-order indices of ``path``'s nodes (its own and its descendants'): a
        slice of the nodes sorted by module path, where a module and its descendants
        are contiguous (``h.1`` < ``h.1.attn`` < ``h.10``, as ``.`` < ``/`` < ``0``)."""
        mods, perm = self._by_path
        lo, hi = bisect_left(mods, path), bisect_left(mods, path + "/")
        return perm[lo:hi]

    @cached_property
    def _by_path(self) -> tuple[list[str], np.ndarray]:
        modules = [n.module for n in self.graph.nodes]
        perm = np.argsort(np.array(modules, dtype=object), kind="stable")
        return [modules[i] for i in perm.tolist()], perm

    @cached_property
    def module_counts(self) -> Counter:
        return Counter(n.module for n in self.graph.nodes)

    @cached_property
    def adjacency(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """(producers, consumers) of every node."""
        producers: dict[str, list[str]] = defaultdict(list)
        consumers: dict[str, list[str]] = defaultdict(list)
        for e in self.graph.edges:
            producers[e.dst].append(e.src)
            consumers[e.src].append(e.dst)
        return producers, consumers

    def submodules(self, path: str) -> frozenset[str]:
        """The module's descendants, relative to it, with their classes where known."""
        n = len(path) + 1
        return frozenset(f"{c[n:]}:{self.module_class.get(c, '')}" for c in self.members
                         if c.startswith(path + "."))

    def signature(self, path: str) -> tuple:
        """The structure of a module: its nodes' inner module paths, kinds and ops."""
        n, nodes = len(path) + 1, self.nodes
        return tuple((nodes[m].module[n:], nodes[m].category, main_ops(nodes[m]))
                     for m in self.members[path])


def repeated_runs(tree: ModuleTree, min_len: int = 2) -> list[Run]:
    """Runs of consecutive numbered siblings (``h.0`` … ``h.11``), longest first.

    Siblings of one class run the same code: they form a run even where the compiler
    partitioned them differently (a block's first norm fused with the previous
    block's residual add is attributed to the parent). Without a class, siblings of
    one structure (or nearly, see ``NEAR``) do. Blocks whose structure differs from
    the run's most common one are listed in ``odd`` with how they differ.
    """
    runs = []
    for parent, kids in tree.children.items():
        numbered = sorted((k for k in kids if k.rsplit(".", 1)[-1].isdigit()),
                          key=lambda k: int(k.rsplit(".", 1)[-1]))
        if len(numbered) < min_len:
            continue
        classes = [tree.module_class.get(k, "") for k in numbered]
        sigs = [tree.signature(k) for k in numbered]
        shapes = [tree.submodules(k) for k in numbered]
        kinds = list(zip(classes, sigs, shapes, strict=True))
        i = 0
        while i < len(numbered):
            j = i + 1
            while j < len(numbered) and _alike(kinds[i], kinds[j]):
                j += 1
            if j - i >= min_len:
                common = Counter(sigs[i:j]).most_common(1)[0][0]
                ref = numbered[i + sigs[i:j].index(common)]
                odd = tuple((numbered[k], _difference(sigs[k], common, ref))
                            for k in range(i, j) if sigs[k] != common)
                runs.append(Run(parent, tuple(numbered[i:j]), odd))
            i = j
    return sorted(runs, key=lambda r: -len(r.paths))


def _alike(a: tuple, b: tuple) -> bool:
    """Two siblings' (class, signature, submodules) say they run the same code."""
    if a[0] and b[0]:
        return a[0] == b[0]
    return a[1] == b[1] or _jaccard(a[2], b[2]) >= SAME_SHAPE or _near(a[1], b[1])


def _jaccard(a: frozenset, b: frozenset) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def _near(sig: tuple, ref: tuple) -> bool:
    """``sig`` is ``ref`` but for a few nodes (at least 85% of both match, in order)."""
    return SequenceMatcher(None, sig, ref, autojunk=False).ratio() >= NEAR


def _difference(sig: tuple, ref: tuple, ref_path: str) -> str:
    """How a block's structure differs from the run's (``2 fewer nodes than h.1;
    first at node 5: ...``); linear, so a hundred blocks cost nothing."""
    more = len(sig) - len(ref)
    count = f"{abs(more)} {'more' if more > 0 else 'fewer'} nodes than {ref_path}" if more \
        else f"as many nodes as {ref_path}"
    k = next((i for i, (a, b) in enumerate(zip(sig, ref)) if a != b), min(len(sig), len(ref)))
    if k < len(sig) and k < len(ref):
        first = f"{_entry(sig[k])} where {ref_path} has {_entry(ref[k])}"
    elif k < len(sig):
        first = f"extra {_entry(sig[k])}"
    else:
        first = f"no {_entry(ref[k])}"
    return f"{count}; first difference at node {k + 1}: {first}"


def _entry(e: tuple) -> str:
    inner, category, ops = e
    return f"{category} {', '.join(ops) or '-'}" + (f" in {inner.lstrip('.')}" if inner else "")


def module_view(graph: Graph, tree: ModuleTree, collapsed: frozenset[str] = frozenset(),
                folded: tuple[Run, ...] = ()) -> ModuleView:
    """The visible graph with ``collapsed`` modules and ``folded`` runs as boxes.

    A folded run wins over collapsed modules inside it; a collapsed module inside a
    collapsed one is hidden in the outer box. A node outside every box whose producers
    and consumers are all in one box joins it (the residual add between two folded
    blocks); the box's ``between`` counts them. Edges between boxes are aggregated,
    edges inside one box dropped.
    """
    if not collapsed and not folded:  # the graph as it is (the common case: fast)
        names = [n.name for n in graph.nodes]
        known = set(names)
        counts = Counter((e.src, e.dst) for e in graph.edges
                         if e.src != e.dst and e.src in known and e.dst in known)
        return ModuleView(names, list(counts), dict(counts), {n: n for n in names})
    run_of: dict[str, Run] = {p: r for r in folded for p in r.paths}
    boxes: dict[str, Box] = {}
    among = frozenset(collapsed) | frozenset(run_of)
    view_of: dict[str, str] = {}
    loose: list[str] = []  # nodes outside every box
    for module, members in tree.by_module.items():  # one lookup per distinct module
        key = _box_for(tree, tree.outermost(module, among), run_of, boxes) if module else None
        if key is None:
            view_of.update(zip(members, members))
            loose += members
        else:
            view_of.update(dict.fromkeys(members, key))
    _absorb_between(graph, tree, view_of, boxes, loose)
    names = list(dict.fromkeys(map(view_of.__getitem__, tree.node_names)))  # graph order
    counts = _edge_counts(tree, view_of, names)
    return ModuleView(names, list(counts), counts, view_of, boxes)


def _edge_counts(tree: ModuleTree, view_of: dict[str, str], names: list[str]) -> dict:
    """(src, dst) visible edge -> how many real edges it stands for (no self loops)."""
    vid = {v: k for k, v in enumerate(names)}
    node_vid = np.fromiter(map(vid.__getitem__, map(view_of.__getitem__, tree.node_names)),
                           np.int64, len(tree.node_names))
    src, dst = node_vid[tree.edge_src], node_vid[tree.edge_dst]
    keep = src != dst
    pairs = src[keep] * len(names) + dst[keep]
    uniq, count = np.unique(pairs, return_counts=True)
    return {(names[p // len(names)], names[p % len(names)]): int(c)
            for p, c in zip(uniq.tolist(), count.tolist(), strict=True)}


def _box_for(tree: ModuleTree, path: str | None, run_of: dict[str, Run],
             boxes: dict[str, Box]) -> str | None:
    """The key of the box showing module ``path`` (made on first use), None for none."""
    if path is None:
        return None
    run = run_of.get(path)
    key = run.key if run is not None else BOX + path
    if key not in boxes:
        if run is not None:
            nodes = tuple(m for p in run.paths for m in tree.members[p])
            boxes[key] = Box(key, run.paths[0], tree.module_class.get(run.paths[0], ""),
                             nodes, run)
        else:
            boxes[key] = Box(key, path, tree.module_class.get(path, ""), tree.members[path])
    return key


def _absorb_between(graph: Graph, tree: ModuleTree, view_of: dict[str, str],
                    boxes: dict[str, Box], loose: list[str]) -> None:
    """Move into a box the visible nodes that sit between its nodes (a producer and a
    consumer in the box, no neighbour in another box), and the ends that only the box
    feeds or that only feed it (repeated, so chains of such nodes follow: a residual
    add, then the next block's norm)."""
    if not boxes:
        return
    producers, consumers = tree.adjacency
    joined: dict[str, list[str]] = defaultdict(list)
    # candidates: visible nodes next to a box; a node that joins one makes its
    # neighbours candidates again (a chain of them follows)
    order = tree.order  # graph order: deterministic
    todo = [order[name] for name in loose
            if any(view_of.get(m) in boxes for m in (*producers[name], *consumers[name]))]
    heapq.heapify(todo)
    while todo:
        name = graph.nodes[heapq.heappop(todo)].name
        if view_of.get(name) != name:
            continue
        ins = {view_of.get(m) for m in producers[name]}
        outs = {view_of.get(m) for m in consumers[name]}
        # between the box's nodes, or an end computed from the box alone (a value
        # saved for backward), or a start feeding only the box
        shared = (ins & outs if ins and outs else ins or outs) & boxes.keys()
        if len(shared) == 1 and not ((ins | outs) & boxes.keys()) - shared \
                and (ins and outs or (ins | outs) == shared):
            (box,) = shared
            view_of[name] = box
            joined[box].append(name)
            for m in (*producers[name], *consumers[name]):
                if view_of.get(m) == m:
                    heapq.heappush(todo, order[m])
    for key, extra in joined.items():
        b = boxes[key]
        boxes[key] = Box(b.key, b.path, b.module_class, b.nodes + tuple(extra), b.run,
                         between=len(extra))


@dataclass(frozen=True)
class RunDecisions:
    """The fusion decisions inside the blocks of a run, matched block to block."""

    blocks: int
    same: int  # decisions taken the same way in every block
    differ: tuple[tuple[str, dict[str, tuple[str, ...]]], ...]  # (pair in the first
    # block, outcome -> blocks), for decisions that differ between blocks


def run_decisions(graph: Graph, tree: ModuleTree, run: Run) -> RunDecisions:
    """Each candidate pair lying inside one block of ``run``, keyed by the positions of
    its nodes within that block (the same pair in every block has the same key), with
    the last outcome it got in each block."""
    # A node's key in its block: what it is (inner module, kind, ops) and which of the
    # block's nodes like it it is, so a block missing a node elsewhere still matches.
    local: dict[str, tuple[str, tuple]] = {}
    for path in run.paths:
        seen: Counter = Counter()
        for m, entry in zip(tree.members[path], tree.signature(path), strict=True):
            seen[entry] += 1
            local[m] = (path, (entry, seen[entry]))
    outcomes: dict[tuple, dict[str, str]] = defaultdict(dict)
    for r in graph.rounds:
        for c in r.candidates:
            where = {local[m][0] for m in (*c.a, *c.b) if m in local}
            if len(where) != 1 or not all(m in local for m in (*c.a, *c.b)):
                continue
            key = (tuple(sorted(local[m][1] for m in c.a)), tuple(sorted(local[m][1] for m in c.b)))
            outcomes[frozenset(key)][where.pop()] = c.outcome
    name_of: dict[tuple, str] = {}  # a key's node in the first block that has it
    for m, (_path, key) in local.items():
        name_of.setdefault(key, m)
    same, differ = 0, []
    for key, by_block in outcomes.items():
        seen = {by_block.get(p, "not a candidate") for p in run.paths}
        if len(seen) == 1:
            same += 1
            continue
        groups = sorted(key, key=lambda g: g)
        pair = " + ".join("+".join(name_of[k] for k in g) for g in groups)
        split: dict[str, list[str]] = defaultdict(list)
        for p in run.paths:
            split[by_block.get(p, "not a candidate")].append(p)
        differ.append((pair, {o: tuple(ps) for o, ps in split.items()}))
    return RunDecisions(len(run.paths), same, tuple(differ))
