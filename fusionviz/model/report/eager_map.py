"""Each eager kernel mapped to what replaced it, module by module.

The eager side: the kernels of the user's program run eagerly (``Entry.kernels``),
each attributed to the module that ran it. The compiled side: the kernels of the
graphs the entry compiled, each attributed to the modules of the FX ops its nodes were
lowered from; a fused kernel spanning several modules has its time split over them by
op count (a residual add fused into the next block's norm counts in both). Views and
reshapes are not counted as work, and an extern call counts only its own op. Both sides are
then summed up the module tree, so ``h.3`` holds everything under it.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache

from fusionviz.model.lazy import PerObject
from fusionviz.model.names import extern_op
from fusionviz.model.trace import EagerKernel, Entry, Graph, Kernel, Trace

ROOT = ""


@dataclass
class CompiledShare:
    """A compiled kernel's share in one module: ``ms`` of its time there."""

    graph: int
    kernel: Kernel
    ms: float
    ops: tuple[str, ...] = ()


@dataclass
class ModuleTimes:
    """One module, both sides summed over it and everything under it."""

    path: str
    module_class: str = ""
    eager_ms: float = 0.0
    compiled_ms: float = 0.0
    eager: list[EagerKernel] = field(default_factory=list)  # its own, not its children's
    compiled: list[CompiledShare] = field(default_factory=list)
    children: list[str] = field(default_factory=list)

    @property
    def delta_ms(self) -> float:
        """Compiled minus eager: > 0 is time lost under compile."""
        return self.compiled_ms - self.eager_ms

    @property
    def own_eager_ms(self) -> float:
        """Eager time of the module's own kernels (its children's left out)."""
        return sum(k.ms for k in self.eager)

    @property
    def own_compiled_ms(self) -> float:
        return sum(s.ms for s in self.compiled)

    @property
    def own_delta_ms(self) -> float:
        return self.own_compiled_ms - self.own_eager_ms

    @property
    def speedup(self) -> float | None:
        return self.eager_ms / self.compiled_ms if self.compiled_ms > 0 else None

    def moved(self, floor_ms: float = 0.0) -> int:
        """1: lost time under compile, -1: won time, 0: neither (a change of at most 5%
        of the larger side, or of at most ``floor_ms``)."""
        d = self.delta_ms
        if abs(d) <= 0.05 * max(self.eager_ms, self.compiled_ms, 1e-9) or abs(d) <= floor_ms:
            return 0
        return 1 if d > 0 else -1


def entry_graphs(trace: Trace, entry: Entry) -> list[Graph]:
    """The graphs the entry's frames compiled (forward and backward)."""
    ids = set(entry.compile_ids)
    return [g for g in trace.graphs if g.compile_id in ids]


def _side(graph: Graph) -> str:
    return "backward" if graph.kind == "backward" else "forward"


def _parents(path: str):
    """``h.3.attn`` → ``h.3.attn``, ``h.3``, ``h``, ``""``."""
    yield path
    while path:
        path = path.rpartition(".")[0]
        yield path


@dataclass
class ModuleMap:
    """Per module and side: eager vs compiled."""

    side: str
    modules: dict[str, ModuleTimes]
    eager_total: float
    compiled_total: float
    unmapped_eager_ms: float  # eager time in modules where nothing compiled ran

    @property
    def coverage(self) -> float | None:
        """Share of eager time in modules the compiled side also has kernels in."""
        if self.eager_total <= 0:
            return None
        return 1.0 - self.unmapped_eager_ms / self.eager_total

    def ranked(self, own: bool = False) -> list[ModuleTimes]:
        """Modules by time lost under compile (largest first): everything under each
        module, or with ``own`` the modules' own kernels only (only modules that have
        some), so that no time counts twice."""
        if own:
            rows = [m for m in self.modules.values() if m.eager or m.compiled]
            return sorted(rows, key=lambda m: -m.own_delta_ms)
        rows = [m for m in self.modules.values() if m.eager_ms or m.compiled_ms]
        return sorted(rows, key=lambda m: -m.delta_ms)

    def over(self, paths) -> ModuleTimes | None:
        """The modules ``paths`` as one (several: a folded run of blocks, their times
        summed); None when none of them has a figure."""
        found = [m for m in (self.modules.get(p) for p in paths)
                 if m is not None and (m.eager_ms or m.compiled_ms)]
        if len(found) <= 1:
            return found[0] if found else None
        return ModuleTimes(", ".join(m.path for m in found), found[0].module_class,
                           sum(m.eager_ms for m in found), sum(m.compiled_ms for m in found))


# trace -> {(id(entry), side): (entry, its map)}, while the trace lives (it holds
# its entries: their ids are theirs as long as it does)
_maps: PerObject[dict[tuple[int, str], tuple[Entry, ModuleMap]]] = PerObject()


def module_map(trace: Trace, entry: Entry, side: str = "forward") -> ModuleMap:
    """The map of one side of ``entry`` (the same object while the trace lives: the
    eager pane and the graph's module tint read the same map)."""
    made = _made(trace, entry, side)
    if made is None:
        maps = _maps.get(trace)
        if maps is None:
            maps = _maps.put(trace, {})
        made = _module_map(trace, entry, side)
        maps[(id(entry), side)] = (entry, made)
    return made


def _made(trace: Trace, entry: Entry, side: str) -> ModuleMap | None:
    """The map ``module_map`` made of ``entry``'s ``side``, while the trace lives; None
    before."""
    hit = (_maps.get(trace) or {}).get((id(entry), side))
    return hit[1] if hit is not None and hit[0] is entry else None


def _module_map(trace: Trace, entry: Entry, side: str) -> ModuleMap:
    modules: dict[str, ModuleTimes] = {}

    def at(path: str, cls: str = "") -> ModuleTimes:
        m = modules.get(path)
        if m is None:
            m = modules[path] = ModuleTimes(path)
            if path:
                parent = at(path.rpartition(".")[0])
                parent.children.append(path)
        if cls and not m.module_class:
            m.module_class = cls
        return m

    own_compiled: dict[str, float] = defaultdict(float)
    for g in entry_graphs(trace, entry):
        if _side(g) != side:
            continue
        nodes = {n.name: n for n in g.nodes}
        for k in g.kernels:
            if not k.ms:
                continue
            members = [nodes[n] for n in k.nodes if n in nodes and nodes[n].category != "nop"]
            counts, classes, ops_at = _origin_modules(members)
            total = sum(counts.values())
            for path, n in counts.items():
                share = k.ms * n / total
                at(path, classes.get(path, "")).compiled.append(
                    CompiledShare(g.index, k, share, tuple(ops_at[path])))
                own_compiled[path] += share
                for p in _parents(path):
                    at(p).compiled_ms += share
    eager_total = 0.0
    for k in entry.kernels:
        if k.side != side:
            continue
        eager_total += k.ms
        at(k.module, k.module_class).eager.append(k)
        for p in _parents(k.module):
            at(p).eager_ms += k.ms
    unmapped = sum(k.ms for k in entry.kernels if k.side == side
                   and not _mapped(k.module, own_compiled))
    compiled_total = modules[ROOT].compiled_ms if ROOT in modules else 0.0
    return ModuleMap(side, modules, eager_total, compiled_total, unmapped)


def _origin_modules(members) -> tuple[dict[str, int], dict[str, str], dict[str, dict]]:
    """Where a kernel's work comes from: its nodes' FX origins counted by module (an
    extern node's by the origins of its own op: an addmm's inputs' ops are not its
    work), with each module's class and ops; the root for a kernel that knows none."""
    counts: dict[str, int] = defaultdict(int)
    classes: dict[str, str] = {}
    ops_at: dict[str, dict] = defaultdict(dict)
    for n in members:
        origins = list(n.origins)
        if n.extern_kernel:
            op = extern_op(n.extern_kernel)
            own = [o for o in origins if _target_op(o.target) == op]
            origins = own or origins
        for o in origins:
            if _target_op(o.target) in _NOT_WORK:
                continue
            counts[o.module] += 1
            ops_at[o.module][_target_op(o.target)] = None
            if o.module_class:
                classes.setdefault(o.module, o.module_class)
        if not origins:  # no origins recorded: the node's own module
            counts[n.module] += 1
            ops_at[n.module].update(dict.fromkeys(n.ops))
    if not counts:
        counts[ROOT] = 1
    return counts, classes, ops_at


_NOT_WORK = {"getitem", "view", "reshape", "permute", "_unsafe_view", "expand", "t",
             "transpose", "squeeze", "unsqueeze", "slice", "select", "split", "alias"}


@lru_cache(maxsize=4096)
def _target_op(target: str) -> str:
    """``aten.addmm.default`` → ``addmm``; ``<built-in function getitem>`` → ``getitem``."""
    if target.startswith(("aten.", "prims.", "torch.ops.")):
        return extern_op(target)
    return target.rsplit(" ", 1)[-1].strip(">").rsplit(".", 1)[-1]


def _mapped(path: str, own_compiled: dict[str, float]) -> bool:
    """An eager kernel's module has compiled work at it, or (for the module's own
    functional ops) at an ancestor below the root, or anywhere below it."""
    if own_compiled.get(path):
        return True
    if path and any(own_compiled.get(p) for p in _parents(path) if p):
        return True
    prefix = f"{path}." if path else ""
    return any(ms and p.startswith(prefix) for p, ms in own_compiled.items()) if path else False


def entry_of(trace: Trace, graph: Graph) -> Entry | None:
    """The entry whose calls compiled ``graph``'s frame, if any."""
    return next((e for e in trace.entries if graph.compile_id in e.compile_ids), None)


def graph_map(trace: Trace, graph: Graph) -> ModuleMap | None:
    """The map of ``graph``'s side of the entry that compiled it (None: no entry)."""
    entry = entry_of(trace, graph)
    return module_map(trace, entry, _side(graph)) if entry is not None else None


def graph_map_made(trace: Trace, graph: Graph) -> bool:
    """Whether ``graph_map`` would answer at once: the map was made, or there is none."""
    entry = entry_of(trace, graph)
    return entry is None or _made(trace, entry, _side(graph)) is not None


def eager_replaced(trace: Trace, graph: Graph, kernel: Kernel) -> tuple[list[str],
                                                                        list[EagerKernel]]:
    """(the modules a compiled kernel's work comes from, the eager kernels that ran in
    those modules on the same side): what the eager program ran where this kernel now
    runs. Empty when no entry of the trace compiled the graph's frame."""
    entry = entry_of(trace, graph)
    if entry is None:
        return [], []
    nodes = {n.name: n for n in graph.nodes}
    members = [nodes[n] for n in kernel.nodes if n in nodes and nodes[n].category != "nop"]
    modules = list(_origin_modules(members)[0])
    at = _kernels_at(entry)
    side = _side(graph)
    eager = [entry.kernels[i] for i in sorted(i for m in modules
                                              for i in at.get((side, m), ()))]
    return modules, sorted(eager, key=lambda k: -k.ms)


# entry -> {(side, module path): indices of its eager kernels there}, while it lives:
# a click on a kernel of a 20k-node train step filtered 84k eager kernels (280 ms)
_at: PerObject[dict[tuple[str, str], list[int]]] = PerObject()


def _kernels_at(entry: Entry) -> dict[tuple[str, str], list[int]]:
    hit = _at.get(entry)
    if hit is None:
        at: dict[tuple[str, str], list[int]] = defaultdict(list)
        for i, k in enumerate(entry.kernels):
            at[k.side, k.module].append(i)
        hit = _at.put(entry, dict(at))
    return hit
