"""A read-only, monospace, syntax-highlighted source view, and the find bar that searches it.

Highlighting follows "lex once, paint per block": ``model.highlight.line_spans``
lexes the whole source once (cached), and ``SpanHighlighter.highlightBlock`` only
looks up the spans of the block Qt asks it to paint.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QRect, Qt
from PySide6.QtGui import (
    QColor,
    QFont,
    QFontDatabase,
    QGuiApplication,
    QKeySequence,
    QPainter,
    QPalette,
    QShortcut,
    QSyntaxHighlighter,
    QTextCharFormat,
    QTextDocument,
)
from PySide6.QtWidgets import QHBoxLayout, QLineEdit, QPlainTextEdit, QToolButton, QWidget

from fusionviz.model.highlight import LineSpans, line_spans

# style key -> (light color, dark color, bold, italic)
THEME = {
    "keyword": ("#8b008b", "#c586c0", True, False),
    "type": ("#1f6f8b", "#4ec9b0", False, False),
    "builtin": ("#795e26", "#dcdcaa", False, False),
    "string": ("#a31515", "#ce9178", False, False),
    "number": ("#098658", "#b5cea8", False, False),
    "comment": ("#6a737d", "#7f8c8d", False, True),
    "preproc": ("#0b6e99", "#9cdcfe", False, False),
    "decorator": ("#af5f00", "#d7ba7d", False, False),
    "name.function": ("#0050a0", "#61afef", True, False),
    "name.class": ("#0050a0", "#61afef", True, False),
    "operator": ("#555555", "#a0a0a0", False, False),
}


def palette_is_dark(palette: QPalette) -> bool:
    """Whether ``palette`` paints text on a dark background."""
    return palette.color(QPalette.ColorRole.Base).lightness() < 128


def theme_formats(dark: bool) -> dict[str, QTextCharFormat]:
    """One QTextCharFormat per style key for a light or dark background."""
    formats = {}
    for key, (light_color, dark_color, bold, italic) in THEME.items():
        fmt = QTextCharFormat()
        fmt.setForeground(QColor(dark_color if dark else light_color))
        if bold:
            fmt.setFontWeight(QFont.Weight.Bold)
        fmt.setFontItalic(italic)
        formats[key] = fmt
    return formats



MAX_SHOWN = 400_000  # characters of kernel source shown (real kernels: well under 100k)

class SpanHighlighter(QSyntaxHighlighter):
    """Paints each block from precomputed spans; never lexes."""

    def __init__(self, document: QTextDocument, dark: bool = False) -> None:
        super().__init__(document)
        self.lines: tuple[LineSpans, ...] = ()
        self.formats = theme_formats(dark)

    def set_lines(self, lines: tuple[LineSpans, ...]) -> None:
        self.lines = lines

    def set_dark(self, dark: bool) -> None:
        self.formats = theme_formats(dark)
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 (Qt override)
        row = self.currentBlock().blockNumber()
        if row >= len(self.lines):
            return
        to_utf16 = _utf16_columns(text)
        for start, length, key in self.lines[row]:
            fmt = self.formats.get(key)
            if fmt is not None:
                begin = to_utf16(start)
                self.setFormat(begin, to_utf16(start + length) - begin, fmt)


def _utf16_columns(text: str) -> Callable[[int], int]:
    """Map str columns to the UTF-16 columns Qt counts in (they differ past U+FFFF)."""
    if all(ord(ch) <= 0xFFFF for ch in text):
        return lambda col: col
    offsets = [0]
    for ch in text:
        offsets.append(offsets[-1] + (2 if ord(ch) > 0xFFFF else 1))
    return lambda col: offsets[min(col, len(text))]


class CodeView(QPlainTextEdit):
    """Read-only source text in a fixed-width font, highlighted by language."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setReadOnly(True)
        self.full_text = ""
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.setTextInteractionFlags(
            Qt.TextInteractionFlag.TextSelectableByMouse
            | Qt.TextInteractionFlag.TextSelectableByKeyboard
        )
        self._highlighter = SpanHighlighter(self.document(), palette_is_dark(self.palette()))
        self._gutter = _Gutter(self)
        self.blockCountChanged.connect(self._fit_gutter)
        self.updateRequest.connect(self._scroll_gutter)
        self._fit_gutter()

    def set_source(self, text: str, language: str) -> None:
        """Show ``text``; ``language`` is one of ``model.highlight.LANGUAGES``. A source
        over MAX_SHOWN characters (a malformed or hostile trace) is cut, and says so:
        highlighting 100 MB would hold the window for minutes."""
        self.full_text = text  # what "Copy Full Source" copies, also when cut below
        if len(text) > MAX_SHOWN:
            cut = text.rfind("\n", 0, MAX_SHOWN)
            text = (text[:cut if cut > 0 else MAX_SHOWN]
                    + f"\n# … cut: {len(text):,} characters, the first {MAX_SHOWN:,} shown;"
                    " right-click: Copy Full Source")
        # Spans first: setPlainText re-highlights every block straight away.
        self._highlighter.set_lines(line_spans(text, language))
        self.setPlainText(text)

    def source(self) -> str:
        return self.toPlainText()

    def copy_full_source(self) -> None:
        QGuiApplication.clipboard().setText(self.full_text)

    def contextMenuEvent(self, event) -> None:  # noqa: N802 (Qt override)
        menu = self.createStandardContextMenu()
        menu.addSeparator()
        whole = menu.addAction(f"Copy Full Source ({len(self.full_text):,} characters)",
                               self.copy_full_source)
        whole.setEnabled(bool(self.full_text))
        menu.exec(event.globalPos())
        menu.deleteLater()

    def find_next(self, pattern: str, backward: bool = False) -> bool:
        """Select the next match of ``pattern`` (case-insensitive), wrapping around."""
        if not pattern:
            return False
        flags = QTextDocument.FindFlag.FindBackward if backward else QTextDocument.FindFlag(0)
        if self.find(pattern, flags):
            return True
        cursor = self.textCursor()
        cursor.movePosition(cursor.MoveOperation.End if backward else cursor.MoveOperation.Start)
        self.setTextCursor(cursor)
        return self.find(pattern, flags)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._highlighter.set_dark(palette_is_dark(self.palette()))

    # -- line-number gutter: a child widget painted from the visible blocks ----------
    def gutter_width(self) -> int:
        digits = len(str(max(1, self.blockCount())))
        return 12 + self.fontMetrics().horizontalAdvance("9") * digits

    def _fit_gutter(self, _count: int = 0) -> None:
        self.setViewportMargins(self.gutter_width(), 0, 0, 0)

    def _scroll_gutter(self, rect: QRect, dy: int) -> None:
        if dy:
            self._gutter.scroll(0, dy)
        else:
            self._gutter.update(0, rect.y(), self._gutter.width(), rect.height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        cr = self.contentsRect()
        self._gutter.setGeometry(QRect(cr.left(), cr.top(), self.gutter_width(), cr.height()))

    def paint_gutter(self, painter: QPainter, exposed: QRect) -> None:
        painter.fillRect(exposed, self.palette().color(QPalette.ColorRole.AlternateBase))
        painter.setPen(self.palette().color(QPalette.ColorRole.PlaceholderText))
        block = self.firstVisibleBlock()
        top = round(self.blockBoundingGeometry(block).translated(self.contentOffset()).top())
        width, height = self._gutter.width() - 6, self.fontMetrics().height()
        while block.isValid() and top <= exposed.bottom():
            if block.isVisible() and top + height >= exposed.top():
                painter.drawText(0, top, width, height, Qt.AlignmentFlag.AlignRight,
                                 str(block.blockNumber() + 1))
            top += round(self.blockBoundingRect(block).height())
            block = block.next()


class _Gutter(QWidget):
    """The line-number strip left of a CodeView's text."""

    def __init__(self, view: CodeView) -> None:
        super().__init__(view)
        self._view = view

    def paintEvent(self, event) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        self._view.paint_gutter(painter, event.rect())


def local_shortcut(keys: QKeySequence, widget: QWidget, action: Callable[[], object]) -> QShortcut:
    """A shortcut active only while focus is inside ``widget``.

    Window-wide duplicates (several docks binding Ctrl+F or Esc) are ambiguous to
    Qt, which then fires none of them.
    """
    shortcut = QShortcut(keys, widget)
    shortcut.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    shortcut.activated.connect(action)
    return shortcut


class FindBar(QWidget):
    """A one-line search box for a code view: Enter = next, Shift+Enter = previous."""

    def __init__(self, target: Callable[[], CodeView], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._target = target
        self.edit = QLineEdit(self)
        self.edit.setPlaceholderText("Find in source")
        self.edit.setClearButtonEnabled(True)
        self.edit.returnPressed.connect(lambda: self.find(backward=False))
        local_shortcut(QKeySequence("Shift+Return"), self.edit, lambda: self.find(backward=True))
        local_shortcut(QKeySequence(Qt.Key.Key_Escape), self, self.hide)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(2, 2, 2, 2)
        layout.addWidget(self.edit)
        for text, tip, backward in (("▲", "Previous match", True), ("▼", "Next match", False)):
            button = QToolButton(self, text=text, toolTip=tip, autoRaise=True)
            button.clicked.connect(lambda _=False, b=backward: self.find(backward=b))
            layout.addWidget(button)
        close = QToolButton(self, text="✕", toolTip="Close (Esc)", autoRaise=True)
        close.clicked.connect(self.hide)
        layout.addWidget(close)

    def open(self) -> None:
        """Show the bar with the search text selected, ready for typing."""
        self.show()
        self.edit.setFocus()
        self.edit.selectAll()

    def find(self, backward: bool = False) -> bool:
        found = self._target().find_next(self.edit.text(), backward)
        # A reddish box says "no match" without a status bar of our own.
        self.edit.setStyleSheet("" if found or not self.edit.text() else "background: #f4c7c3")
        return found
