"""A line above a view saying that the part of the trace it shows does not hold
together (``fusionviz.model.validate``): a node that is nowhere, a NaN time, an
unknown outcome. The view still shows what it can; Notices lists every problem, and a
click on the strip brings Notices to the front.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from fusionviz.model.report.formatting import clip
from fusionviz.ui.plain import plain

MAX_CHARS = 300  # of the first problem shown; the rest is in Notices

_STYLE = ("QLabel { background: #fff3cd; color: #5c4300; border-bottom: 1px solid #e6c96b;"
          " padding: 3px 8px; }")


class ProblemStrip(QLabel):
    """``⚠ <subject> does not hold together: <first problem> (+n more in Notices)``;
    hidden when there is none."""

    sig_clicked = Signal()

    def __init__(self, subject: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.subject = subject
        plain(self)  # the problem names what the trace holds
        self.setWordWrap(True)
        self.setStyleSheet(_STYLE)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        self.setToolTip("Every problem of the trace is listed in Notices (click)")
        self.lines: list[str] = []
        self.hide()

    def set_problems(self, lines: list[str]) -> None:
        self.lines = list(lines)
        if not lines:
            self.clear()
            self.hide()
            return
        more = (f" (+{len(lines) - 1} more in Notices)" if len(lines) > 1
                else " (see Notices)")
        self.setText(f"⚠ {self.subject} does not hold together: "
                     f"{clip(lines[0], MAX_CHARS)}{more}")
        self.show()

    def mousePressEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.sig_clicked.emit()
        super().mousePressEvent(event)


class WithStrip(QWidget):
    """A pane with its problem strip above it (a dock's widget); ``pane`` is the pane."""

    def __init__(self, pane: QWidget, strip: ProblemStrip) -> None:
        super().__init__()
        self.pane, self.strip = pane, strip
        box = QVBoxLayout(self)
        box.setContentsMargins(0, 0, 0, 0)
        box.setSpacing(0)
        box.addWidget(strip)
        box.addWidget(pane, 1)
