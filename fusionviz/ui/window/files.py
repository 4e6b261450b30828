"""The window's file commands: open a trace, save it as, recent files, drag and drop,
a source line in the user's editor."""

from __future__ import annotations

import os

from PySide6.QtWidgets import QInputDialog, QMessageBox

from fusionviz.model.tracefile.save_as import save_trace_as
from fusionviz.ui import desktop, editor
from fusionviz.ui.plain import plain

MAX_RECENT = 10
TRACE_FILTER = "fusionviz traces (*.json *.json.gz *.gz);;All files (*)"


class FileCommands:
    """``MainWindow``'s part that opens and saves files (a mixin: it uses the window's
    state, settings, open_trace, open_path and show_error)."""

    def open_trace_dialog(self) -> None:
        path = desktop.open_file(self, self.settings, "Open trace", TRACE_FILTER)
        if path:
            self.open_trace(path)

    def save_trace_as_dialog(self) -> None:
        if not self.state.path:
            self.show_error("No trace is open: open or capture one first.")
            return
        name = os.path.basename(self.state.path)
        path = desktop.save_file(self, self.settings, "Save trace as", name, TRACE_FILTER)
        if path:
            self.save_trace_as(path)

    def save_trace_as(self, path: str) -> bool:
        """Copy the open trace to ``path`` (compressed or not by its suffix)."""
        try:
            save_trace_as(self.state.path, path)
        except OSError as e:
            self.show_error(f"Cannot save the trace to {path}: {e.strerror or e}.\n\n"
                            "Choose another folder or free some space.")
            return False
        self.add_recent(path)
        self.statusBar().showMessage(f"trace saved as {path}", 10000)
        return True

    def open_source(self, file: str, line: int) -> bool:
        """Open a source line of the script in the user's editor (File ▸ Editor Command…)."""
        trace = self.state.trace
        problem = editor.open_source(file, line, trace.script.path if trace else "",
                                     self.settings, confirm=self.confirm_outside)
        if problem:
            self.show_error(problem)
        return not problem

    def confirm_outside(self, path: str) -> bool:
        """Whether to open a source file the trace names outside its script's folder."""
        box = QMessageBox(QMessageBox.Icon.Question, "fusionviz",
                          f"Open a file outside the captured script's folder?\n\n{path}",
                          QMessageBox.StandardButton.Open | QMessageBox.StandardButton.Cancel,
                          self)
        plain(box)  # the path comes from the trace
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        return box.exec() == QMessageBox.StandardButton.Open

    def editor_dialog(self) -> None:
        command, ok = QInputDialog.getText(
            self, "Editor command", "Command that opens a source line ({file} and {line} "
            f"are filled in; empty: the desktop's default):\n{editor.EXAMPLES}",
            text=editor.editor_command(self.settings))
        if ok:
            editor.set_editor_command(command, self.settings)

    def recent_files(self) -> list[str]:
        value = self.settings.value("recent", [])
        return [value] if isinstance(value, str) else list(value or [])

    def add_recent(self, path: str) -> None:
        path = os.path.abspath(path)
        recent = [path] + [p for p in self.recent_files() if p != path]
        self.settings.setValue("recent", recent[:MAX_RECENT])

    def dragEnterEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if event.mimeData().hasUrls():
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802 (Qt override)
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                break
