"""Render the README's screenshots from the committed GPU traces (offscreen Qt).

    QT_QPA_PLATFORM=offscreen python docs/render_screenshots.py

docs/screenshot-gpu.png: the main window on ``tests/data/gpu_mlp_block.json.gz``, its
backward graph at fusion round 1 with the first fused kernel selected.
docs/compare-gpu.png: the comparison view of ``tests/data/experiments/gpu_sweep_mlp_block``
(all rounds vs no fusion).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from fusionviz.ui.main_window import MainWindow  # noqa: E402


def settle(app: QApplication, rounds: int = 20) -> None:
    for _ in range(rounds):
        app.processEvents()


def main() -> int:
    app = QApplication.instance() or QApplication([])
    settings = QSettings(os.path.join(tempfile.mkdtemp(), "fusionviz.ini"), QSettings.IniFormat)
    win = MainWindow(settings=settings)
    win.resize(1600, 1000)
    win.show()
    assert win.open_trace(str(ROOT / "tests/data/gpu_mlp_block.json.gz"))
    state = win.state
    state.set_graph(1)
    state.set_step(1)
    fused = next(k for k in state.graph.kernels if len(k.nodes) > 1)
    state.select_kernel(fused.name)
    state.select_nodes((fused.nodes[0],))
    settle(app)
    win.grab().save(str(ROOT / "docs/screenshot-gpu.png"))
    view = win.experiments.open_experiment(str(ROOT / "tests/data/experiments/gpu_sweep_mlp_block"))
    view.resize(1600, 1000)
    settle(app)
    view.grab().save(str(ROOT / "docs/compare-gpu.png"))
    view.close()
    win.close()
    settle(app)
    print("wrote docs/screenshot-gpu.png, docs/compare-gpu.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
