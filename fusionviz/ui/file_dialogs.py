"""File dialogs that start where the user was: in the folder last used in any of them
(kept in the window's settings), else in the folder fusionviz was started from (where
``./dev app`` was typed), never in fusionviz's own folder."""

from __future__ import annotations

import os

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QFileDialog, QWidget

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
