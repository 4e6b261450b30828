"""The guide to one pane (F1): what it shows, then its most useful keys."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fusionviz.ui.help.guides import Guide


class GuideDialog(QDialog):
    """Non-modal; ``show_guide`` shows another pane's guide in it."""

    sig_all_keys = Signal()
    """The user asked for every keyboard shortcut (the sheet)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.key = ""
        self.text = QLabel()
        self.text.setTextFormat(Qt.TextFormat.RichText)  # our own text, escaped
        self.text.setOpenExternalLinks(False)
        self.text.setWordWrap(True)
        self.text.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.text.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        all_keys = QPushButton("All Keyboard Shortcuts…")
        all_keys.clicked.connect(self.sig_all_keys)
        close = QPushButton("Close")
        close.setDefault(True)
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(all_keys)
        buttons.addStretch(1)
        buttons.addWidget(close)
        layout = QVBoxLayout(self)
        layout.addWidget(self.text, 1)
        layout.addLayout(buttons)
        self.setMinimumWidth(520)

    def show_guide(self, key: str, guide: Guide, keys: list[tuple[str, str]]) -> None:
        """Show ``guide`` with ``keys`` ((keys, what) rows) under it."""
        self.key = key
        self.setWindowTitle(f"What is this pane? — {guide.title}")
        html = [f"<h3>{escape(guide.title)}</h3>"]
        html += [f"<p>{escape(line)}</p>" for line in guide.lines]
        if keys:
            html.append("<p><b>Keys</b></p><table cellspacing='0' cellpadding='2'>")
            html += [f"<tr><td><b>{escape(k)}</b></td><td>{escape(what)}</td></tr>"
                     for k, what in keys]
            html.append("</table>")
        self.text.setText("".join(html))
        self.adjustSize()
        self.show()
        self.raise_()
        self.activateWindow()
