"""Readable names for scheduler nodes and fused groups: ``op42 · var_mean · h.1.ln_1``.

A node's raw name (``op42``) is what search, export and Inductor's logs use; the
readable form adds its main op(s) and the ``nn.Module`` path it came from, so a user
can tell which layer a fusion belongs to without hovering node by node.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable

from fusionviz.model.trace import Graph, Node

SEP = " · "
# Ops that move or relabel data; a node's main op is something else when it has one.
_PLUMBING = frozenset({
    "default", "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "expand",
    "clone", "_to_copy", "convert_element_type", "squeeze", "unsqueeze", "slice",
    "select", "getitem", "alias", "split", "split_with_sizes", "contiguous",
    "as_strided", "full", "scalar_tensor", "constant_pad_nd", "copy_", "copy", "iota",
})
_REDUCTIONS = frozenset({
    "sum", "mean", "var_mean", "var", "amax", "amin", "max", "min", "argmax", "argmin",
    "prod", "any", "all", "logsumexp", "_log_softmax", "_softmax", "cumsum", "sort",
    "native_layer_norm", "native_layer_norm_backward", "native_dropout_backward",
})


# Ops a template kernel (max-autotune's Triton matmuls, convolutions) is built around.
_TEMPLATES = frozenset({
    "mm", "addmm", "bmm", "baddbmm", "mm_plus_mm", "convolution", "_scaled_mm", "_int_mm",
    "flex_attention", "flex_attention_backward",
})
_FUNCTION = re.compile(r"<function (\w+)")


def readable_op(op: str) -> str:
    """An op name as recorded, or the function inside a recorded ``repr``
    (``functools.partial(<function mm_plus_mm …>, …)`` → ``mm_plus_mm``); "" for none."""
    if op.isidentifier():
        return op
    found = _FUNCTION.search(op)
    return found.group(1) if found else ""


def main_ops(node: Node, limit: int = 2) -> tuple[str, ...]:
    """What the node computes, most telling first: its extern call, its reductions,
    then its other non-plumbing ops; plumbing only when it has nothing else. A
    template node: ``mm template`` and then its epilogue's ops."""
    if node.collective is not None:
        return (node.collective.kind,)
    if node.extern_kernel:
        return (extern_op(node.extern_kernel),)
    ops = [o for o in dict.fromkeys(map(readable_op, node.ops)) if o]
    telling = [o for o in ops if o in _REDUCTIONS] + [
        o for o in ops if o not in _REDUCTIONS and o not in _PLUMBING]
    if node.category == "template":
        template = next((o for o in ops if o in _TEMPLATES), "")
        epilogue = [o for o in telling if o != template]
        return (f"{template} template".lstrip(), *epilogue)[:limit]
    return tuple((telling or [o for o in ops if o != "default"])[:limit])


def extern_op(call: str) -> str:
    """``extern_kernels.addmm`` → ``addmm``; ``torch.ops.aten.sort.stable`` and
    ``aten.randint.low_out`` → ``sort``, ``randint``."""
    parts = call.removeprefix("torch.ops.").split(".")
    if len(parts) >= 3:  # namespace.op.overload
        return parts[1]
    return parts[-1]


def common_module(paths: Iterable[str]) -> str:
    """Where all of ``paths`` are: their common dotted path, with ``*`` for the layer
    index where they differ only by it (``h.*.attn`` for ``h.0.attn`` … ``h.11.attn``,
    a fusion across layers); ``""`` when they have nothing in common."""
    parts = [p.split(".") for p in dict.fromkeys(p for p in paths if p)]
    if not parts:
        return ""
    if len({len(p) for p in parts}) == 1:
        columns = list(zip(*parts, strict=True))
        if all(len(set(c)) == 1 or all(x.isdigit() for x in c) for c in columns):
            return ".".join(c[0] if len(set(c)) == 1 else "*" for c in columns)
    return ".".join(os.path.commonprefix(parts))  # works on lists of path segments


class Names:
    """Readable names of one graph's nodes and groups."""

    def __init__(self, graph: Graph | None) -> None:
        self.nodes: dict[str, Node] = {n.name: n for n in graph.nodes} if graph else {}
        self._cache: dict[tuple[str, ...], str] = {}

    def about(self, group: Iterable[str] | str) -> str:
        """``var_mean · h.1.ln_1``: the main ops and common module of a node or group
        (``""`` when the graph knows none of them)."""
        key = (group,) if isinstance(group, str) else tuple(group)
        hit = self._cache.get(key)
        if hit is None:
            nodes = [self.nodes[m] for m in key if m in self.nodes]
            ops = list(dict.fromkeys(o for n in nodes for o in main_ops(n)))
            ops.sort(key=lambda o: o not in _REDUCTIONS)  # stable: reductions first
            shown = ", ".join(ops[:3]) + (", …" if len(ops) > 3 else "")
            # only nodes that know their module vote: graph inputs and seeds have none
            module = common_module(n.module for n in nodes if n.module)
            hit = SEP.join(t for t in (shown, module) if t)
            self._cache[key] = hit
        return hit

    def label(self, group: Iterable[str] | str) -> str:
        """``op42 · var_mean · h.1.ln_1``; a group's members joined by ``+``."""
        key = (group,) if isinstance(group, str) else tuple(group)
        about = self.about(key)
        raw = "+".join(key)
        return f"{raw}{SEP}{about}" if about else raw
