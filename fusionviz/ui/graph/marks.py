"""Selection, highlighting and search in the graph view: clicks turned into
``ViewState`` writes, the overlay's rings kept up to date, marked nodes brought into
view."""

from __future__ import annotations

from PySide6.QtCore import QRectF

from fusionviz.model.errors import TraceError
from fusionviz.ui.graph.paint import matches


class GraphMarks:
    """``GraphView``'s part that marks nodes (a mixin: it uses the view's state,
    paint_data, folding, kernel_of, _overlay, _hover, _hits and _clicking)."""

    def click_node(self, name: str, *, add: bool = False) -> None:
        """Select ``name`` (and its kernel); with ``add``, keep the last one too (2 max).
        The view stays where it is: the user clicked what they see (K shows the kernel)."""
        prev = self.state.selected_nodes
        sel = (prev[-1], name) if add and prev and prev[-1] != name else (name,)
        kernel = self.kernel_of.get(name)
        self._clicking = True
        try:
            self.state.select_nodes(sel)
            self.state.select_kernel(kernel.name if kernel is not None else "")
        finally:
            self._clicking = False

    def _ids(self, names) -> list[int]:
        if self.paint_data is None:
            return []
        index = self.paint_data.index
        return [index[n] for n in self.folding.shown(names) if n in index]

    def _update_overlay(self, *_args) -> None:
        if self._overlay is None:
            return
        pair = self.state.pair or ((), ())
        selected = self.state.selected_nodes
        # a hub's consumers (its edges are stubs) ringed while it is selected or hovered
        hubs = self.folding.hubs
        focus = [*self.folding.shown(selected),
                 *([self.paint_data.names[self._hover]] if self._hover >= 0 else [])]
        consumers = [c for h in focus if h in hubs for c in hubs[h]]
        self._overlay.set_marks(self._ids(selected),
                                (self._ids(pair[0]), self._ids(pair[1])), self._hits,
                                self._ids(self._kernel_nodes()), self._ids(consumers))

    def _kernel_nodes(self) -> tuple[str, ...]:
        graph = self.state.graph
        kernel = next((k for k in graph.kernels if k.name == self.state.kernel), None) \
            if graph is not None and self.state.kernel else None
        return kernel.nodes if kernel is not None else ()

    def _on_kernel_changed(self, _name: str) -> None:
        self._update_overlay()
        if self.paint_data is not None and not self._clicking:  # chosen in another pane
            self.bring_into_view(self._ids(self._kernel_nodes()))

    def _on_pair_changed(self) -> None:
        self._update_overlay()
        if self.state.pair and self.paint_data is not None:
            self.center_on(self._ids([*self.state.pair[0], *self.state.pair[1]]))

    def _box_of(self, ids: list[int]) -> QRectF:
        rects = self.paint_data.rects
        box = QRectF(rects[ids[0]])
        for i in ids[1:]:
            box = box.united(rects[i])
        return box

    def center_on(self, ids: list[int]) -> None:
        """Scroll to the nodes when they are not all in view (the zoom stays)."""
        if not ids:
            return
        box = self._box_of(ids)
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        if not visible.contains(box):
            self.centerOn(box.center())

    def bring_into_view(self, ids: list[int]) -> None:
        """Scroll only when none of the nodes is in view, then to the first of them: a
        kernel spanning twelve blocks has no useful centre (K fits all of it)."""
        if not ids:
            return
        visible = self.mapToScene(self.viewport().rect()).boundingRect()
        rects = self.paint_data.rects
        if not any(visible.intersects(rects[i]) for i in ids):
            self.centerOn(rects[min(ids, key=lambda i: rects[i].top())].center())

    # ---- search ---------------------------------------------------------------------
    def find(self, text: str) -> list[str]:
        """Mark nodes whose name, module path, buffers, ops or origins contain ``text``
        (a node folded into a box marks the box); show the first."""
        text = text.strip().lower()
        paint, graph = self.paint_data, self.state.graph
        found = [] if not text or paint is None or graph is None else [
            n.name for n in graph.nodes if self._matches(n, text)]
        found += [b for b in (paint.names if paint and text else ()) if text in b.lower()]
        self._hits = sorted(set(self._ids(found)))
        self._hit_pos = -1
        self._update_overlay()
        self.sig_hits_changed.emit(len(self._hits))
        self.find_next()
        return [paint.names[i] for i in self._hits] if paint else []

    def _matches(self, node, text: str) -> bool:
        try:
            return matches(node.name, node, text)
        except TraceError as e:  # its details are malformed: its name still matches
            self.state.report_unreadable(str(e))
            return text in node.name.lower()

    def mark(self, names) -> None:
        """Ring the visible nodes showing ``names`` (as search hits) and show them."""
        self._hits = self._ids(names)
        self._hit_pos = -1
        self._update_overlay()
        self.center_on(self._hits)

    def find_next(self) -> None:
        if self._hits:
            self._hit_pos = (self._hit_pos + 1) % len(self._hits)
            i = self._hits[self._hit_pos]
            self.centerOn(self.node_scene_pos(self.paint_data.names[i]))
