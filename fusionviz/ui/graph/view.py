"""The scheduler node graph: one stable layout, fused groups restyled per fusion step.

Builds tiles (``items``) from ``model.layout`` once per graph, restyles only the
tiles of nodes whose group changed when the step changes, and turns clicks, hovers and
searches into ``ViewState`` writes. Zoom: wheel, +/-; pan: drag; fit: F. Module boxes
and frames are tinted by compiled against eager time (``eager_tint``).
"""

from __future__ import annotations

from html import escape

import numpy as np
from PySide6.QtCore import QPoint, QPointF, QRectF, Qt, Signal
from PySide6.QtGui import QColor, QImage, QPainter, QPixmapCache
from PySide6.QtWidgets import QGraphicsItem, QGraphicsScene, QGraphicsView, QToolTip

from fusionviz.model.errors import TraceError
from fusionviz.model.gc_pause import gc_paused
from fusionviz.model.layout.frames import frame_layout
from fusionviz.model.layout.sugiyama import layout
from fusionviz.model.palette import NO_KERNEL_COLOR, kernel_colors
from fusionviz.model.queries import kernel_of_node, node_index
from fusionviz.ui.graph.commands import ModuleCommands
from fusionviz.ui.graph.decor import FramesItem, HubsItem, box_tooltip
from fusionviz.ui.graph.eager_tint import ModuleTint
from fusionviz.ui.graph.folding import Folding
from fusionviz.ui.graph.items import build_tiles
from fusionviz.ui.graph.marks import GraphMarks
from fusionviz.ui.graph.minimap import MiniMap
from fusionviz.ui.graph.overlay import OverlayItem
from fusionviz.ui.graph.paint import MAX_LABEL, GraphPaint, node_tooltip
from fusionviz.ui.theme import graph_colors, is_dark
from fusionviz.ui.view_state import ViewState

SIZES = {"node_width": 170.0, "node_height": 44.0, "h_gap": 24.0, "v_gap": 56.0}
ZOOM_STEP = 1.25
MAX_SCALE = 4.0


class GraphView(GraphMarks, ModuleCommands, QGraphicsView):
    """Zoomable, searchable view of the current graph at the current fusion step."""

    sig_hits_changed = Signal(int)
    """A search finished; argument: number of matching nodes."""
    sig_zoomed = Signal()
    """The scale changed (zoom or fit); scrolling is seen on the scroll bars."""
    sig_folding_changed = Signal()
    """Modules were collapsed, expanded, folded, revealed or focused (or a new graph)."""
    sig_node_menu = Signal(str, QPoint)
    """Right click; arguments: the node under the mouse ("" for none), global position.
    A node not yet selected is selected first (added to a single selection, as a pair)."""
    sig_eager_tint_changed = Signal()
    """The module tint was turned on or off, or the shown graph has (no) eager figures."""

    def __init__(self, state: ViewState, parent=None) -> None:
        super().__init__(parent)
        # Room for the edge tiles' cached pixmaps of a zoomed-in view (several
        # viewport-sized ones); Qt's default 10 MB would evict them every frame.
        QPixmapCache.setCacheLimit(max(QPixmapCache.cacheLimit(), 64 * 1024))
        self.state = state
        self.setScene(QGraphicsScene(self))
        self.setDragMode(QGraphicsView.DragMode.ScrollHandDrag)
        self.setTransformationAnchor(QGraphicsView.ViewportAnchor.AnchorUnderMouse)
        self.setViewportUpdateMode(QGraphicsView.ViewportUpdateMode.SmartViewportUpdate)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.paint_data: GraphPaint | None = None
        self.kernel_of: dict = {}
        self._kernels_of, self._colors, self._nodes = None, {}, {}
        self._tiles: dict = {}
        self._tile_index = None
        self._layouts: dict[int, object] = {}
        self._styles: dict[int, tuple] = {}
        self._overlay: OverlayItem | None = None
        self._hubs_item: HubsItem | None = None
        self.folding = Folding()  # collapsed modules and folded repeated blocks
        self._hits: list[int] = []
        self._hit_pos = -1
        self._hover = -1
        self._clicking = False  # a click in this view is selecting: the view stays put
        self._fitted = False  # showing the whole graph: a resize fits it again
        self._settling = False  # fitting or resizing: its scrolls are not the user's
        self.message = ("Open a trace (Ctrl+O) or capture a script (Ctrl+Shift+O), "
                        "or drop a file here.")
        self.minimap = MiniMap(self)
        self.tint = ModuleTint(self)  # modules by compiled vs eager time
        state.sig_trace_changed.connect(self._layouts.clear)
        state.sig_trace_changed.connect(self.folding.forget)
        state.sig_graph_changed.connect(self._on_graph_changed)
        state.sig_step_changed.connect(self._on_step_changed)
        state.sig_selection_changed.connect(self._update_overlay)
        state.sig_pair_changed.connect(self._on_pair_changed)
        state.sig_kernel_changed.connect(self._on_kernel_changed)
        self.horizontalScrollBar().valueChanged.connect(self.minimap.update)
        self.verticalScrollBar().valueChanged.connect(self.minimap.update)
        self.set_dark(is_dark())
        self._on_graph_changed()

    # ---- building and restyling -------------------------------------------------
    def _layout_of(self, graph):
        key = (self.state.graph_index, self.folding.key)
        if key not in self._layouts:
            view = self.folding.view
            self._layouts[key] = layout(view.names, self.folding.layout_edges(), **SIZES)
        return self._layouts[key]

    def prepare_expanded(self) -> None:
        """Lay out the graph with every module expanded ahead of Expand All."""
        if self.folding.tree is not None:
            key, view, edges = self.folding.expanded()
            if (self.state.graph_index, key) not in self._layouts:
                self._layouts[(self.state.graph_index, key)] = layout(view.names, edges,
                                                                      **SIZES)

    def _on_graph_changed(self, *_args) -> None:
        with gc_paused():  # see _rebuild
            self.folding.set_graph(self.state.graph)
            self.tint.set_graph(self.state.trace, self.state.graph)
        self._rebuild()
        self.fit()
        self.sig_folding_changed.emit()
        self.sig_eager_tint_changed.emit()

    def restore_folding(self, snapshot: tuple) -> None:
        """Fold the shown graph as ``Folding.snapshot`` said (kernels only and back)."""
        if self.state.graph is not None:
            self.folding.restore(snapshot)
            self._rebuild()
            self.fit()
            self.sig_folding_changed.emit()

    def _rebuild(self) -> None:
        """A new scene for the graph as the folding shows it."""
        self.scene().clear()
        self.tint.clear()
        self.paint_data, self._overlay, self._tiles, self._styles = None, None, {}, {}
        self._hubs_item = None
        self._hits, self._hit_pos, self._hover = [], -1, -1
        graph = self.state.graph
        if graph is not None:
            # Building a big scene allocates ~10^5 small objects, none cyclic, while
            # the trace holds ~10^6 more that each automatic collection would rescan
            # (0.5 s of a 20k-node open).
            with gc_paused():
                self._build(graph)
        self.minimap.set_paint(self.paint_data)

    def _build(self, graph) -> None:
        folding = self.folding
        # room between layers for the titles of opened modules' frames
        lay, frames = frame_layout(self._layout_of(graph), folding.frames())
        if self._kernels_of is not graph:  # once per graph, not per fold
            self.kernel_of, self._colors = kernel_of_node(graph), kernel_colors(graph.kernels)
            self._nodes = node_index(graph)
            self._kernels_of = graph
        colors = self._colors
        box_colors = folding.box_colors(colors)
        by_node = [box_colors[n][0] if n in box_colors else
                   colors.get(self.kernel_of[n].name, NO_KERNEL_COLOR)
                   if n in self.kernel_of else NO_KERNEL_COLOR for n in lay.names]
        boxes = {k: (b, box_colors[k]) for k, b in folding.view.boxes.items()}
        paint = GraphPaint(graph, lay, by_node, SIZES, boxes, folding.view.edge_count,
                           self._nodes)
        paint.colors = graph_colors(self._dark)
        self.paint_data = paint
        self._tiles, self._tile_index = build_tiles(paint)
        scene = self.scene()
        for layer in self._tiles.values():
            for item in layer:
                if item is not None:
                    scene.addItem(item)
        frames_item = FramesItem(paint, frames, folding.tree.module_class) if frames else None
        if frames_item is not None:
            scene.addItem(frames_item)
        self.tint.add_to(scene, paint, frames_item)
        if folding.hubs:
            self._hubs_item = HubsItem(paint, folding.hubs)
            scene.addItem(self._hubs_item)
        texts = [r for r, _ in (frames_item.titles if frames_item else ())]
        texts += [r for *_, r, _ in (self._hubs_item.stubs if self._hubs_item else ())]
        paint.place_counts(texts)  # the ×N of edges: where no other text is
        self._overlay = OverlayItem(paint)
        scene.addItem(self._overlay)
        margin = 60.0
        area = QRectF(0, 0, float(lay.width), float(lay.height))
        if frames_item is not None:
            area = area.united(frames_item.boundingRect())
        scene.setSceneRect(area.adjusted(-margin, -margin, margin, margin))
        self._on_step_changed(self.state.step)

    def prepare_step(self, k: int) -> None:
        """Compute the node styles of step ``k`` ahead of its first visit."""
        steps = self.state.steps
        if self.paint_data is not None and k not in self._styles and 0 <= k < len(steps):
            step = steps[k]
            groups, changed = self.folding.map_step(step.groups, step.changed)
            self._styles[k] = (self.paint_data.step_style(groups, changed),
                               self.folding.box_notes(step.groups, steps[-1].groups))

    def _on_step_changed(self, step: int) -> None:
        paint, steps = self.paint_data, self.state.steps
        if paint is None or not steps:
            return
        k = max(0, min(step, len(steps) - 1))  # the step shown (see ViewState.current_step)
        self.prepare_step(k)
        style, notes = self._styles[k]
        touched = paint.apply_style(style)
        if notes:  # a box's second line says what fused inside it at this step
            ids = []
            for key, note in notes.items():
                i = paint.index.get(key)
                if i is not None:
                    paint.set_box_note(i, note)
                    ids.append(i)
            touched = np.union1d(touched, np.asarray(ids, np.intp))
        for t in self._tile_index.tiles_of(touched):
            for layer in ("border", "fill", "nodes"):
                self._tiles[layer][t].invalidate()
        # One repaint of what is visible; per-tile update() calls cost ~0.1 ms each.
        self.scene().update()
        self._update_overlay()

    def set_dark(self, dark: bool) -> None:
        self._dark = dark
        colors = graph_colors(dark)
        self.setBackgroundBrush(colors.background)
        if self.paint_data is not None:
            self.paint_data.colors = colors
            for layer in self._tiles.values():
                for item in layer:
                    if item is not None:
                        item.invalidate()
            self.scene().update()
        self.minimap.set_paint(self.paint_data)

    def set_eager_tint(self, on: bool) -> None:
        """Tint module boxes and frames by compiled vs eager time (or not)."""
        self.tint.set_on(on)
        self.sig_eager_tint_changed.emit()

    def toggle_eager_tint(self) -> None:
        self.set_eager_tint(not self.tint.on)

    def set_message(self, text: str) -> None:
        """What the empty view says (e.g. the capture's progress)."""
        self.message = text
        self.viewport().update()

    def drawForeground(self, painter, rect) -> None:  # noqa: N802 (Qt override)
        if self.paint_data is not None and self.paint_data.names:
            return
        painter.save()
        painter.resetTransform()  # viewport coordinates: centered whatever the zoom
        painter.setPen(graph_colors(self._dark).subtext)
        text = self.message if self.state.graph is None else "This graph has no nodes."
        painter.drawText(self.viewport().rect().adjusted(40, 40, -40, -40),
                         Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
        painter.restore()

    # ---- queries (used by tests, export and the window) ---------------------------
    def shown_as(self, name: str) -> str:
        """The visible node showing ``name`` (itself, or the box it is folded into)."""
        return self.folding.shown((name,))[0]

    def group_of_node(self, name: str) -> tuple[str, ...]:
        """The group shown around ``name`` at the current step (itself when alone)."""
        paint = self.paint_data
        name = self.shown_as(name)
        i = paint.index[name]
        if not paint.multi[i]:
            return (name,)
        members = np.flatnonzero(paint.group_id == paint.group_id[i]).tolist()
        return tuple(paint.names[j] for j in members)

    def node_color(self, name: str) -> str:
        """Hex color the node's region and box are painted in at the current step."""
        return self.paint_data.region_color(self.paint_data.index[self.shown_as(name)])

    def visible_pos(self, name: str) -> QPointF | None:
        """Where ``name`` (or the box holding it) is drawn; None when it is not shown."""
        i = self.paint_data.index.get(self.shown_as(name)) if self.paint_data else None
        return None if i is None else QPointF(float(self.paint_data.x[i]),
                                              float(self.paint_data.y[i]))

    def node_scene_pos(self, name: str) -> QPointF:
        i = self.paint_data.index[self.shown_as(name)]
        return QPointF(float(self.paint_data.x[i]), float(self.paint_data.y[i]))

    @property
    def overlay(self) -> OverlayItem | None:
        return self._overlay

    def show_whole_kernel(self) -> None:
        """Zoom and scroll so every node of the selected kernel is in view (K)."""
        ids = self._ids(self._kernel_nodes())
        if not ids:
            return
        margin = 0.5 * SIZES["node_width"]
        self._fit_rect(self._box_of(ids).adjusted(-margin, -margin, margin, margin))
        self._fitted = False

    # ---- zoom -----------------------------------------------------------------------
    def fit(self) -> None:
        if self.paint_data is None or not self.paint_data.names:
            return
        self._settling = True
        self._fit_rect(self.scene().sceneRect())
        self._fitted, self._settling = True, False

    def _fit_rect(self, rect: QRectF) -> None:
        """Zoom and scroll to show ``rect`` whole; never above 1:1 (a small graph or
        kernel at a readable size, not blown up)."""
        self.resetTransform()
        self.fitInView(rect, Qt.AspectRatioMode.KeepAspectRatio)
        if self.transform().m11() > 1.0:
            self.resetTransform()
            self.centerOn(rect.center())
        self.minimap.update()
        self.sig_zoomed.emit()

    def zoom(self, factor: float) -> None:
        scale = self.transform().m11()
        factor = min(factor, MAX_SCALE / scale)
        self.scale(factor, factor)
        self._fitted = False
        self.minimap.update()
        self.sig_zoomed.emit()

    def zoom_in(self) -> None:
        self.zoom(ZOOM_STEP)

    def zoom_out(self) -> None:
        self.zoom(1 / ZOOM_STEP)

    def wheelEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.zoom(ZOOM_STEP ** (event.angleDelta().y() / 120))

    def keyPressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        key = event.key()
        if key == Qt.Key.Key_F:
            self.fit()
        elif key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_in()
        elif key == Qt.Key.Key_Minus:
            self.zoom_out()
        else:
            super().keyPressEvent(event)

    # ---- mouse --------------------------------------------------------------------------
    def _node_under(self, pos) -> int:
        if self.paint_data is None:
            return -1
        return self.paint_data.node_at(self.mapToScene(pos))

    def mousePressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        i = self._node_under(event.position().toPoint())
        if event.button() == Qt.MouseButton.LeftButton and i in self.paint_data.boxes:
            self.expand_box(self.paint_data.names[i])
            event.accept()
            return
        if event.button() == Qt.MouseButton.LeftButton and i >= 0:
            add = bool(event.modifiers() & Qt.KeyboardModifier.ControlModifier)
            self.click_node(self.paint_data.names[i], add=add)
            event.accept()
            return
        super().mousePressEvent(event)

    def mouseReleaseEvent(self, event) -> None:  # noqa: N802 (Qt override)
        # The view took the press (a node click, or the start of a pan): its release is
        # the view's too, not the parent's, even when no scene item grabbed the mouse.
        super().mouseReleaseEvent(event)
        event.accept()

    def contextMenuEvent(self, event) -> None:  # noqa: N802 (Qt override)
        i = self._node_under(event.pos())
        name = self.paint_data.names[i] if i >= 0 else ""
        sel = self.state.selected_nodes
        if name and name not in sel:
            self.click_node(name, add=len(sel) == 1)
        self.sig_node_menu.emit(name, event.globalPos())
        event.accept()

    def mouseMoveEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().mouseMoveEvent(event)
        if event.buttons() != Qt.MouseButton.NoButton:
            return
        i = self._node_under(event.position().toPoint())
        frame_tip = self.tint.tip_at(self.mapToScene(event.position().toPoint())) \
            if i < 0 and self.paint_data is not None else ""
        if frame_tip:  # the title of a tinted module's frame: its figures
            QToolTip.showText(event.globalPosition().toPoint(), frame_tip, self)
        if i != self._hover:
            self._hover = i
            if i < 0:
                if not frame_tip:
                    QToolTip.hideText()
            elif i in self.paint_data.boxes:
                box = self.paint_data.boxes[i][0]
                QToolTip.showText(event.globalPosition().toPoint(),
                                  box_tooltip(box, self.paint_data.box_note.get(i, ""),
                                              self.kernel_of, self.folding.decisions(box),
                                              self.tint.box_line(box)),
                                  self)
            else:
                try:
                    tip = node_tooltip(self.paint_data, i, self.kernel_of, self.group_of_node)
                except TraceError as e:  # its part of the file is malformed
                    self.state.report_unreadable(str(e))
                    name = escape(self.paint_data.names[i][:MAX_LABEL])
                    tip = f"<b>{name}</b><br>details cannot be read"
                QToolTip.showText(event.globalPosition().toPoint(), tip, self)
            if self.folding.hubs:
                self._update_overlay()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        fitted, self._settling = self._fitted, True
        super().resizeEvent(event)
        self._settling = False
        self.minimap.reposition()
        self.tint.place_legend()
        if fitted:  # maximised, a dock closed: the whole graph still, bigger
            self.fit()

    def scrollContentsBy(self, dx: int, dy: int) -> None:  # noqa: N802 (Qt override)
        super().scrollContentsBy(dx, dy)
        if not self._settling:  # a pan, a scroll, a centring: the user's view now
            self._fitted = False

    # ---- rendering for export ---------------------------------------------------------
    def render_image(self, max_side: int = 8000, scale: float = 1.0) -> QImage:
        """The whole graph at the current step as an image (text kept when it fits)."""
        source = self.scene().sceneRect()
        scale = min(scale, max_side / max(source.width(), source.height(), 1.0))
        size = (max(1, int(source.width() * scale)), max(1, int(source.height() * scale)))
        image = QImage(*size, QImage.Format.Format_ARGB32_Premultiplied)
        image.fill(QColor(graph_colors(self._dark).background))
        painter = QPainter(image)
        self.render_scene(painter, QRectF(0, 0, *size), source)
        painter.end()
        return image

    def render_scene(self, painter: QPainter, target: QRectF, source: QRectF) -> None:
        """``scene().render`` for export: items paint themselves, not their cached
        pixmaps (an SVG or PDF keeps its edges as vector paths)."""
        cached = [(item, item.cacheMode()) for item in self.scene().items()
                  if item.cacheMode() != QGraphicsItem.CacheMode.NoCache]
        for item, _ in cached:
            item.setCacheMode(QGraphicsItem.CacheMode.NoCache)
        try:
            self.scene().render(painter, target, source)
        finally:
            for item, mode in cached:
                item.setCacheMode(mode)
