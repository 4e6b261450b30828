"""Render the README's screenshots from the committed GPU traces (offscreen Qt).

    QT_QPA_PLATFORM=offscreen python docs/render_screenshots.py

docs/screenshot-gpu.png: the main window on ``tests/data/gpu_mlp_block.json.gz``, its
backward graph at fusion round 1 with the first fused kernel selected.
docs/compare-gpu.png: the comparison view of ``tests/data/experiments/gpu_sweep_mlp_block``
(all rounds vs no fusion).
docs/gpt2-first-view.png: ``tests/data/gpu_gpt2_train.json.gz``'s forward graph as it
opens (repeated blocks folded), at the final step.
docs/gpt2-block-round1.png: the same with the blocks unfolded and blocks.3 opened, at
fusion round 1, with the ledger.
docs/kernel-table.png: its kernel table, sorted by time, beside the kernel's source.
docs/reorder-pass.png: ``tests/data/ranks/gpu_comm_overlap``'s rank 0 at its first
post-fusion pass (sink_waits_iterative) at 1280×800, the all-reduce's row selected.
docs/timeline.png: the same trace's Timeline chart (the matmul running while the
all-reduce is in flight).
docs/compiled-vs-eager.png: ``tests/data/gpu_bert_fp16_infer.json.gz`` (HF BERT fp16
inference, H200) with the Compiled vs eager dock raised: its findings, the module tree
opened on the attention module that lost most, and that module's eager and compiled
kernels; the graph shows that module opened, the module boxes and frames tinted by
compiled vs eager (red: slower).
docs/rank-comparison-nccl.png: the comparison tab of ``tests/data/ranks/nccl_tp_step``
(tensor parallel, two H100s, NCCL).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings, Qt  # noqa: E402
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
    assert win.open_trace(str(ROOT / "tests/data/gpu_gpt2_train.json.gz"))
    state.set_step(len(state.steps) - 1)
    settle(app)
    win.grab().save(str(ROOT / "docs/gpt2-first-view.png"))
    gv = win.graph_view
    state.set_step(1)
    gv.expand_box(next(b.key for b, _ in gv.paint_data.boxes.values() if b.run))
    gv.expand_box("▣ blocks.3")
    gv.resetTransform()
    gv.scale(0.55, 0.55)
    gv.centerOn(gv.visible_pos("▣ blocks.3.attn"))
    win.docks["ledger"].raise_()
    settle(app)
    win.grab().save(str(ROOT / "docs/gpt2-block-round1.png"))
    win.docks["kernels"].raise_()
    win.kernel_table.select_row(0)
    settle(app)
    win.grab().save(str(ROOT / "docs/kernel-table.png"))
    view = win.experiments.open_experiment(str(ROOT / "tests/data/experiments/gpu_sweep_mlp_block"))
    view.resize(1600, 1000)
    settle(app)
    view.grab().save(str(ROOT / "docs/compare-gpu.png"))
    view.close()
    win.close()
    win = MainWindow(settings=QSettings(os.path.join(tempfile.mkdtemp(), "fusionviz.ini"),
                                        QSettings.IniFormat))
    win.resize(1280, 800)
    win.show()
    state = win.state
    assert win.open_trace(str(ROOT / "tests/data/ranks/gpu_comm_overlap/rank0.json.gz"))
    state.set_step(len(state.steps) - 2)  # pass 1: sink_waits_iterative
    win.docks["ledger"].raise_()
    settle(app)
    rows = win.ledger.shown_rows
    win.ledger.select_row(next(i for i, r in enumerate(rows) if r["kind"] == "all_reduce"))
    settle(app)
    win.grab().save(str(ROOT / "docs/reorder-pass.png"))
    win.docks["charts"].raise_()
    win.charts_pane.tabs.setCurrentWidget(win.charts_pane.timeline_chart)
    settle(app)
    win.grab().save(str(ROOT / "docs/timeline.png"))
    assert win.open_trace(str(ROOT / "tests/data/ranks/nccl_tp_step/rank0.json.gz"))
    win.experiments.open_experiment(str(ROOT / "tests/data/ranks/nccl_tp_step"))
    settle(app)
    win.grab().save(str(ROOT / "docs/rank-comparison-nccl.png"))
    win.close()
    settle(app)
    win = MainWindow(settings=QSettings(os.path.join(tempfile.mkdtemp(), "fusionviz.ini"),
                                        QSettings.IniFormat))
    win.resize(1600, 1000)
    win.show()
    assert win.open_trace(str(ROOT / "tests/data/gpu_bert_fp16_infer.json.gz"))
    settle(app)
    eager = win.docks["eager"]
    eager.raise_()
    win.resizeDocks([eager], [600], Qt.Orientation.Vertical)
    settle(app)
    gv = win.graph_view  # the module that lost most, opened in the graph: tinted
    gv.toggle_module("encoder.layer.11.attention.self")
    gv.resetTransform()
    gv.scale(0.6, 0.6)
    gv.centerOn(gv.tint.marks["encoder.layer.11.attention"].rect.center())
    settle(app)
    win.grab().save(str(ROOT / "docs/compiled-vs-eager.png"))
    win.close()
    settle(app)
    print("wrote docs/screenshot-gpu.png, docs/gpt2-first-view.png, docs/gpt2-block-round1.png,"
          " docs/kernel-table.png, docs/compare-gpu.png, docs/reorder-pass.png,"
          " docs/timeline.png, docs/compiled-vs-eager.png, docs/rank-comparison-nccl.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
