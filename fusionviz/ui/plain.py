"""The one rule for text from a trace on screen: Qt shows it as it is, never as markup.

A trace is a file people send each other, so a node, kernel or module name, a path or
a message in it may hold ``<img src=…>``, ``<a href=…>`` or ``<b>``. Qt renders a
label's, a tooltip's and a message box's text as rich text whenever
``Qt::mightBeRichText`` guesses so (a known tag before the first line's end): a
tag-shaped name would load a local image, draw a link the user can click, or restyle
the text around it (#19). So every text from a trace reaches Qt through one of these:

- ``tip(text)``: any tooltip (``setToolTip``, an item model's ``ToolTipRole``, a
  QAction, a graphics item): a text holding ``<`` or ``&`` escaped inside rich text of
  our own (line breaks and spacing kept), any other left as it is (Qt shows it plain);
- ``plain(widget)``: a QLabel or QMessageBox that shows its text as plain text (and
  follows no link);
- ``html.escape``: each piece of trace text inside rich text a view builds itself for
  its own formatting (bold, colours);
- ``SafeBrowser``: a QTextBrowser that loads no image or other resource and follows no
  link by itself (the view handles ``anchorClicked`` for links of its own);
- ``menu_text(text)``: a name as a menu entry, its ``&`` shown rather than taken as the
  entry's shortcut key.
"""

from __future__ import annotations

from html import escape
from typing import TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor, QTextDocument
from PySide6.QtWidgets import QLabel, QMessageBox, QTextBrowser, QWidget

from fusionviz.model.report.formatting import MAX_TEXT, clip

TIP_CHARS = 4 * MAX_TEXT  # characters of one tooltip; a hostile trace's name has millions

_Shown = TypeVar("_Shown", QLabel, QMessageBox)


def tip(text: str, *, rich: bool = False) -> str:
    """``text`` as a tooltip that Qt shows literally.

    A text holding ``<`` or ``&`` is escaped inside rich text that keeps its newlines
    and runs of spaces; any other text is returned as it is (at most ``TIP_CHARS``
    characters): Qt takes a text for rich text only for a tag or an ``&lt;``, so it
    shows that one as plain text already, exactly as written. ``rich``: always the
    rich form (for tips that something else joins into one tooltip)."""
    text = clip(text, TIP_CHARS)
    if not rich and "<" not in text and "&" not in text:
        return text
    return f"<p style='white-space:pre-wrap'>{escape(text, quote=False)}</p>"


def plain(widget: _Shown) -> _Shown:
    """``widget`` (a QLabel or QMessageBox) set to show its text as plain text: no tag
    in it is rendered, no image loaded, no link followed. Returns ``widget``."""
    widget.setTextFormat(Qt.TextFormat.PlainText)
    # a QMessageBox opens links in its text with the desktop's handler: not these
    for label in (widget, *widget.findChildren(QLabel)):
        if isinstance(label, QLabel):
            label.setOpenExternalLinks(False)
    return widget


def menu_text(text: str) -> str:
    """``text`` as a QAction's or menu's text: ``&`` doubled, so it is shown."""
    return text.replace("&", "&&")


class SafeBrowser(QTextBrowser):
    """A QTextBrowser for documents holding text from a trace (or an experiment's
    report): no ``<img>`` or Markdown image is loaded, whatever its source, and no link
    is followed by the browser itself (connect ``anchorClicked`` to handle links of
    the view's own)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setOpenLinks(False)
        self.setOpenExternalLinks(False)

    def loadResource(self, kind: int, name) -> object:  # noqa: N802 (Qt override)
        return None  # nothing from the disk or the network: an image stays a placeholder

    def set_markdown(self, text: str) -> None:
        """Show Markdown (GitHub's dialect) with any raw HTML in it as text, and its
        links as the text they stand on (not links)."""
        features = (QTextDocument.MarkdownFeature.MarkdownDialectGitHub
                    | QTextDocument.MarkdownFeature.MarkdownNoHTML)
        document = self.document()
        document.setMarkdown(text, features)
        _unlink(document)


def _unlink(document: QTextDocument) -> None:
    """Every link of ``document`` made plain text (tables' cells included)."""
    cursor = QTextCursor(document)
    block = document.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            look = fragment.charFormat()
            if fragment.isValid() and look.isAnchor():
                look.setAnchor(False)
                look.setAnchorHref("")
                look.clearForeground()
                cursor.setPosition(fragment.position())
                cursor.setPosition(fragment.position() + fragment.length(),
                                   QTextCursor.MoveMode.KeepAnchor)
                cursor.setCharFormat(look)
            it += 1
        block = block.next()
