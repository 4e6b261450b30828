"""Shared fixtures of the Qt tests: isolated QSettings and the traces to open.

Every test gets its own QSettings location, so no test reads or writes the user's
recent files or window layout, and no test depends on another's leftovers.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import QCoreApplication, QEvent, QSettings
from PySide6.QtWidgets import QDialog, QFileDialog, QInputDialog, QMessageBox

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import save_trace

DATA = Path(__file__).resolve().parents[1] / "data"
RECORDED = sorted(DATA.glob("*.json.gz"))

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory, monkeypatch):
    """QSettings() of the code under test writes to a fresh temporary folder, and so do
    captures started from the window (``FUSIONVIZ_DATA_DIR``)."""
    folder = tmp_path_factory.mktemp("settings")
    monkeypatch.setenv("FUSIONVIZ_DATA_DIR", str(folder / "data"))
    monkeypatch.delenv("FUSIONVIZ_EDITOR", raising=False)
    for fmt in (QSettings.Format.NativeFormat, QSettings.Format.IniFormat):
        QSettings.setPath(fmt, QSettings.Scope.UserScope, str(folder))
        QSettings.setPath(fmt, QSettings.Scope.SystemScope, str(folder / "system"))
    QCoreApplication.setOrganizationName("fusionviz-tests")
    QCoreApplication.setApplicationName("fusionviz-tests")
    yield folder


@pytest.fixture(autouse=True)
def no_window_of_an_earlier_test():
    """pytest-qt closes a test's widgets and deletes them later, but outside an event
    loop that never comes until a test waits (qtbot.waitUntil, waitSignal): a dialog
    the window had open (Why not fused?, an error box) stays on screen meanwhile. A
    test run after it on the same worker then sends its mouse to that dialog, not to
    its own window (a hover test's tooltip never came under two test workers). The
    deletions are done before each test."""
    if QCoreApplication.instance() is not None:
        QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)


MODAL = ((QDialog, "exec"), (QMessageBox, "exec"), (QMessageBox, "question"),
         (QMessageBox, "warning"), (QMessageBox, "critical"), (QMessageBox, "information"),
         (QInputDialog, "getText"), (QInputDialog, "getItem"), (QInputDialog, "getInt"),
         (QFileDialog, "getOpenFileName"), (QFileDialog, "getSaveFileName"),
         (QFileDialog, "getExistingDirectory"))


@pytest.fixture(autouse=True)
def no_modal_dialogs(monkeypatch):
    """A modal dialog waits for a click no test gives: under pytest it would block the
    event loop (and SIGALRM's timeout with it) until CI's limit. Opening one fails the
    test at once, naming the dialog; a test that means to answer one patches the window
    method that asks (``window.confirm_outside = ...``)."""
    for cls, name in MODAL:
        def refuse(*args, _what=f"{cls.__name__}.{name}", **kwargs):
            texts = [a for a in args if isinstance(a, str)]
            if args and isinstance(args[0], QMessageBox):
                texts.append(args[0].text())
            raise AssertionError(f"a modal {_what} opened in a test: {texts}")
        monkeypatch.setattr(cls, name, refuse)


@pytest.fixture
def settings(isolated_settings) -> QSettings:
    return QSettings(str(isolated_settings / "window.ini"), QSettings.Format.IniFormat)


@pytest.fixture
def window(qtbot, settings):
    """A shown main window with its own settings."""
    from fusionviz.ui.main_window import MainWindow

    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.resize(1400, 900)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture(scope="session")
def synthetic_path(tmp_path_factory) -> Path:
    """A 300-node synthetic trace with three rounds, saved like a recorded one."""
    path = tmp_path_factory.mktemp("traces") / "synthetic_300.json.gz"
    save_trace(synthetic_trace(300, seed=3, rounds=3), path)
    return path


@pytest.fixture(params=[*(p.name for p in RECORDED), "synthetic"])
def any_trace_path(request, synthetic_path) -> Path:
    """Each recorded trace in tests/data, and the synthetic trace."""
    return synthetic_path if request.param == "synthetic" else DATA / request.param

