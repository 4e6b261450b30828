"""Lowering's "large body" realizations (#20: where ``realize_opcount_threshold``
applies). A pointwise or reduction body of more ops than the threshold is stored to
memory instead of being inlined into its users: ``StorageBox.has_exceeded_max_reads``,
``should_realize_on_reuse`` and the output check ask ``has_large_inner_fn`` (threshold
None) and realize the buffer when it says so. Lowering runs before
``compile_to_module``, where a graph's record starts: the boxes asked are kept on the
GraphLowering (``V.graph``), and when its graph starts, those realized since
(``op_counts``) are the graph's large bodies."""

from __future__ import annotations

import importlib

ATTR = "_fusionviz_large_bodies"  # on the GraphLowering: {id(box): (box, op count)}


def install(patcher) -> None:
    try:
        box = importlib.import_module("torch._inductor.ir").MutableBox
    except (ImportError, AttributeError):
        box = None
    patcher.wrap(box, "has_large_inner_fn", _factory(patcher),
                 "torch._inductor.ir.MutableBox.has_large_inner_fn")


def _factory(patcher):
    def factory(orig):
        def has_large_inner_fn(self, *args, **kwargs):
            large = orig(self, *args, **kwargs)
            threshold = args[0] if args else kwargs.get("threshold")
            if large and threshold is None:  # the realize checks, not another caller's
                patcher.guard("large body", _note, self)
            return large

        return has_large_inner_fn

    return factory


def _note(box) -> None:
    from torch._inductor import ir
    from torch._inductor.graph import GraphLowering
    from torch._inductor.virtualized import V

    graph = V.graph
    if isinstance(graph, GraphLowering) and isinstance(box, ir.StorageBox) \
            and isinstance(box.data, ir.Loops):
        seen = graph.__dict__.setdefault(ATTR, {})
        if id(box) not in seen:
            seen[id(box)] = (box, int(box.data.inner_fn_opcount().num_ops))


def op_counts(graph_lowering) -> tuple[int, ...]:
    """The op counts of the bodies lowering stored for their size, largest first: asked,
    and realized since, but not stored anyway as a graph output or a library call's
    input (raising the threshold would not change those)."""
    from torch._inductor import ir

    anyway = _name_set(graph_lowering.graph_outputs) | _name_set(
        i for b in graph_lowering.buffers if isinstance(b, ir.ExternKernel)
        for i in getattr(b, "inputs", ()))
    return tuple(sorted((count for box, count in getattr(graph_lowering, ATTR, {}).values()
                         if isinstance(box.data, ir.ComputedBuffer)
                         and _name(box.data) not in anyway), reverse=True))


def _name(node) -> str | None:
    try:
        return node.get_name()
    except Exception:  # noqa: BLE001 - views and constants without one
        return None


def _name_set(nodes) -> set[str]:
    return {n for n in map(_name, nodes) if n}
