"""Modules on the graph canvas tinted by their compiled against eager time.

Where the trace timed the user's program eagerly (an entry compiled the shown graph's
frame), each module box (a collapsed module, a folded run of blocks: their sum) and
each titled frame of an opened module gets the result of ``eager_map``: a module that
lost time under compile a red ring (a frame: a red wash) and a ``1.34× slower``
badge, one that won a thinner green ring and ``1.61× faster``, one within 5% (or
1 µs) nothing. Kernel colors stay as they are: the ring lies outside the box, behind
the edges and group regions. View ▸ Tint Modules (``SHORTCUT``) turns it off.
"""

from __future__ import annotations

from html import escape

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPen
from PySide6.QtWidgets import QGraphicsItem, QLabel

from fusionviz.model.errors import TraceError
from fusionviz.model.layout.frames import TITLE_H
from fusionviz.model.report.eager_figures import versus
from fusionviz.model.report.eager_map import (
    ModuleMap,
    ModuleTimes,
    graph_map,
    graph_map_made,
)
from fusionviz.ui.graph.items import LOD_TEXT
from fusionviz.ui.theme import EAGER_STROKES, EAGER_TINTS

SHORTCUT = "Ctrl+Shift+T"
FLOOR_MS = 1e-3  # a module that moved by at most this is not tinted (the Modules pane too)
HALO = 6.0  # how far a box's ring lies outside it (scene units at zoom 1)


def tint_of(m: ModuleTimes | None) -> int:
    """1: the module lost time under compile, -1: it won, 0: neither, or no figure."""
    return m.moved(floor_ms=FLOOR_MS) if m is not None else 0


def versus_line(m: ModuleTimes) -> str:
    """``compiled 0.090 ms vs eager 0.067 ms of kernel time: 1.34x slower (+0.0227 ms
    per call)``: what the tint says, in numbers."""
    v = versus("of kernel time", [m.eager_ms], [m.compiled_ms])
    return f"{v.text()} ({m.delta_ms:+.4f} ms per call)"


def badge_text(m: ModuleTimes) -> tuple[str, str]:
    """(``1.34× slower``, ``1.34×``): the badge zoomed in, and zoomed out (the color
    says which way)."""
    s = m.speedup
    if not s:  # one side ran no kernel time here
        return ("slower" if m.delta_ms > 0 else "faster"), "∞"
    ratio = f"{1 / s:.2f}×" if s < 1 else f"{s:.2f}×"
    return f"{ratio} {'slower' if s < 1 else 'faster'}", ratio


class Mark:
    """One tinted module on the canvas: a box or a frame."""

    def __init__(self, rect: QRectF, times: ModuleTimes, frame: bool, title: str) -> None:
        self.rect, self.times, self.frame, self.title = rect, times, frame, title
        self.moved = tint_of(times)
        self.badge, self.short = badge_text(times) if self.moved else ("", "")

    def tip(self) -> str:
        what = "slower than eager" if self.moved > 0 else "faster than eager"
        return (f"<b>{escape(self.title)}</b> — {what}<br>"
                f"{escape(versus_line(self.times))}")


class ModuleTint:
    """The tint of one graph view: the shown graph's eager map, its marks, its items."""

    def __init__(self, view) -> None:
        self.view = view
        self.on = True
        self.map: ModuleMap | None = None
        self.marks: dict[str, Mark] = {}  # box key or frame path -> its mark (tinted only)
        self.items: tuple[TintItem, ...] = ()
        self.legend = _legend(view)
        self._pending: tuple | None = None  # (trace, graph) whose map comes after its frame
        self._parts: tuple | None = None  # (scene, paint, frames item) of the scene shown

    @property
    def available(self) -> bool:
        """The shown graph has eager-vs-compiled figures."""
        mp = self.map
        return mp is not None and bool(mp.eager_total or mp.compiled_total)

    def set_graph(self, trace, graph) -> None:
        """The map of ``graph``; a big graph's, not made yet, after its first frame."""
        self.map, self._pending = None, None
        if trace is None or graph is None:
            return
        if len(graph.nodes) > LATE_NODES and not graph_map_made(trace, graph):
            self._pending = (trace, graph)
            # once the event loop runs again (the open is over), then after its first
            # frames: the timer would be due already if started during a long open
            QTimer.singleShot(0, lambda: QTimer.singleShot(LATE_MS, self._late))
            return
        self._make(trace, graph)

    def _make(self, trace, graph) -> None:
        try:
            self.map = graph_map(trace, graph)
        except TraceError as e:  # a malformed part of the file: no tint, said once
            self.view.state.report_unreadable(str(e))

    def _late(self) -> None:
        """The map of the graph still shown, its marks added to the scene shown."""
        pending, self._pending = self._pending, None
        if pending is None:  # another graph shown since (set_graph): its own map was made
            return
        self._make(*pending)
        if self.map is not None and self._parts is not None:
            self.add_to(*self._parts)
            self.view.viewport().update()
        self.view.sig_eager_tint_changed.emit()

    def times(self, box) -> ModuleTimes | None:
        """A box's figures (a folded run: its blocks summed); None without any."""
        if self.map is None:
            return None
        return self.map.over(box.run.paths if box.run else (box.path,))

    def add_to(self, scene, paint, frames_item) -> None:
        """Marks for the boxes and frames of a new scene, and the items painting them."""
        self._parts = (scene, paint, frames_item)
        self.marks = {}
        if self.map is not None:
            for i, (box, _colors) in paint.boxes.items():
                m = self.times(box)
                if tint_of(m):
                    self.marks[box.key] = Mark(paint.rects[i], m, False, box.title)
            frames = zip(frames_item.frames, frames_item.paths) if frames_item else ()
            for (rect, title), path in frames:
                m = self.map.modules.get(path)
                if tint_of(m):
                    self.marks[path] = Mark(rect, m, True, title)
        # frames first, outer ones under inner ones, then the boxes' rings over them
        marks = sorted(self.marks.values(),
                       key=lambda m: (not m.frame, -m.rect.width() * m.rect.height()))
        self.items = (TintItem(marks, over=False), TintItem(marks, over=True)) if marks else ()
        for item in self.items:
            scene.addItem(item)
        self.show()

    def clear(self) -> None:
        """The scene was cleared (its items are gone)."""
        self.marks, self.items, self._parts = {}, (), None
        self.show()

    def set_on(self, on: bool) -> None:
        self.on = on
        self.show()

    def show(self) -> None:
        for item in self.items:
            item.setVisible(self.on)
        shown = self.on and self.available
        if shown:
            self.legend.setText(_legend_text(len(self.marks)))
        self.legend.setVisible(shown)
        self.place_legend()

    def place_legend(self) -> None:
        """The legend in a band of its own above the graph (it covers no node's label),
        wrapped to the view's width (the view calls this when it is resized)."""
        shown = self.legend.isVisibleTo(self.view)
        if shown:
            room = max(120, self.view.width() - 2 * LEGEND_GAP - 8)
            label = self.legend
            label.setWordWrap(False)
            natural = label.sizeHint()
            label.setWordWrap(natural.width() > room)  # one line where it fits
            width = min(natural.width(), room)
            label.setFixedSize(width, label.heightForWidth(width) if label.wordWrap()
                               else natural.height())
        top = self.legend.height() + 2 * LEGEND_GAP if shown else 0
        if self.view.viewportMargins().top() != top:
            self.view.setViewportMargins(0, top, 0, 0)

    def tip_at(self, pos: QPointF) -> str:
        """The tooltip of a tinted frame whose title bar is under ``pos`` ("" for none)."""
        if not self.on:
            return ""
        for mark in self.marks.values():
            r = mark.rect
            if mark.frame and QRectF(r.left(), r.top(), r.width(), TITLE_H + 4).contains(pos):
                return mark.tip()
        return ""

    def box_line(self, box) -> str:
        """The tooltip line of a box: its compiled and eager time ("" without figures)."""
        m = self.times(box)
        if m is None:
            return ""
        return ("<b>vs eager:</b> " + escape(versus_line(m))
                + ("" if tint_of(m) else " (within 5%: not tinted)"))


# A graph of more nodes gets its map after its first frame: making it reads every node's
# details, which a lazily opened trace has not read yet (0.1-0.4 s at 10k nodes)
LATE_NODES = 2000
LATE_MS = 100  # after the first frames (and a first click), as the idle work starts

LEGEND_GAP = 4  # pixels above and below the legend, in its band over the graph


def _legend(view) -> QLabel:
    label = QLabel(view)
    label.setTextFormat(Qt.TextFormat.RichText)
    label.setToolTip("Module boxes and the frames of opened modules are tinted by the "
                     "time of their kernels under torch.compile against your program run "
                     "eagerly (ring: red lost time, green won; within 5% untinted). "
                     "Hover a box, or a frame's title, for the figures.")
    label.setAutoFillBackground(True)
    label.setContentsMargins(6, 2, 6, 2)
    label.move(8, LEGEND_GAP)
    label.hide()
    return label


def _legend_text(shown: int) -> str:
    swatch = '<span style="color:{}; font-size:14px">■</span>'
    where = (f"{shown} module{'s' if shown != 1 else ''} here" if shown else
             "no module shown is 5% off: open a box (E) or collapse to a depth (1–4)")
    return (f"{swatch.format(EAGER_STROKES[1].name())} slower than eager &nbsp; "
            f"{swatch.format(EAGER_STROKES[-1].name())} faster &nbsp;"
            f"<span style='color:gray'>modules' kernel time, compiled vs eager: {where} "
            f"({SHORTCUT} turns it off)</span>")


class TintItem(QGraphicsItem):
    """Under the scene (``over`` False): a wash over each tinted frame and a ring around
    each tinted box, behind edges and group regions. Over it: the badges."""

    def __init__(self, marks: list[Mark], *, over: bool) -> None:
        super().__init__()
        self.marks, self.over = marks, over
        self.setZValue(2.5 if over else -3.5)  # frames -3, regions -2/-1, nodes 1
        bound = QRectF()
        for mark in marks:
            bound = bound.united(mark.rect)
        self._bound = bound.adjusted(-300, -300, 300, 300)  # rings and badges grow zoomed out
        self._font = QFont()
        self._font.setBold(True)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound

    def paint(self, painter, option, widget=None) -> None:
        lod = max(option.levelOfDetailFromTransform(painter.worldTransform()), 1e-3)
        k = max(1.0, 0.6 / lod)  # rings and badges keep a visible size zoomed out
        painter.setRenderHint(painter.RenderHint.Antialiasing, True)
        if self.over:
            self._badges(painter, lod)
            return
        for mark in self.marks:
            stroke = EAGER_STROKES[mark.moved]
            if mark.frame:
                painter.setPen(QPen(stroke, 2.0 * k))
                painter.setBrush(EAGER_TINTS[mark.moved])
                painter.drawRoundedRect(mark.rect, 8, 8)
                continue
            grow = HALO * k
            painter.setPen(QPen(stroke, (3.5 if mark.moved > 0 else 2.0) * k))
            painter.setBrush(EAGER_TINTS[mark.moved])
            painter.drawRoundedRect(mark.rect.adjusted(-grow, -grow, grow, grow),
                                    6 + grow, 6 + grow)

    def _badges(self, painter, lod: float) -> None:
        font, pills = self.badges(lod)
        painter.setFont(font)
        for (pill, text), mark in zip(pills, self.marks, strict=True):
            h = pill.height()
            painter.setPen(Qt.PenStyle.NoPen)
            painter.setBrush(EAGER_STROKES[mark.moved])
            painter.drawRoundedRect(pill, h / 2, h / 2)
            painter.setPen(QColor("white"))
            painter.drawText(pill, Qt.AlignmentFlag.AlignCenter, text)

    def badges(self, lod: float) -> tuple[QFont, list[tuple[QRectF, str]]]:
        """Zoomed in, ``1.34× slower`` on the bottom border of a box at the right (of a
        frame, at the left); zoomed out, where a box is a small block, ``1.34×`` beside
        it (a frame's: left of its bottom). The font, and each mark's pill and text."""
        near = lod >= LOD_TEXT
        font = QFont(self._font)
        font.setPixelSize(max(1, round(min((11.0 if near else 9.0) / lod, 60.0))))
        fm = QFontMetricsF(font)
        pad = fm.height() * 0.35
        out = []
        for mark in self.marks:
            text = mark.badge if near else mark.short
            w, h = fm.horizontalAdvance(text) + 2 * pad, fm.height() + 2
            r = mark.rect
            if near:  # on a box's border, but off its second line (its bottom 7 px)
                x = r.left() + 14 if mark.frame else r.right() - w - 4
                top = r.bottom() - (h / 2 if mark.frame else min(h / 2, 6))
                pill = QRectF(x, top, w, h)
            else:
                gap = (2 if mark.frame else HALO + 4) * max(1.0, 0.6 / lod)
                x = r.left() - w - gap if mark.frame else r.right() + gap
                pill = QRectF(x, (r.bottom() if mark.frame else r.center().y()) - h / 2, w, h)
            out.append((pill, text))
        return font, out
