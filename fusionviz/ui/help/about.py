"""About fusionviz: the versions it runs with, and those the open trace was recorded
with (its ``env``), with a Copy button for bug reports.

The window never imports torch: the torch installed here is read from its package
metadata, and labelled as such (a trace may come from another machine's torch).
"""

from __future__ import annotations

import platform
from importlib import metadata

import PySide6
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from fusionviz import __version__
from fusionviz.model.report.formatting import clip
from fusionviz.ui.plain import menu_text, plain

TRACE_ENV = (("torch", "torch"), ("Triton", "triton"), ("CUDA", "cuda"),
             ("Device", "device_name"), ("Python", "python"), ("Platform", "platform"))
MAX_VALUE = 200  # characters of one value from a trace


def installed(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def app_versions() -> list[tuple[str, str]]:
    """What this fusionviz runs with."""
    return [("fusionviz", __version__), ("Python", platform.python_version()),
            ("PySide6", PySide6.__version__), ("Qt", qVersion()),
            ("pyqtgraph", installed("pyqtgraph")), ("Pygments", installed("pygments")),
            ("NumPy", installed("numpy")), ("torch (installed here)", installed("torch")),
            ("Platform", platform.platform())]


def trace_versions(env: dict) -> list[tuple[str, str]]:
    """What the trace says it was recorded with (the fields it has)."""
    env = {**env, "device_name": env.get("device_name") or env.get("device")}
    return [(label, clip(str(env[key]), MAX_VALUE)) for label, key in TRACE_ENV
            if env.get(key) not in (None, "")]


def versions_text(trace_name: str, env: dict | None) -> str:
    """Everything About shows, as text to paste into a bug report."""
    lines = [f"{label}: {value}" for label, value in app_versions()]
    if env is not None:
        lines += ["", f"Open trace {trace_name} was recorded with:"]
        lines += [f"  {label}: {value}" for label, value in trace_versions(env)]
    return "\n".join(lines)


class AboutDialog(QDialog):
    """Versions here and of the open trace (``env`` None: no trace open)."""

    def __init__(self, trace_name: str, env: dict | None, parent: QWidget | None = None):
        super().__init__(parent)
        self.setWindowTitle("About fusionviz")
        self.text = versions_text(trace_name, env)
        layout = QVBoxLayout(self)
        head = QLabel(f"<h3>fusionviz {__version__}</h3>"
                      "<p>See how PyTorch Inductor fuses your program into kernels, and why.</p>")
        layout.addWidget(head)
        layout.addWidget(_group("This installation", app_versions()))
        if env is not None:
            name = menu_text(clip(trace_name, 80))  # a group box takes & for a mnemonic
            layout.addWidget(_group(f"The open trace ({name}) was recorded with",
                                    trace_versions(env)))
        copy = QPushButton("Copy")
        copy.setToolTip("Copy these versions as text (for a bug report)")
        copy.clicked.connect(self.copy)
        self.copied = QLabel()
        close = QPushButton("Close")
        close.setDefault(True)
        close.clicked.connect(self.close)
        buttons = QHBoxLayout()
        buttons.addWidget(copy)
        buttons.addWidget(self.copied, 1)
        buttons.addWidget(close)
        layout.addLayout(buttons)

    def copy(self) -> None:
        QGuiApplication.clipboard().setText(self.text)
        self.copied.setText("copied")


def _group(title: str, rows: list[tuple[str, str]]) -> QGroupBox:
    box = QGroupBox(title)
    form = QFormLayout(box)
    for label, value in rows:
        shown = plain(QLabel(value))  # a trace's values are shown as they are
        shown.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        form.addRow(plain(QLabel(label)), shown)
    if not rows:
        form.addRow(QLabel("nothing recorded"))
    return box
