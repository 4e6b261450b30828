"""One stable color per kernel, shared by the graph, the code pane and the charts.

Colors are hex strings so the model stays Qt-free; the UI turns them into QColors.
A kernel's color depends only on its position in its graph's call order, so it is
the same every time the same trace is opened.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

# A qualitative palette (Tableau 20 reordered so neighbours contrast), readable on
# both light and dark backgrounds.
KERNEL_COLORS = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#76b7b2", "#edc948",
    "#ff9da7", "#9c755f", "#a0cbe8", "#ffbe7d", "#8cd17d", "#f1ce63", "#86bcb6",
    "#d37295", "#fabfd2", "#b6992d", "#499894", "#d4a6c8", "#79706e",
)
EXTERN_COLOR = "#8c8c8c"  # extern (library) calls: cuBLAS, aten fallbacks
NO_KERNEL_COLOR = "#d9d9d9"  # nodes that emit no kernel (nop, removed)


def kernel_color(index: int, kind: str = "") -> str:
    """The color of the kernel at ``index`` in call order."""
    if kind == "extern":
        return EXTERN_COLOR
    return KERNEL_COLORS[index % len(KERNEL_COLORS)]


def graph_color(index: int) -> str:
    """The color of graph ``index`` where graphs are drawn side by side (a rank's
    step timeline): the kernel palette, by graph index."""
    return kernel_color(index)


def kernel_colors(kernels) -> Mapping[str, str]:
    """Map kernel name → color for a graph's kernels (first occurrence wins).

    The graph view, kernel pane, details pane and charts all ask when a graph is
    shown: the last answer is kept for the same kernels object (read-only).
    """
    global _LAST
    if _LAST is not None and _LAST[0] is kernels:
        return _LAST[1]
    colors: dict[str, str] = {}
    for i, k in enumerate(kernels):
        colors.setdefault(k.name, kernel_color(i, k.kind))
    _LAST = (kernels, MappingProxyType(colors))
    return _LAST[1]


_LAST: tuple[object, Mapping[str, str]] | None = None
