"""The window's side of multi-rank captures (#13): File ▸ Capture Script on Several
Ranks runs torchrun with every rank captured (real child processes, gloo on the CPU);
the ranks open as a comparison tab, rank 0 in the explorer, and a rank selector
switches the explorer between ranks."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

SCRIPTS = Path(__file__).resolve().parents[1] / "data" / "scripts"
GPU_RANKS = Path(__file__).resolve().parents[1] / "data" / "ranks" / "gpu_ranks_allreduce"


@pytest.mark.torch  # starts a capture
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


def test_a_reordering_pass_is_a_step_with_its_new_order_in_the_ledger(window):
    folder = Path(__file__).resolve().parents[1] / "data" / "ranks" / "cpu_comm_overlap"
    assert window.open_trace(str(folder / "rank0.json.gz"))
    steps = window.state.steps
    window.stepper.go_last()
    assert window.stepper.label.text().startswith("pass 2: raise_comms")
    window.stepper.go_prev()
    assert window.state.current_step.label == "pass 1: sink_waits_iterative"
    ledger = window.ledger
    assert "pass 1: sink_waits_iterative" in ledger.title.text()
    assert "moved 1 of" in ledger.title.text()
    rows = ledger.shown_rows
    assert len(rows) == len(steps[-2].groups)
    assert [ledger.model.headerData(c, Qt.Orientation.Horizontal)
            for c in range(3)] == ["position", "was", "moved"]
    assert not ledger.outcome.isVisibleTo(ledger)  # a pass's rows have no outcome to filter
    (i,) = [k for k, r in enumerate(rows) if r["kind"] == "all_reduce"]
    ledger.select_row(i)
    assert window.state.pair == (rows[i]["group_a"], rows[i]["group_b"])
    window.stepper.go_first()
    assert ledger.outcome.isVisibleTo(ledger)
    assert not window.errors


@pytest.mark.torch  # starts a capture
def test_cancelling_a_ranks_job_ends_every_rank_and_keeps_what_each_captured(
        window, qtbot, tmp_path, alive):
    from fusionviz.model.run.runner import rank_paths
    from fusionviz.model.tracefile.io import load_trace

    assert window.capture_ranks(str(SCRIPTS / "rank_fails.py"), 2, device="cpu",
                                timing=False, script_args=("hang", str(tmp_path)))
    # both ranks compiled their step and now sleep (each wrote its pid after compiling)
    qtbot.waitUntil(lambda: all((tmp_path / f"pid{r}").exists() for r in (0, 1)),
                    timeout=180_000)
    with qtbot.waitSignal(window.runner.sig_finished, timeout=60_000) as done:
        window.runner.cancel()
    for path in rank_paths(done.args[0], 2):
        kept = load_trace(path)
        assert kept.script.status == "cancelled" and kept.graphs
    pids = [int((tmp_path / f"pid{r}").read_text()) for r in (0, 1)]
    qtbot.waitUntil(lambda: not any(alive(p) for p in pids), timeout=10_000)
    assert not window.errors  # the user stopped it: no dialog says it did not finish
    assert "cancelled; what each capture had recorded is in" in \
        window.statusBar().currentMessage()


def test_bucketing_before_lowering_is_a_notice_of_the_graph(window):
    folder = Path(__file__).resolve().parents[1] / "data" / "ranks" / "cpu_all_gather_bucketing"
    assert window.open_trace(str(folder / "rank0.json.gz"))
    lines = window.notice_lines()
    assert "graph 0, before lowering: bucket_all_gathers: 3 all_gather_into_tensor, " \
           "3 wait_tensor → 1 all_gather_into_tensor_out, 1 wait_tensor" in lines
    assert "bucket_all_gathers" in window.notices.toPlainText()
