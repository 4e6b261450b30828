"""Where the window meets the desktop: file dialogs and the clipboard.

- File dialogs start where the user was: in the folder last used in any of them (kept
  in the window's settings), else in the folder fusionviz was started from (where
  ``./dev app`` was typed), never in fusionviz's own folder.
- Every table and tree copies whole rows (``add_row_copy``): Ctrl+C and a right-click
  "Copy Selected Rows" put the selected rows on the clipboard, tab-separated under a
  header line, as a spreadsheet or a chat message takes them.
- A tree in a dock too narrow for its columns shows those that fit whole
  (``ColumnFit``): a column cut at the dock's edge reads as a broken word ("fus").
- A pane behind another dock's tab does its costly work when its tab comes to the
  front (``WhenOnScreen``).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from PySide6.QtCore import (
    QEvent,
    QModelIndex,
    QObject,
    QSettings,
    QSortFilterProxyModel,
    Qt,
)
from PySide6.QtGui import QAction, QGuiApplication, QKeySequence
from PySide6.QtWidgets import QAbstractItemView, QFileDialog, QTreeView, QWidget

KEY = "dialogs/last_folder"


def start(settings: QSettings, name: str = "") -> str:
    """The folder a dialog starts in, with ``name`` (a file name to suggest) in it."""
    folder = str(settings.value(KEY, "") or "")
    folder = folder if os.path.isdir(folder) else os.getcwd()
    return os.path.join(folder, name) if name else folder


def _remember(settings: QSettings, path: str, folder: bool = False) -> str:
    if path:
        settings.setValue(KEY, path if folder else os.path.dirname(os.path.abspath(path)))
    return path


def open_file(parent: QWidget, settings: QSettings, title: str, filters: str) -> str:
    path, _ = QFileDialog.getOpenFileName(parent, title, start(settings), filters)
    return _remember(settings, path)


def save_file(parent: QWidget, settings: QSettings, title: str, name: str,
              filters: str) -> str:
    path, _ = QFileDialog.getSaveFileName(parent, title, start(settings, name), filters)
    return _remember(settings, path)


def open_folder(parent: QWidget, settings: QSettings, title: str) -> str:
    return _remember(settings, QFileDialog.getExistingDirectory(
        parent, title, start(settings)), folder=True)


def rows_text(view: QAbstractItemView) -> str:
    """The selected rows of ``view`` (every column, as shown), tab-separated, under the
    column titles; a tree's child rows indented by their depth."""
    model = view.model()
    indexes = view.selectionModel().selectedIndexes() if view.selectionModel() else []
    rows = sorted({(_path(i), i.siblingAtColumn(0)) for i in indexes}, key=lambda r: r[0])
    if not rows:
        return ""
    columns = range(model.columnCount())
    head = [str(model.headerData(c, Qt.Orientation.Horizontal) or "") for c in columns]
    lines = ["\t".join(head)]
    for path, first in rows:
        cells = [_cell(first.siblingAtColumn(c)) for c in columns]
        cells[0] = "  " * (len(path) - 1) + cells[0]
        lines.append("\t".join(cells))
    return "\n".join(lines)


def _path(index: QModelIndex) -> tuple[int, ...]:
    """Rows from the top of a tree down to ``index``'s: the order rows are shown in."""
    path = []
    while index.isValid():
        path.append(index.row())
        index = index.parent()
    return tuple(reversed(path))


def _cell(index: QModelIndex) -> str:
    text = index.data(Qt.ItemDataRole.DisplayRole)
    return "" if text is None else " ".join(str(text).split())  # one line per row


def refilter(proxy: QSortFilterProxyModel, change: Callable[[], None]) -> None:
    """Apply ``change`` (new filter settings) to ``proxy`` and filter its rows again:
    between begin/endFilterChange on Qt >= 6.10 (invalidateFilter is deprecated there),
    followed by invalidateFilter before."""
    if hasattr(proxy, "beginFilterChange"):
        proxy.beginFilterChange()
        change()
        proxy.endFilterChange(QSortFilterProxyModel.Direction.Rows)
    else:
        change()
        proxy.invalidateFilter()


def add_row_copy(view: QAbstractItemView, menu: bool = True) -> QAction:
    """Ctrl+C on ``view`` copies its selected rows; with ``menu`` (a view without a
    context menu of its own) its right-click menu offers the same. The action, for a
    view whose own context menu should list it too."""
    action = QAction("Copy Selected Rows", view)
    action.setShortcut(QKeySequence.StandardKey.Copy)
    action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
    action.triggered.connect(lambda: QGuiApplication.clipboard().setText(rows_text(view)))
    view.addAction(action)
    if menu:
        view.setContextMenuPolicy(Qt.ContextMenuPolicy.ActionsContextMenu)
    return action


class ColumnFit(QObject):
    """Keeps a tree's columns as wide as their texts and hides, in order, those after
    the first ``always`` that do not fit its width whole; ``elastic`` (a column, its
    widest) is a column of long texts that takes at most what the width leaves it,
    eliding them. ``on_fit(hidden columns)`` follows each fit (to put their values in
    a tooltip). Fits again whenever the tree's width changes."""

    def __init__(self, view: QTreeView, always: int = 1,
                 elastic: tuple[int, int] | None = None,
                 on_fit: Callable[[list[int]], None] | None = None) -> None:
        super().__init__(view)
        self.view, self.always, self.elastic, self.on_fit = view, always, elastic, on_fit
        self.hidden: list[int] = []
        view.viewport().installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt)
        if event.type() == QEvent.Type.Resize:  # the dock, or a scroll bar came or went
            self.fit()
        return False

    def fit(self) -> None:
        view, header = self.view, self.view.header()
        columns = range(header.count())
        for c in columns:  # a hidden column's title measures 0
            view.setColumnHidden(c, False)
        room, used, hidden = view.viewport().width(), 0, []
        for c in columns:
            width = max(view.sizeHintForColumn(c), header.sectionSizeHint(c))
            if self.elastic is not None and c == self.elastic[0]:
                least = header.sectionSizeHint(c)  # its title whole
                width = min(width, self.elastic[1], max(room - used, least))
                view.setColumnWidth(c, width)
            if c >= self.always and (hidden or used + width > room):
                hidden.append(c)
                view.setColumnHidden(c, True)
            else:
                used += width
        self.hidden = hidden
        if self.on_fit is not None:
            self.on_fit(hidden)


class WhenOnScreen:
    """Work a pane does only while its dock is in front: asked for while the dock is
    behind another tab, it is done when the tab comes to the front (connect the dock's
    visibilityChanged to ``set_on_screen``: a widget behind a tab says it is visible)."""

    def __init__(self, work: Callable[[], None]) -> None:
        self.work, self.on_screen, self.stale = work, True, False

    def request(self) -> bool:
        """Do the work now when on screen (True), else once shown (False)."""
        self.stale = not self.on_screen
        if not self.stale:
            self.work()
        return not self.stale

    def set_on_screen(self, on: bool) -> None:
        self.on_screen = on
        if on and self.stale:
            self.stale = False
            self.work()
