"""The window's run commands: capture a script (on one rank or several), re-run it,
and what the window shows while a run goes and when it ends."""

from __future__ import annotations

import os

from PySide6.QtWidgets import QInputDialog

from fusionviz.model.report.script_status import script_failure
from fusionviz.ui import desktop
from fusionviz.ui.run.controller import CAPTURE, RANKS


class RunCommands:
    """``MainWindow``'s part that starts runs (a mixin: it uses the window's runner,
    progress, output, state, graph_view, settings, open_trace and show_error)."""

    def open_script_dialog(self) -> None:
        path = desktop.open_file(self, self.settings, "Open script", "Python (*.py)")
        if path:
            self.run_script(path)

    def run_script(self, script: str, **options) -> bool:
        """Capture ``script`` (options as ``runner.capture_argv`` takes them)."""
        if not self.start_run(script, "capturing", **options):
            return False
        self._last_script = (script, options)
        self.add_recent(script)
        return True

    def start_run(self, script: str, doing: str, **options) -> bool:
        """Start a child run (a capture, or ``job=EXPERIMENT``) with its progress shown;
        False, and why, when one is running already."""
        if self.runner.running:
            self.show_error("A capture or experiment is running; cancel it first (Esc).")
            return False
        self.output.clear()
        self.progress.started(script, doing)
        try:
            self.runner.start(script, **options)
        except OSError as e:  # the data folder cannot be written, …
            self.progress.stop()
            self.show_error(f"Cannot start the run: {e.strerror or e}.\n\n"
                            "Check that the data folder (FUSIONVIZ_DATA_DIR) is writable.")
            return False
        return True

    def capture_options_of(self, script: str) -> dict:
        """The options ``script`` was last captured with in this session ({} if never)."""
        last, options = self._last_script
        same = bool(last) and os.path.abspath(last) == os.path.abspath(script)
        return dict(options) if same else {}

    def rerun(self) -> None:
        script, options = self._last_script
        if script:
            self.run_script(script, **options)

    def capture_ranks_dialog(self) -> None:
        """Capture a script that calls torch.distributed on N ranks (torchrun)."""
        path = desktop.open_file(self, self.settings, "Capture script on several ranks",
                                 "Python (*.py)")
        if not path:
            return
        n, ok = QInputDialog.getInt(self, "Ranks", "Processes (torchrun --nproc-per-node):",
                                    2, 2, 64)
        if ok:
            self.capture_ranks(path, n)

    def capture_ranks(self, script: str, nproc: int, **options) -> bool:
        """Every rank captured into a folder of the data folder; its comparison opens
        when the job ends."""
        return self.start_run(script, f"capturing {nproc} ranks of", job=RANKS, nproc=nproc,
                              **options)

    def _on_progress_text(self, text: str) -> None:
        if self.state.graph is None:
            self.graph_view.set_message(f"{text}\n\n(Esc cancels; the graphs captured so far "
                                        "are kept)")

    def _on_run_finished(self, path: str) -> None:
        if self.runner.job is not CAPTURE:
            return  # an experiment: ExperimentActions opens its comparison
        problem = self.runner.write_problem
        if not self.open_trace(path):
            return
        script = self.state.trace.script
        if problem:  # the file holds its last good state, not how the run ended
            self.show_error(f"The trace could not be written to the end ({problem}). "
                            f"Shown: what {path} held before that.")
        elif script.status not in ("ok", "running"):
            self.show_error(script_failure(script, len(self.state.trace.graphs)))

    def _on_run_failed(self, message: str) -> None:
        if self.state.graph is None:  # not the progress of a run that is over
            self.graph_view.set_message(message.split("\n\n")[0])
        self.show_error(message)
