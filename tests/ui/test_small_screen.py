"""A 1280×800 screen: the first-run window fits the screen, every pane in it, with two
kernels side by side on a real GPU trace (docs/window-1280x800.png shows it)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from fusionviz.ui.main_window import MainWindow

GPT2 = Path(__file__).resolve().parents[1] / "data" / "gpu_gpt2_train.json.gz"


def test_the_window_fits_a_1280x800_screen_with_side_by_side_on(qtbot, settings):
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.show()
    assert w.open_trace(str(GPT2)), w.errors
    w.kernel_pane.side_button.setChecked(True)
    qtbot.wait(50)
    need = w.minimumSizeHint()
    assert need.width() <= 1280 - 40 and need.height() <= 800 - 80, need
    assert w.stepper.slider.minimumWidth() >= 120  # a slider, not a square


def test_the_first_run_size_comes_from_the_screen(qtbot, isolated_settings):
    w = MainWindow(settings=QSettings(str(isolated_settings / "first.ini"),
                                      QSettings.Format.IniFormat))
    qtbot.addWidget(w)
    free = w.screen().availableGeometry()
    assert w.width() <= max(free.width() * 0.92 + 1, w.minimumSizeHint().width())
    assert w.height() <= max(free.height() * 0.92 + 1, w.minimumSizeHint().height())
    assert w.x() >= free.x() and w.y() >= free.y()
