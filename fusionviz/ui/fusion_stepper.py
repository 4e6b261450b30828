"""Round stepper: slider and previous/next over before fusion → round 1 … → final
→ the passes that reordered the fused nodes, if any.

Presents ``fusionviz.model.fusion_steps``; writes ``ViewState.set_step`` and follows it.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QHBoxLayout, QLabel, QSlider, QStyle, QToolButton, QWidget

from fusionviz.ui.plain import plain
from fusionviz.ui.view_state import ViewState


class FusionStepper(QWidget):
    """|◀ ◀ [slider] ▶ ▶| and the label of the current step."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.state = state
        icon = QStyle.StandardPixmap
        self.first = self._button(icon.SP_MediaSkipBackward, "Before fusion (Home)", self.go_first)
        self.prev = self._button(icon.SP_MediaSeekBackward, "Previous step (←)", self.go_prev)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setPageStep(1)
        self.slider.setTickPosition(QSlider.TickPosition.TicksBelow)
        self.slider.setToolTip("Fusion step")
        self.slider.setMinimumWidth(120)  # stays a slider, not a square, in a narrow window
        self.slider.valueChanged.connect(self.state.set_step)
        self.next = self._button(icon.SP_MediaSeekForward, "Next step (→)", self.go_next)
        self.last = self._button(icon.SP_MediaSkipForward, "Last step: the final kernels, or the last pass that reordered them (End)", self.go_last)
        self.label = plain(QLabel())  # a pass's name is the trace's
        self.label.setFixedWidth(260)  # a width that follows the text re-lays out the row
        row = QHBoxLayout(self)
        row.setContentsMargins(4, 2, 4, 2)
        for w in (self.first, self.prev, self.slider, self.next, self.last, self.label):
            row.addWidget(w)
        row.setStretch(2, 1)
        state.sig_graph_changed.connect(self._on_graph_changed)
        state.sig_step_changed.connect(self._on_step_changed)
        self._on_graph_changed()

    def _button(self, icon, tip: str, slot) -> QToolButton:
        b = QToolButton()
        b.setIcon(self.style().standardIcon(icon))
        b.setToolTip(tip)
        b.setAutoRaise(True)
        b.clicked.connect(slot)
        return b

    @property
    def count(self) -> int:
        return len(self.state.steps)

    def go_first(self) -> None:
        self.state.set_step(0)

    def go_last(self) -> None:
        self.state.set_step(max(0, self.count - 1))

    def go_prev(self) -> None:
        self.state.set_step(max(0, self.state.step - 1))

    def go_next(self) -> None:
        self.state.set_step(min(max(0, self.count - 1), self.state.step + 1))

    def _on_graph_changed(self, *_args) -> None:
        self.slider.blockSignals(True)
        self.slider.setRange(0, max(0, self.count - 1))
        self.slider.blockSignals(False)
        self.setEnabled(self.count > 1)
        self._on_step_changed(self.state.step)

    def _on_step_changed(self, step: int) -> None:
        if self.slider.value() != step:
            self.slider.blockSignals(True)
            self.slider.setValue(step)
            self.slider.blockSignals(False)
        cur, n = self.state.current_step, self.count
        text = f"{cur.label}  ({step + 1}/{n})" if cur is not None else "no graph"
        if cur is not None and cur.fused:
            text += f" · {len(cur.fused)} fused"
        self.label.setText(text)
        self.prev.setEnabled(step > 0)
        self.first.setEnabled(step > 0)
        self.next.setEnabled(step < n - 1)
        self.last.setEnabled(step < n - 1)
