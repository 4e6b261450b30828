"""Which modules the graph view shows collapsed or folded, and the view that makes.

One ``Folding`` per graph view. It keeps the user's choices for the graph shown
(collapsed module paths, folded runs of repeated blocks, modules opened from a box),
builds the ``ModuleView`` the view lays out, and maps what the rest of the app names
by pre-fusion node (selection, fusion steps) onto the visible nodes.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from fusionviz.model.module_view import (
    Box,
    ModuleTree,
    ModuleView,
    Run,
    RunDecisions,
    module_view,
    repeated_runs,
    run_decisions,
)
from fusionviz.model.palette import NO_KERNEL_COLOR
from fusionviz.model.queries import kernel_of_node
from fusionviz.model.report.formatting import plural
from fusionviz.model.trace import Graph

FIRST_VIEW = 60  # a bigger graph opens folded and collapsed to show about this many items
HUB_FANOUT = 8  # a node feeding more visible nodes is drawn with stubs, not edges
VIEWS_KEPT = 8  # visible graphs kept per graph (each holds a dict over all nodes)
GRAPHS_KEPT = 4  # graphs whose module tree, runs and visible graphs are kept


class Folding:
    def __init__(self) -> None:
        self._group_of: tuple = (None, {})  # a step's groups and each node's group id
        self._inside: dict[str, tuple[int, int]] = {}  # per box at the step of _group_of
        self._final: tuple = (None, None, {})  # final groups, view, their fused_inside
        # id(graph) -> (graph, its module tree, its runs, its views): the last few graphs
        self._graphs: dict[int, tuple] = {}
        self.set_graph(None)

    # ---- state ----------------------------------------------------------------------
    def set_graph(self, graph: Graph | None) -> None:
        """A new graph: its module tree, its repeated blocks, the default folding."""
        self.graph = graph
        kept = self.prepare(graph)  # a graph shown (or prepared) before: as built then
        self.tree = kept[1]
        self.runs: list[Run] = kept[2]
        self.collapsed: frozenset[str] = frozenset()
        self.opened: frozenset[str] = frozenset()  # modules opened from a box: framed
        self.folded: tuple[Run, ...] = ()
        self.focus: tuple[tuple[str, ...], int] | None = None  # (nodes, hops) shown alone
        self._decisions: dict[str, RunDecisions] = {}
        self._box_colors: dict[str, tuple] = {}  # box key -> (its node count, its colors)
        self._box_index: dict[str, np.ndarray] = {}
        self._colors_of = None
        self._node_kernel: np.ndarray | None = None
        self._views: dict[tuple, ModuleView] = kept[3]  # per folding, oldest first
        if graph is not None and len(graph.nodes) > FIRST_VIEW:
            self._first_view()
        self._rebuild()

    def prepare(self, graph: Graph | None) -> tuple:
        """``graph``'s module tree and repeated runs, built once (ahead of a switch to
        it, on the idle path); with the visible graphs shown of it."""
        kept = self._graphs.get(id(graph))
        if kept is None or kept[0] is not graph:
            tree = ModuleTree(graph) if graph is not None else None
            kept = (graph, tree, repeated_runs(tree) if tree else [], {})
            if graph is not None:
                self._graphs[id(graph)] = kept
                while len(self._graphs) > GRAPHS_KEPT:
                    self._graphs.pop(next(iter(self._graphs)))
        return kept

    def forget(self) -> None:
        """A new trace: the graphs kept of the last one go."""
        self._graphs.clear()

    def _first_view(self) -> None:
        """Repeated blocks folded, and modules collapsed at the deepest depth that
        leaves at most FIRST_VIEW items (the shallowest when none does)."""
        self.folded = tuple(self.runs)
        self.collapsed = frozenset()
        tree = self.tree
        if tree.count_shown(self.collapsed, self.folded) <= FIRST_VIEW or (
                self.folded and len(module_view(self.graph, tree, self.collapsed,
                                                self.folded).names) <= FIRST_VIEW):
            return  # folding alone is enough (nodes between the blocks join them)
        # a module holding a folded run stays open: the ×N box says more than its box
        holders = {p.rsplit(".", 1)[0] for r in self.folded for p in r.paths}
        holders |= {h.rsplit(".", k)[0] for h in list(holders) for k in range(h.count(".") + 1)}
        for depth in range(tree.max_depth, 0, -1):
            self.collapsed = tree.at_depth(depth) - holders
            if tree.count_shown(self.collapsed, self.folded) <= FIRST_VIEW:
                return
        if not self.tree:
            self.collapsed = frozenset()

    def snapshot(self) -> tuple:
        """What the user folded, opened and focused, to give back with ``restore``."""
        return (self.collapsed, self.opened, tuple(r.key for r in self.folded), self.focus)

    def restore(self, snapshot: tuple) -> None:
        """Fold as ``snapshot`` says (runs by key: the graph may be a new object)."""
        collapsed, opened, folded, focus = snapshot
        self.collapsed, self.opened, self.focus = collapsed, opened, focus
        self.folded = tuple(r for r in self.runs if r.key in folded)
        self._rebuild()

    @property
    def key(self) -> tuple:
        """What the layout depends on (a layout is cached per graph and key)."""
        return (self.collapsed, tuple(r.key for r in self.folded), self.focus)

    def set_focus(self, nodes, hops: int = 2) -> bool:
        """Show only ``nodes`` and what lies within ``hops`` edges of them (None: all)."""
        focus = (tuple(nodes), hops) if nodes else None
        if focus == self.focus:
            return False
        self.focus = focus
        self._rebuild()
        return True

    def reveal(self, path: str) -> bool:
        """Open the folded runs and collapsed modules that hide module ``path``, so it
        shows as its own box."""
        if not self.tree or path not in self.tree.members:
            return False
        hidden_by = [r for r in self.folded if any(path == p or path.startswith(p + ".")
                                                   for p in r.paths)]
        outer = {c for c in self.collapsed if path.startswith(c + ".")}
        if not hidden_by and not outer:
            return False
        self.folded = tuple(r for r in self.folded if r not in hidden_by)
        # every collapsed ancestor opens into its children, down to the module's level
        collapsed = set(self.collapsed) - outer
        parts = path.split(".")
        for k in range(1, len(parts)):
            ancestor = ".".join(parts[:k])
            collapsed |= {c for c in self.tree.children.get(ancestor, ())
                          if not path.startswith(c + ".") and c != path}
        collapsed |= {r for run in hidden_by for r in run.paths
                      if not path.startswith(r + ".") and r != path}
        # the module itself shows as one box (open it from there)
        collapsed = {c for c in collapsed if not c.startswith(path + ".")} | {path}
        self.collapsed = frozenset(collapsed)
        self.opened = self.opened | {".".join(parts[:k]) for k in range(1, len(parts))}
        self._rebuild()
        return True

    def collapse_to_depth(self, depth: int) -> bool:
        """Every module ``depth`` levels down collapsed (0: everything expanded)."""
        if not self.tree:
            return False
        self.collapsed = self.tree.at_depth(depth) if depth > 0 else frozenset()
        self.folded, self.opened = (), frozenset()
        self._rebuild()
        return True

    def expand_all(self) -> bool:
        self.collapsed, self.folded, self.opened = frozenset(), (), frozenset()
        self._rebuild()
        return True

    def fold_repeated(self) -> bool:
        """Fold every run of repeated blocks (other collapsed modules stay)."""
        if not self.runs:
            return False
        self.folded = tuple(self.runs)
        self._rebuild()
        return True

    def expand(self, key: str) -> bool:
        """Open box ``key``: a folded run becomes its blocks, each collapsed; a module
        its children, collapsed where it has any."""
        box = self.view.boxes.get(key) if self.view else None
        if box is None:
            return False
        if box.run is not None:
            self.folded = tuple(r for r in self.folded if r is not box.run)
            self.collapsed = self.collapsed | frozenset(box.run.paths)
        else:
            kids = frozenset(self.tree.children.get(box.path, ()))
            self.collapsed = (self.collapsed - {box.path}) | kids
            self.opened = self.opened | {box.path}
        self._rebuild()
        return True

    def collapse(self, path: str) -> bool:
        """Module ``path`` as one box (modules inside it were collapsed: now hidden)."""
        if not self.tree or path not in self.tree.members:
            return False
        self.collapsed = frozenset(c for c in self.collapsed
                                   if not c.startswith(path + ".")) | {path}
        self.opened = frozenset(p for p in self.opened if p != path
                                and not p.startswith(path + "."))
        self._rebuild()
        return True

    def collapse_around(self, node: str) -> str | None:
        """Collapse the innermost module around ``node`` that is not collapsed yet (the
        next one out when its own already is); returns its path."""
        n = self.tree.nodes.get(node) if self.tree else None
        if n is None or not n.module:
            return None
        parts = n.module.split(".")
        paths = [".".join(parts[:k]) for k in range(len(parts), 0, -1)]
        shown = self.view.view_of.get(node, node) if self.view else node
        box = self.view.boxes.get(shown) if self.view else None
        for path in paths:
            if box is not None and (path == box.path or not box.path.startswith(path + ".")):
                continue  # inside what is collapsed already: go further out
            self.collapsed = (self.collapsed - {p for p in self.collapsed
                                                if p.startswith(path + ".")}) | {path}
            self.opened = frozenset(p for p in self.opened if not p.startswith(path))
            self._rebuild()
            return path
        return None

    def _rebuild(self) -> None:
        if self.graph is None or self.tree is None:
            self.view, self.hubs = None, {}
            return
        key = (self.collapsed, tuple(r.key for r in self.folded))
        view = self._views.get(key)
        if view is None:  # going back to a folding shown before costs nothing
            view = self._views[key] = module_view(self.graph, self.tree, self.collapsed,
                                                  self.folded)
            while len(self._views) > VIEWS_KEPT:
                self._views.pop(next(iter(self._views)))
        self.view = view
        if self.focus is not None:
            self.view = _focused(self.view, *self.focus)
        self.hubs = _hubs(self.view)

    # ---- what the view draws ------------------------------------------------------
    def layout_edges(self) -> list[tuple[str, str]]:
        """Edges to lay out: all but those of hubs (drawn as stubs)."""
        return _layout_edges(self.view, self.hubs)

    def expanded(self) -> tuple[tuple, ModuleView, list[tuple[str, str]]]:
        """What Expand All shows (its ``key``, visible graph and edges to lay out), built
        ahead of it on the idle path (the visible graph is kept as one shown)."""
        shown = (frozenset(), ())
        view = self._views.get(shown)
        if view is None:
            view = self._views[shown] = module_view(self.graph, self.tree, *shown)
            while len(self._views) > VIEWS_KEPT:
                self._views.pop(next(iter(self._views)))
        if self.focus is not None:
            view = _focused(view, *self.focus)
        return (*shown, self.focus), view, _layout_edges(view, _hubs(view))

    def box_colors(self, colors: dict[str, str]) -> dict[str, list[str]]:
        """Each box's kernel colors, most members first."""
        out = {}
        for key, box in self.view.boxes.items():
            hit = self._box_colors.get(key)
            if hit is None or hit[0] != len(box.nodes):  # a box key holds the same nodes
                palette, node_color = self._node_colors(colors)
                counts = np.bincount(node_color[self._indices(box)], minlength=len(palette))
                order = np.argsort(-counts, kind="stable")
                hit = self._box_colors[key] = (
                    len(box.nodes), [palette[c] for c in order.tolist() if counts[c]]
                    or [NO_KERNEL_COLOR])
            out[key] = hit[1]
        return out

    def kernel_count(self, box: Box) -> int:
        """How many final kernels compute the box's nodes."""
        if self._node_kernel is None:
            kernel_of = kernel_of_node(self.graph)
            ids = {k.name: i for i, k in enumerate(self.graph.kernels)}
            self._node_kernel = np.fromiter(
                (ids[kernel_of[n].name] if n in kernel_of else -1 for n in self.tree.node_names),
                np.int64, len(self.tree.node_names))
        found = self._node_kernel[self._indices(box)]
        return len(np.unique(found[found >= 0]))

    def _node_colors(self, colors: dict[str, str]) -> tuple[list[str], np.ndarray]:
        """The graph's kernel colors and each node's index into them (once per graph)."""
        if self._colors_of is None:
            kernel_of = kernel_of_node(self.graph)
            palette = [NO_KERNEL_COLOR, *dict.fromkeys(colors.values())]
            slot = {c: k for k, c in enumerate(palette)}
            node_color = np.fromiter(
                (slot.get(colors.get(kernel_of[n].name, NO_KERNEL_COLOR), 0)
                 if n in kernel_of else 0 for n in self.tree.node_names),
                np.int64, len(self.tree.node_names))
            self._colors_of = (palette, node_color)
        return self._colors_of

    def _indices(self, box: Box) -> np.ndarray:
        """The graph-order indices of a box's nodes (cached per box key and size)."""
        hit = self._box_index.get(box.key)
        if hit is None or len(hit) != len(box.nodes):
            if box.between:  # nodes joined from outside its module(s): list them all
                order = self.tree.order
                hit = np.fromiter(map(order.__getitem__, box.nodes), np.int64, len(box.nodes))
            else:
                paths = box.run.paths if box.run else (box.path,)
                hit = np.concatenate([self.tree.member_index(p) for p in paths])
            self._box_index[box.key] = hit
        return hit

    def shown(self, names) -> list[str]:
        """Visible nodes standing for ``names`` (pre-fusion nodes), in order, once each."""
        if self.view is None or not self.view.boxes:
            return list(names)
        view_of = self.view.view_of
        return list(dict.fromkeys(view_of.get(n, n) for n in names))

    def map_step(self, groups, changed) -> tuple[list[tuple[str, ...]], list[str]]:
        """A fusion step's groups and changed nodes in visible nodes. A box holds many
        groups, so it joins none: a group reaching into a box is drawn around its
        members outside (the box shows its kernels' colors); a box changed when
        anything inside it did."""
        if self.view is None or not self.view.boxes:
            return groups, changed
        view_of, boxes = self.view.view_of, self.view.boxes
        mapped = []
        for g in groups:
            if len(g) < 2:  # a lone node draws no region
                continue
            shown = [view_of.get(m, m) for m in g]
            if shown[0] in boxes and shown.count(shown[0]) == len(shown):
                continue  # a group inside one box: the box shows it
            mapped.append(tuple(dict.fromkeys(v for v in shown if v not in boxes)))
        return mapped, list(dict.fromkeys(view_of.get(m, m) for m in changed))

    def fused_inside(self, groups) -> dict[str, tuple[int, int]]:
        """Per box at a step: (its pre-fusion nodes, the groups they are in now)."""
        if self.view is None or not self.view.boxes:
            return {}
        if self._group_of[0] is not groups:  # a step's groups: reused across folds
            gid = np.arange(len(self.tree.node_names))  # a node alone: its own group
            order = self.tree.order
            for k, g in enumerate(groups):
                if len(g) > 1:
                    gid[[order[m] for m in g if m in order]] = len(gid) + k
            self._group_of, self._inside = (groups, gid), {}
        gid, out = self._group_of[1], {}
        for key, box in self.view.boxes.items():
            hit = self._inside.get(key)
            if hit is None or hit[0] != len(box.nodes):  # a box key holds the same nodes
                hit = self._inside[key] = (
                    len(box.nodes), len(np.unique(gid[self._indices(box)])))
            out[key] = hit
        return out

    def box_notes(self, groups, final_groups) -> dict[str, str]:
        """Per box, what fused inside it at a step: ``28→21 nodes, 14 kernels``; with
        none fused, ``none fused yet`` only where a later step fuses some of it."""
        if self._final[0] is not final_groups or self._final[1] is not self.view:
            self._final = (final_groups, self.view, self.fused_inside(final_groups))
        final = self._final[2]
        notes = {}
        for key, (n, now) in self.fused_inside(groups).items():
            kernels = self.kernel_count(self.view.boxes[key])
            notes[key] = (f"{n}→{now} nodes, {plural(kernels, 'kernel')}" if now < n
                          else f"{n} nodes, none fused yet" if final[key][1] < n
                          else f"{plural(n, 'node')}, {plural(kernels, 'kernel')}")
        return notes

    def frames(self) -> list[tuple[str, list[str]]]:
        """Opened modules and the visible nodes inside each (for titled frames)."""
        if self.view is None or not self.opened:
            return []
        members = defaultdict(list)
        for path in sorted(self.opened):
            for m in self.tree.members.get(path, ()):
                members[path].append(self.view.view_of.get(m, m))
        return [(p, list(dict.fromkeys(v))) for p, v in members.items() if v]

    def box(self, name: str) -> Box | None:
        return self.view.boxes.get(name) if self.view else None

    def decisions(self, box: Box) -> RunDecisions | None:
        """How a folded run's blocks were fused, block against block (cached)."""
        if box.run is None:
            return None
        if box.run.key not in self._decisions:
            self._decisions[box.run.key] = run_decisions(self.graph, self.tree, box.run)
        return self._decisions[box.run.key]


def _layout_edges(view: ModuleView, hubs: dict) -> list[tuple[str, str]]:
    return [(a, b) for a, b in view.edges if a not in hubs] if hubs else view.edges


def _hubs(view: ModuleView) -> dict[str, tuple[str, ...]]:
    """Real nodes feeding more than HUB_FANOUT visible nodes (seeds, masks); a box's
    many consumers are its outputs, drawn as edges."""
    fanout = Counter(a for a, _ in view.edges)
    hubs = {a for a, n in fanout.items() if n > HUB_FANOUT and a not in view.boxes}
    if not hubs:
        return {}
    consumers = defaultdict(list)
    for a, b in view.edges:
        if a in hubs:
            consumers[a].append(b)
    return {a: tuple(bs) for a, bs in consumers.items()}


def _focused(view: ModuleView, nodes: tuple[str, ...], hops: int) -> ModuleView:
    """``view`` cut down to the visible nodes of ``nodes`` and their ``hops``-edge
    neighbourhood (either direction)."""
    around = defaultdict(set)
    for a, b in view.edges:
        around[a].add(b)
        around[b].add(a)
    keep = {view.view_of.get(n, n) for n in nodes}
    frontier = set(keep)
    for _ in range(hops):
        frontier = {m for n in frontier for m in around[n]} - keep
        keep |= frontier
    edges = [(a, b) for a, b in view.edges if a in keep and b in keep]
    return ModuleView([n for n in view.names if n in keep], edges,
                      {e: view.edge_count[e] for e in edges}, view.view_of,
                      {k: b for k, b in view.boxes.items() if k in keep})
