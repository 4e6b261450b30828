"""Start the GUI: create the QApplication, show the main window, open what was asked.

``fusionviz`` alone captures the bundled example; ``fusionviz SCRIPT.py`` captures a
script; ``fusionviz TRACE`` opens a recorded trace; ``fusionviz DIR`` opens the
comparison of an experiment folder (``fusionviz experiment … -o DIR``).
"""

from __future__ import annotations

import sys

from PySide6.QtCore import QCoreApplication, QEvent, QTimer
from PySide6.QtWidgets import QApplication

from fusionviz.model.run import runner
from fusionviz.ui.main_window import MainWindow
from fusionviz.ui.run.quit_signals import QuitOnSignal


def make_app() -> QApplication:
    app = QApplication.instance() or QApplication(sys.argv[:1])
    QCoreApplication.setOrganizationName("fusionviz")
    QCoreApplication.setApplicationName("fusionviz")
    return app


def start(window: MainWindow, argv_path: str | None, capture_options: dict | None,
          graph: int = 0) -> None:
    """Open ``argv_path`` in ``window`` (a trace on its graph ``graph``), or capture the
    bundled example when None."""
    options = capture_options or {}
    if argv_path is None:
        window.run_script(runner.default_example(), **options)
    else:
        window.open_path(argv_path, options, graph)


def run_app(argv_path: str | None, *, capture_options: dict | None = None,
            graph: int = 0) -> int:
    """Show the explorer and run the event loop; returns the exit code."""
    app = make_app()
    window = MainWindow()
    window.show()
    signals = QuitOnSignal(window)  # SIGTERM, Ctrl+C: closed as by its close button
    # After the loop starts, so the window paints before a capture or a big load.
    QTimer.singleShot(0, lambda: start(window, argv_path, capture_options, graph))
    code = app.exec()
    signals.uninstall()
    # Delete the window (and its pyqtgraph plots) while Qt is still alive: a plot left
    # for interpreter shutdown can crash PySide6 6.11 on exit.
    window.deleteLater()
    app.sendPostedEvents(None, QEvent.Type.DeferredDelete)
    return code
