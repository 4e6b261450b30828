"""The A/B settings dialog: the same script compiled under two Inductor settings.

Presets fill both sides (a flag's preset flips the value the open trace recorded, so
"aggressive_fusion" means "the other way than this run"); any ``torch._inductor.config``
``key=value`` may be typed, one per line. Non-modal: ``sig_run`` carries the settings.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QLabel,
    QPlainTextEdit,
    QVBoxLayout,
)

from fusionviz.model.run.settings import parse_config
from fusionviz.ui.plain import plain

CUSTOM = "custom settings"
# mode="max-autotune-no-cudagraphs" is these settings (torch._inductor.list_mode_options)
_MAX_AUTOTUNE = {"max_autotune": True, "coordinate_descent_tuning": True}
_FLAGS = ("benchmark_fusion", "aggressive_fusion", "loop_ordering_after_fusion")
_DEFAULTS = {"benchmark_fusion": False, "aggressive_fusion": False,
             "loop_ordering_after_fusion": True}  # torch 2.13's, when a trace lacks them


def presets(recorded: dict | None = None) -> dict[str, tuple[dict, dict]]:
    """Preset name → (settings of A, settings of B), flags flipped from ``recorded``."""
    recorded = recorded or {}
    out = {"default vs max-autotune-no-cudagraphs": ({}, dict(_MAX_AUTOTUNE))}
    for flag in _FLAGS:
        value = bool(recorded.get(flag, _DEFAULTS[flag]))
        out[f"{flag}: {value} vs {not value}"] = ({}, {flag: not value})
    out[CUSTOM] = ({}, {})
    return out


def format_settings(config: dict) -> str:
    return "\n".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v}" for k, v in config.items())


def parse_settings(text: str) -> dict:
    """``key=value`` lines (blank lines and ``#`` comments skipped); ValueError names a bad line."""
    items = [line.strip() for line in text.splitlines()]
    items = [line for line in items if line and not line.startswith("#")]
    for line in items:
        key, sep, _value = line.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"not a key=value setting: {line!r}")
    return parse_config(items)


class ABDialog(QDialog):
    """Pick a preset or type settings for sides A and B; Run emits ``sig_run``."""

    sig_run = Signal(object, object)  # dicts, passed as is (a QVariantMap would sort them)
    """Run the A/B experiment; arguments: settings of A, settings of B."""

    def __init__(self, recorded: dict | None = None, parent=None) -> None:
        super().__init__(parent)
        self.setWindowTitle("A/B settings experiment")
        self.presets = presets(recorded)
        self.preset = QComboBox()
        self.preset.addItems(list(self.presets))
        self.side_a, self.side_b = QPlainTextEdit(), QPlainTextEdit()
        self.side_a.setPlaceholderText("A: Inductor's defaults (or key=value, one per line)")
        self.side_b.setPlaceholderText("B: key=value, one per line, e.g. max_fusion_size=8")
        self.error = plain(QLabel())  # quotes the typed (or the trace's) settings
        self.error.setStyleSheet("color: #d9534f;")
        note = QLabel("Both sides capture the same script in fresh processes with caches off; "
                      "keys are <code>torch._inductor.config</code> names "
                      "(e.g. <code>triton.cudagraphs=False</code>).")
        note.setWordWrap(True)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Cancel)
        self.run_button = buttons.addButton("Run", QDialogButtonBox.ButtonRole.AcceptRole)
        buttons.accepted.connect(self.run)
        buttons.rejected.connect(self.close)
        form = QFormLayout()
        form.addRow("Preset:", self.preset)
        form.addRow("A settings:", self.side_a)
        form.addRow("B settings:", self.side_b)
        box = QVBoxLayout(self)
        box.addWidget(note)
        box.addLayout(form)
        box.addWidget(self.error)
        box.addWidget(buttons)
        self.preset.currentTextChanged.connect(self.apply_preset)
        self.apply_preset(self.preset.currentText())
        self.setWindowModality(Qt.WindowModality.NonModal)
        self.resize(560, 360)

    def apply_preset(self, name: str) -> None:
        if name == CUSTOM:
            return  # keep what is typed
        a, b = self.presets[name]
        self.side_a.setPlainText(format_settings(a))
        self.side_b.setPlainText(format_settings(b))

    def settings(self) -> tuple[dict, dict]:
        """(A, B) as typed; ValueError when a line is not key=value or B is empty."""
        a, b = parse_settings(self.side_a.toPlainText()), parse_settings(self.side_b.toPlainText())
        if not b:
            raise ValueError("B needs at least one setting that differs from A")
        return a, b

    def run(self) -> None:
        try:
            a, b = self.settings()
        except ValueError as e:
            self.error.setText(str(e))
            return
        self.error.clear()
        self.sig_run.emit(a, b)
        self.close()
