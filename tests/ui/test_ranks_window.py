"""The window's side of multi-rank captures (#13): File ▸ Capture Script on Several
Ranks runs torchrun with every rank captured (real child processes, gloo on the CPU);
the ranks open as a comparison tab, rank 0 in the explorer, and a rank selector
switches the explorer between ranks."""

from __future__ import annotations

import os
from pathlib import Path

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "scripts"
GPU_RANKS = Path(__file__).resolve().parents[1] / "data" / "ranks" / "gpu_ranks_allreduce"


def test_capturing_two_ranks_from_the_window(window, qtbot):
    with qtbot.waitSignal(window.runner.sig_finished, timeout=240_000) as done:
        assert window.capture_ranks(str(SCRIPTS / "dist_allreduce.py"), 2, device="cpu")
    folder = Path(done.args[0])
    assert folder.parent == Path(os.environ["FUSIONVIZ_DATA_DIR"]) / "captures"
    assert folder.name.startswith("dist_allreduce-ranks-")
    assert sorted(p.name for p in folder.glob("rank*.json.gz")) == ["rank0.json.gz",
                                                                    "rank1.json.gz"]
    view = window.views.currentWidget()
    assert view is not window.views.widget(0) and "these ranks agree" in view.summary.text()
    assert window.state.path == str(folder / "rank0.json.gz")
    assert any(n.category == "collective" for n in window.state.graph.nodes)
    assert not window.errors


def test_the_rank_selector_switches_the_explorer_between_ranks(window):
    assert not window.rank_selector.isVisible()
    assert window.open_trace(str(GPU_RANKS / "rank0.json.gz"))
    assert window.rank_selector.isVisibleTo(window)
    assert [window.rank_selector.itemText(i) for i in range(window.rank_selector.count())] \
        == ["rank 0", "rank 1"]
    window.rank_selector.setCurrentIndex(1)
    assert window.state.path == str(GPU_RANKS / "rank1.json.gz")
    assert window.rank_selector.currentIndex() == 1
    assert window.open_trace(str(Path(__file__).resolve().parents[1] / "data"
                                 / "cpu_mlp_block.json.gz"))
    assert not window.rank_selector.isVisibleTo(window)
