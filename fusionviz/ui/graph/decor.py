"""What the graph view draws around its nodes when modules are folded: titled frames
around modules opened from a box, stubs of high fan-out nodes, and box tooltips."""

from __future__ import annotations

from collections import Counter
from html import escape

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QFont, QPen
from PySide6.QtWidgets import QGraphicsItem

from fusionviz.ui.graph.paint import GraphPaint

FRAME_PAD = 14.0
TITLE_H = 18.0
NEST_PAD = 6.0  # more room on each side of a frame per frame nested in it
STUB = 14.0


class FramesItem(QGraphicsItem):
    """A titled frame (``blocks › 3 (Block)``) around each module opened from a box."""

    def __init__(self, paint: GraphPaint, frames: list[tuple[str, list[str]]],
                 classes: dict[str, str]) -> None:
        super().__init__()
        self.setZValue(-3)  # behind group regions
        self.frames = []
        self.paths: list[str] = []  # the module of each frame
        inner = _nesting([path for path, _ in frames])
        for path, names in frames:
            ids = [paint.index[n] for n in names if n in paint.index]
            if not ids:
                continue
            r = QRectF(paint.rects[ids[0]])
            for i in ids[1:]:
                r = r.united(paint.rects[i])
            # a frame around opened frames is wider, its title above theirs
            pad, top = FRAME_PAD + NEST_PAD * inner[path], (TITLE_H + 2) * inner[path]
            r = r.adjusted(-pad, -FRAME_PAD - TITLE_H - top, pad, pad)
            cls = classes.get(path, "")
            title = " › ".join(path.split(".")) + (f" ({cls})" if cls else "")
            self.frames.append((r, title))
            self.paths.append(path)
        self.paint_data = paint
        self._bound = QRectF()
        for r, _ in self.frames:
            self._bound = self._bound.united(r)
        self._font = QFont()
        self._font.setPointSizeF(8.0)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound.adjusted(-2, -2, 2, 2)

    def paint(self, painter, option, widget=None) -> None:
        colors = self.paint_data.colors
        painter.setFont(self._font)
        for r, title in self.frames:
            painter.setBrush(Qt.BrushStyle.NoBrush)
            painter.setPen(QPen(colors.subtext, 1.2, Qt.PenStyle.DashLine))
            painter.drawRoundedRect(r, 8, 8)
            painter.setPen(colors.subtext)
            painter.drawText(QRectF(r.left() + 8, r.top() + 2, r.width() - 16, TITLE_H),
                             Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, title)


def _nesting(paths: list[str]) -> dict[str, int]:
    """How deep the frames nested in each frame go (0: none inside it)."""
    inner = dict.fromkeys(paths, 0)
    for path in sorted(paths, key=lambda p: -p.count(".")):  # the innermost first
        parent = path.rpartition(".")[0]
        while parent and parent not in inner:
            parent = parent.rpartition(".")[0]
        if parent:
            inner[parent] = max(inner[parent], inner[path] + 1)
    return inner


class HubsItem(QGraphicsItem):
    """A node feeding many others (an RNG seed, a mask) keeps short stubs instead of
    long edges: ``→ N`` under it, ``← name`` over each consumer. Selecting or
    hovering it rings its consumers (the overlay)."""

    def __init__(self, paint: GraphPaint, hubs: dict[str, tuple[str, ...]]) -> None:
        super().__init__()
        self.setZValue(2)
        self.paint_data = paint
        self.out: list[tuple[int, str]] = []  # hub index, its label
        self.into: list[tuple[int, str]] = []  # consumer index, its label
        fan_in: dict[int, list[str]] = {}
        for hub, consumers in hubs.items():
            h = paint.index.get(hub)
            if h is None:
                continue
            self.out.append((h, f"→ {len(consumers)}"))
            for c in consumers:
                if c in paint.index:
                    fan_in.setdefault(paint.index[c], []).append(hub)
        for i, hs in fan_in.items():
            self.into.append((i, "← " + ", ".join(hs[:2]) + (f" +{len(hs) - 2}" if len(hs) > 2 else "")))
        self._bound = QRectF()
        for i in [i for i, _ in self.out] + [i for i, _ in self.into]:
            self._bound = self._bound.united(paint.rects[i].adjusted(-4, -STUB - 14, 4, STUB + 14))
        self._font = QFont()
        self._font.setPointSizeF(7.5)

    def boundingRect(self) -> QRectF:  # noqa: N802 (Qt override)
        return self._bound

    def paint(self, painter, option, widget=None) -> None:
        if option.levelOfDetailFromTransform(painter.worldTransform()) < 0.25:
            return
        p = self.paint_data
        colors = p.colors
        painter.setFont(self._font)
        pen = QPen(colors.edge, 1.2)
        for i, text in self.out:
            r = p.rects[i]
            x, y = r.center().x(), r.bottom()
            painter.setPen(pen)
            painter.drawLine(QPointF(x, y), QPointF(x, y + STUB))
            painter.setPen(colors.subtext)
            painter.drawText(QPointF(x + 4, y + STUB), text)
        for i, text in self.into:
            r = p.rects[i]
            x, y = r.center().x() - r.width() / 4, r.top()
            painter.setPen(pen)
            painter.drawLine(QPointF(x, y - STUB), QPointF(x, y))
            painter.setPen(colors.subtext)
            painter.drawText(QPointF(x + 4, y - STUB + 9), text)


def box_tooltip(box, note: str, kernel_of: dict, decisions=None, vs_eager: str = "") -> str:
    """What a box holds: module, class, nodes (and those between its blocks), kernels,
    for folded blocks whether their fusion decisions agree block to block, and
    ``vs_eager`` (a line of rich text: its time compiled against eager)."""
    lines = [f"<b>{escape(box.title)}</b>"
             + (f" — {escape(box.module_class)}" if box.module_class else "")]
    if box.run is not None:
        lines.append(f"{len(box.run.paths)} blocks of one structure, folded: "
                     + escape(", ".join(box.run.paths)))
        lines += [f"<i>{escape(path)}: {escape(why)}</i>" for path, why in box.run.odd[:4]]
        if len(box.run.odd) > 4:
            lines.append(f"<i>… and {len(box.run.odd) - 4} more blocks differ</i>")
    lines.append(f"{len(box.nodes)} nodes" + (f" ({box.between} between its blocks)"
                                              if box.between else ""))
    if note:
        lines.append(escape(note))
    if decisions is not None:
        lines.append(f"fusion decisions inside one block: {decisions.same} the same in all "
                     f"{decisions.blocks} blocks" + (f", {len(decisions.differ)} differ"
                                                     if decisions.differ else ""))
        for pair, split in decisions.differ[:4]:
            how = "; ".join(f"{escape(o)} in {len(ps)} ({escape(_blocks(ps))})"
                            for o, ps in sorted(split.items(), key=lambda x: -len(x[1])))
            lines.append(f"&nbsp;&nbsp;<b>differs</b> {escape(pair)}: {how}")
    kernels = Counter(kernel_of[m].name for m in box.nodes if m in kernel_of)
    if kernels:
        shown = ", ".join(f"{escape(k)} ×{n}" if n > 1 else escape(k)
                          for k, n in kernels.most_common(6))
        more = f" (+{len(kernels) - 6})" if len(kernels) > 6 else ""
        lines.append(f"{len(kernels)} kernels: {shown}{more}")
    if vs_eager:
        lines.append(vs_eager)
    lines.append("<i>click (or E) to expand</i>")
    return "<br>".join(lines)


def _blocks(paths: tuple[str, ...]) -> str:
    return ", ".join(paths[:3]) + (f" … +{len(paths) - 3}" if len(paths) > 3 else "")
