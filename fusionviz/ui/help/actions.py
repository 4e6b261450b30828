"""The Help menu's commands (``menus.menu_entries`` binds them): the shortcut sheet,
the guide to the focused pane, the README and About."""

from __future__ import annotations

import os
from importlib import metadata
from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QApplication, QWidget

import fusionviz
from fusionviz.ui.help.about import AboutDialog
from fusionviz.ui.help.guides import GUIDES, pane_of
from fusionviz.ui.help.pane_guide import GuideDialog
from fusionviz.ui.help.sheet import ShortcutSheet
from fusionviz.ui.help.shortcuts import keys_text, plain_text, window_shortcuts


def readme_path() -> Path | None:
    """README.md of the source checkout this fusionviz runs from (None when installed)."""
    root = Path(fusionviz.__file__).resolve().parents[1]
    readme = root / "README.md"
    return readme if readme.is_file() and (root / "pyproject.toml").is_file() else None


def docs_url() -> QUrl | None:
    """The local README, else the project's page from the installed package's metadata."""
    readme = readme_path()
    if readme is not None:
        return QUrl.fromLocalFile(str(readme))
    try:
        meta = metadata.metadata("fusionviz")
    except metadata.PackageNotFoundError:
        return None
    urls = [u.split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
    urls += [meta["Home-page"]] if meta.get("Home-page") else []
    return QUrl(urls[0]) if urls else None


class HelpActions:
    """Help for ``window`` (the main window): one sheet, guide and About at a time."""

    def __init__(self, window) -> None:
        self.window = window
        self.sheet: ShortcutSheet | None = None
        self.guide: GuideDialog | None = None
        self.about: AboutDialog | None = None

    def show_shortcuts(self) -> ShortcutSheet:
        if self.sheet is None:
            self.sheet = ShortcutSheet(self.window)
        self.sheet.set_rows(window_shortcuts(self.window))  # what the window has now
        self.sheet.open_sheet()
        return self.sheet

    def show_pane_guide(self, widget: QWidget | None = None) -> GuideDialog:
        """The guide to the pane holding ``widget`` (by default the focused one)."""
        key = pane_of(self.window, widget or QApplication.focusWidget())
        if self.guide is None:
            self.guide = GuideDialog(self.window)
            self.guide.sig_all_keys.connect(self.show_shortcuts)
        self.guide.show_guide(key, GUIDES[key], self.pane_keys(key))
        return self.guide

    def pane_keys(self, key: str) -> list[tuple[str, str]]:
        """(keys, what) worth knowing in pane ``key``: the actions its guide names, the
        keys the pane binds itself, and the one that shows or hides it; a key once (the
        first of these that has it)."""
        actions = self.window.actions_by_name
        rows = [(keys_text(actions[name]), plain_text(actions[name].text()))
                for name in GUIDES[key].actions]
        rows += [(r.keys, r.command) for r in window_shortcuts(self.window) if key in r.panes]
        dock = next((d for d in self.window.docks.values() if d.objectName() == key), None)
        if dock is not None and keys_text(dock.toggleViewAction()):
            rows.append((keys_text(dock.toggleViewAction()), "Show or hide this pane"))
        listed: dict[str, str] = {}
        for k, what in rows:
            if k:
                listed.setdefault(k, what)
        return list(listed.items())

    def open_docs(self) -> bool:
        """Open the README (the desktop's viewer for it) or the project's page."""
        url = docs_url()
        if url is None:
            self.window.show_error("No README.md here, and the installed fusionviz names "
                                   "no project page.")
            return False
        if not QDesktopServices.openUrl(url):
            where = url.toLocalFile() or url.toString()
            self.window.show_error(f"Nothing on this desktop opens {where}.\n\n"
                                   f"Open it yourself: {where}")
            return False
        self.window.statusBar().showMessage(f"Opened {url.toDisplayString()}", 5000)
        return True

    def show_about(self) -> AboutDialog:
        state = self.window.state
        if self.about is not None:  # the open trace may have changed: a new one
            self.about.close()
            self.about.deleteLater()
        name = os.path.basename(state.path) if state.path else ""
        env = dict(state.trace.env) if state.trace is not None else None
        self.about = AboutDialog(name, env, self.window)
        self.about.show()
        return self.about
