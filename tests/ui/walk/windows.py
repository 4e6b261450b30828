"""A shown main window with a trace open, for a test module's fixture (several tests
look at one window: it opens once)."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtCore import QSettings


def shown_window(tmp_path_factory, trace: Path, size: tuple[int, int]):
    """Yields a shown main window with ``trace`` open and settings of its own."""
    from fusionviz.ui.main_window import MainWindow

    folder = tmp_path_factory.mktemp("window")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("FUSIONVIZ_DATA_DIR", str(folder / "data"))
        w = MainWindow(settings=QSettings(str(folder / "window.ini"),
                                          QSettings.Format.IniFormat))
        w.resize(*size)
        w.show()
        assert w.open_trace(str(trace))
        yield w
        w.close()
        w.deleteLater()
