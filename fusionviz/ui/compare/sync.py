"""Keep two graph views of a comparison in step: graph, fusion step, selection, kernel,
pair, and zoom and scroll position.

Node names are stable between two compiles of one script on one torch, so what is
selected on one side is selected on the other where the same names exist (and come
from the same FX nodes); otherwise nodes are matched by their FX origins. Kernels
are matched by their nodes (names differ between variants). Steps are matched by
position, clamped to the other side's last step (a variant may stop fusing early).
"""

from __future__ import annotations

from contextlib import contextmanager

from PySide6.QtCore import QObject

from fusionviz.model.experiment.compare import node_mapping
from fusionviz.ui.graph.view import GraphView


class ViewSync(QObject):
    """Mirror every view-state write of one view onto the other."""

    def __init__(self, a: GraphView, b: GraphView, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.views = (a, b)
        self._busy = False  # a write we mirror must not bounce back
        # (graph, graph) -> node mapping, per direction, for the graphs shown: each
        # selection maps through it, and computing it walks both graphs.
        self._mappings: dict[tuple[int, int], tuple[object, object, dict[str, str]]] = {}
        for src, dst in ((a, b), (b, a)):
            s = src.state
            s.sig_graph_changed.connect(lambda i, d=dst: self._mirror(self._graph, d, i))
            s.sig_step_changed.connect(lambda k, d=dst: self._mirror(self._step, d, k))
            s.sig_selection_changed.connect(
                lambda s=s, d=dst: self._mirror(self._selection, d, self._mapped(s, d.state)))
            s.sig_kernel_changed.connect(
                lambda _n, v=src, d=dst: self._mirror(self._kernel, d, v))
            s.sig_pair_changed.connect(lambda s=s, d=dst: self._mirror(self._pair, d, s.pair))
            for signal in (src.sig_zoomed, src.horizontalScrollBar().valueChanged,
                           src.verticalScrollBar().valueChanged):
                signal.connect(lambda *_a, v=src, d=dst: self._follow(v, d))

    def _mapped(self, src, dst) -> tuple[str, ...]:
        """``src``'s selected nodes as named in ``dst``'s graph."""
        a, b = src.graph, dst.graph
        if a is None or b is None:
            return src.selected_nodes
        hit = self._mappings.get((id(a), id(b)))
        if hit is None or hit[0] is not a or hit[1] is not b:
            if len(self._mappings) >= 8:
                self._mappings.clear()
            hit = self._mappings[id(a), id(b)] = (a, b, node_mapping(a, b))
        mapping = hit[2]
        return tuple(dict.fromkeys(mapping[n] for n in src.selected_nodes if n in mapping))

    @contextmanager
    def paused(self):
        """Writes made inside are not mirrored (to set each side on its own)."""
        self._busy = True
        try:
            yield
        finally:
            self._busy = False

    def _mirror(self, fn, dst: GraphView, value) -> None:
        if self._busy or dst.state.trace is None:
            return
        with self.paused():
            fn(dst, value)

    def _follow(self, src: GraphView, dst: GraphView) -> None:
        """Same scale and scene point in the middle: one layout, seen through two windows."""
        if self._busy or dst.paint_data is None or src.paint_data is None:
            return
        with self.paused():
            dst.setTransform(src.transform())
            if dst.sceneRect() == src.sceneRect() and dst.viewport().size() == src.viewport().size():
                # one layout: the same scroll values (centerOn would round one pixel off)
                dst.horizontalScrollBar().setValue(src.horizontalScrollBar().value())
                dst.verticalScrollBar().setValue(src.verticalScrollBar().value())
            else:
                dst.centerOn(src.mapToScene(src.viewport().rect().center()))
            dst.minimap.update()

    @staticmethod
    def _graph(dst: GraphView, index: int) -> None:
        if 0 <= index < len(dst.state.trace.graphs):
            dst.state.set_graph(index)

    @staticmethod
    def _step(dst: GraphView, step: int) -> None:
        n = len(dst.state.steps)
        if n:
            dst.state.set_step(min(step, n - 1))

    @staticmethod
    def _selection(dst: GraphView, names: tuple[str, ...]) -> None:
        known = dst.paint_data.index if dst.paint_data is not None else {}
        dst.state.select_nodes(tuple(n for n in names if n in known))

    @staticmethod
    def _kernel(dst: GraphView, src: GraphView) -> None:
        dst.state.select_kernel(matching_kernel(src, dst))

    @staticmethod
    def _pair(dst: GraphView, pair) -> None:
        known = dst.paint_data.index if dst.paint_data is not None else {}
        whole = pair is not None and all(n in known for group in pair for n in group)
        dst.state.highlight_pair(pair if whole else None)


def matching_kernel(src: GraphView, dst: GraphView) -> str:
    """The kernel of ``dst`` computing the same nodes as ``src``'s selected kernel; else
    the one computing its first selected node (or the kernel's first node); else ""."""
    graph = src.state.graph
    kernel = next((k for k in graph.kernels if k.name == src.state.kernel), None) \
        if graph is not None and src.state.kernel else None
    if kernel is None or dst.state.graph is None:
        return ""
    same = next((k for k in dst.state.graph.kernels if set(k.nodes) == set(kernel.nodes)), None)
    if same is not None:
        return same.name
    for name in (*src.state.selected_nodes, *kernel.nodes):
        if name in dst.kernel_of:
            return dst.kernel_of[name].name
    return ""
