"""A DDP script's teardown under capture (#21): the capture keeps none of the user's
objects past their time, the tutorials' teardown does not hang, and a rank that does
not exit after its final trace is ended, its trace kept and marked."""

from __future__ import annotations

import gc
import time
import weakref
from pathlib import Path

import torch

from fusionviz.model.capture.inprocess import capturing
from fusionviz.model.run import runner
from fusionviz.model.run.settle import LINGERED
from fusionviz.model.tracefile.io import load_trace

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"


def test_a_compiled_module_dies_with_its_last_user_reference(tmp_path):
    """Once its first call is measured, nothing of the capture holds the module: it
    dies when the script drops it (as without capture), not at some later garbage
    collection (a DDP module dying then can hang the rank: script_objects)."""
    torch._dynamo.reset()
    with torch._inductor.config.patch(force_disable_caches=True), torch.no_grad(), \
            capturing(str(tmp_path / "t.json.gz"), measure_runtime=True) as rec:
        model = torch.nn.Sequential(torch.nn.Linear(16, 32), torch.nn.GELU())
        step = torch.compile(model)
        step(torch.randn(4, 16))
        refs = weakref.ref(model), weakref.ref(step)
        gc.disable()  # a collection would hide a cycle that keeps them
        try:
            del model, step
            alive = [r() is not None for r in refs]
        finally:
            gc.enable()
    assert alive == [False, False]
    (entry,) = rec.entries  # and it was measured as before
    assert entry.eager_forward is not None and entry.compiled_forward is not None


def test_the_tutorials_ddp_teardown_does_not_hang_under_capture(tmp_path):
    """ddp_plain_teardown.py ends as the PyTorch tutorials do: the process group
    destroyed while the DDP module lives. Captured, it hung at exit in 2 of 5 tries
    before the capture paused in ``destroy_process_group`` and let the script's objects
    go only after its final trace (script_objects); the 20-run count is
    benchmarks/ddp_teardown_hang.py's."""
    for run in range(3):
        folder = tmp_path / f"run{run}"
        t0 = time.monotonic()
        traces = runner.run_ranks(str(SCRIPTS / "ddp_plain_teardown.py"), str(folder),
                                  nproc=2, device="cpu", timeout=240)
        took = time.monotonic() - t0
        # a hung rank would be ended EXIT_AFTER_DONE_S after its final trace, and say so
        assert [t.script.status for t in traces] == ["ok", "ok"], (run, took)
        assert not any(LINGERED in t.script.message for t in traces), (run, took)
        assert all(len(t.graphs) == 2 for t in traces)  # forward and backward, each rank


def test_a_rank_that_does_not_exit_after_its_final_trace_is_ended(tmp_path, monkeypatch):
    """Rank 1 leaves a thread that blocks its exit for ten minutes: once every rank
    has written its final trace, the job is ended; each rank keeps its status and only
    rank 1's trace says it was ended."""
    # time for rank 0 to exit (a loaded 2-core machine takes seconds), not ten minutes
    monkeypatch.setattr(runner, "EXIT_AFTER_DONE_S", 10.0)
    folder = tmp_path / "ranks"
    t0 = time.monotonic()
    traces = runner.run_ranks(str(SCRIPTS / "rank_lingers_at_exit.py"), str(folder),
                              nproc=2, device="cpu", timing=False, timeout=240)
    assert time.monotonic() - t0 < 120  # not the timeout, nor the thread's 600 s
    assert [t.script.status for t in traces] == ["no_graphs", "no_graphs"]
    assert [LINGERED in t.script.message for t in traces] == [False, True]
    on_disk = [load_trace(p).script for p in runner.rank_paths(folder, 2)]
    assert [LINGERED in s.message for s in on_disk] == [False, True]
