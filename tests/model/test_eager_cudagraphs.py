"""The CUDA graphs what-if, read from a real H200 capture.

``tests/data/gpu_mlp_train_cudagraphs.json.gz``: ``benchmarks/eager_models/mlp_train.py``
(32 residual blocks at width 256, a launch-bound train step) captured with
``fusionviz capture ... --what-if reduce-overhead`` (torch 2.11, H200;
``benchmarks/cudagraphs_whatif.py``, whose plain run without fusionviz gave CUDA graphs
1.158 ms forward and 2.130 ms backward against 3.907 and 5.058 ms compiled).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from fusionviz.model.report.eager_cudagraphs import graphed
from fusionviz.model.report.eager_explain import entry_lines, explain, launch_finding
from fusionviz.model.report.eager_json import eager_json
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data"


@pytest.fixture(scope="module")
def mlp():
    return load_trace(str(DATA / "gpu_mlp_train_cudagraphs.json.gz"))


def test_the_what_if_adds_a_third_side_and_no_graph(mlp):
    (entry,) = mlp.entries
    assert mlp.config["fusionviz.what_if"] == "reduce-overhead"
    # its own compiles were muted: the user's forward and backward only, no recompile
    assert [(g.kind, g.compile_id) for g in mlp.graphs] == [("forward", "0/0"),
                                                            ("backward", "0/0")]
    for samples in (entry.cudagraphs_forward, entry.cudagraphs_backward):
        assert len(samples.wall) == len(entry.compiled_forward.wall) >= 5
        assert len(samples.device) == 3 and all(ms > 0 for ms in samples.device)
    assert entry.cudagraphs_note == ""  # no graph skipped


def test_cuda_graphs_win_the_wall_clock_of_a_launch_bound_step(mlp):
    g = graphed(mlp.entries[0])
    compiled, with_graphs = g.step["wall"]
    assert g.verdict("wall") == "faster" and compiled / with_graphs > 1.5
    # the device work is the same kernels: no such win on the device clock
    dev_compiled, dev_graphs = g.step["device"]
    assert 0.7 < dev_compiled / dev_graphs < 1.3
    assert g.forward["wall"].verdict == g.backward["wall"].verdict == "faster"


def test_the_launch_bound_finding_gives_the_measured_figure(mlp):
    ex = explain(mlp, mlp.entries[0])
    launch = launch_finding(ex)
    assert launch is not None and launch in ex.findings
    assert launch.fix.startswith("CUDA graphs, measured: ")
    assert " ms wall per step with CUDA graphs, against " in launch.fix
    assert "x faster" in launch.fix and "ms eager: " in launch.fix
    rows = dict(ex.budget)
    assert rows["CUDA graphs (what-if, wall)"] in launch.fix


def test_without_the_what_if_the_finding_says_how_to_measure_it():
    llama = load_trace(str(DATA / "gpu_llama_hf_train.json.gz"))
    (entry,) = llama.entries
    assert graphed(entry) is None
    ex = explain(llama, entry)
    assert "--what-if reduce-overhead" in launch_finding(ex).fix
    assert not [w for w, _ in ex.budget if w.startswith("CUDA graphs")]
    assert eager_json(llama)[0]["cudagraphs"] is None


def test_summary_and_json_carry_the_third_side(mlp):
    text = summary_text(mlp)
    assert "forward  wall   with CUDA graphs " in text
    assert "backward device with CUDA graphs " in text
    (doc,) = eager_json(mlp)
    cg = doc["cudagraphs"]
    assert cg["measured"] is True and set(cg["step"]) == {"device", "wall"}
    wall = cg["forward"]["wall"]
    assert wall["speedup"] == pytest.approx(
        wall["compiled"]["median_ms"] / wall["cudagraphs"]["median_ms"])
    assert cg["step"]["wall"]["verdict"] == "faster"


def test_a_cpu_figure_is_approximate_only_where_page_faults_are_a_large_share():
    from fusionviz.model.trace import Entry, Samples, Trace

    def entry(faults):
        return Entry(name="f", eager_forward=Samples(wall=(1.0,) * 5, faults=faults),
                     compiled_forward=Samples(wall=(0.5,) * 5, faults=0.0))

    for faults, flagged in ((10.0, False), (None, False), (4096.0, True)):
        e = entry(faults)
        ex = explain(Trace(entries=(e,)), e)
        assert bool(ex.faulting) == flagged and bool(ex.memory) == flagged
    text = "\n".join(entry_lines(Trace(entries=(entry(4096.0),))))
    assert "approximate: page faults per call: eager forward 4,096" in text


@pytest.fixture(scope="module")
def user_graphs():
    """``mlp_train.py --compile-mode reduce-overhead``: the user's own CUDA graphs (H100)."""
    return load_trace(str(DATA / "gpu_mlp_train_user_cudagraphs.json.gz"))


def test_a_callable_the_user_runs_under_cuda_graphs_is_timed_after_the_script(user_graphs):
    (entry,) = user_graphs.entries
    assert entry.compiled_cudagraphs and entry.grad
    assert entry.note.startswith("timed after your script ended, on copies of its first")
    for samples in (entry.eager_forward, entry.compiled_forward, entry.eager_backward,
                    entry.compiled_backward):
        assert len(samples.wall) >= 5 and len(samples.device) == 3
        assert all(ms > 0 for ms in samples.device)
    # no what-if was asked: no third side
    assert entry.cudagraphs_forward is None and entry.cudagraphs_note == ""
    # the extra calls compiled nothing: the user's forward and backward only
    assert [(g.kind, g.compile_id) for g in user_graphs.graphs] == [("forward", "0/0"),
                                                                   ("backward", "0/0")]
    # the graphs' eager figure is the program's own (it was "not timed" before)
    assert user_graphs.graphs[0].timing.eager_source.startswith("your program, eager")


def test_under_cuda_graphs_the_explanation_does_not_advise_cuda_graphs(user_graphs):
    ex = explain(user_graphs, user_graphs.entries[0])
    assert ex.headline().startswith("DeepMLP: compiled (CUDA graphs) ")
    launch = launch_finding(ex)
    assert launch is not None and launch.fix.startswith("it already replays CUDA graphs")
    assert "--what-if" not in launch.fix
    host = dict(ex.budget)["host time beyond the device (wall - device)"]
    assert host.endswith("(replayed from CUDA graphs)")
    (doc,) = eager_json(user_graphs)
    assert doc["compiled_cudagraphs"] is True and doc["cudagraphs"] is None
    assert "compiled (CUDA graphs)" in "\n".join(entry_lines(user_graphs))
    # a trace recorded with the what-if is not under the user's own CUDA graphs
    assert eager_json(load_trace(str(DATA / "gpu_mlp_train_cudagraphs.json.gz")))[0][
        "compiled_cudagraphs"] is False
