"""``fusionviz replay`` (#20, item 1) on real CPU compiles: each graph of a captured
train step (forward and backward) compiled again on its own, without the script, takes
exactly the captured decisions; a forbidden pair changes them; a graph that cannot be
replayed says why."""

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from torch._inductor.utils import fresh_inductor_cache  # noqa: E402

from fusionviz.cli.main import main  # noqa: E402
from fusionviz.model.capture.inprocess import capturing  # noqa: E402
from fusionviz.model.tracefile.io import load_trace, save_trace  # noqa: E402

pytestmark = pytest.mark.torch
DATA = Path(__file__).resolve().parents[1] / "data"


class _Block(torch.nn.Module):
    """LayerNorm and a gated MLP, then a softmax and an index: in its backward, the
    saved tensors (freeable, unlike primals_* and tangents_*) steer Inductor's
    memory-aware order of the kernels, which a replay must keep."""

    def __init__(self):
        super().__init__()
        self.ln = torch.nn.LayerNorm(64)
        self.gate = torch.nn.Linear(64, 256, bias=False)
        self.up = torch.nn.Linear(64, 256, bias=False)
        self.down = torch.nn.Linear(256, 64, bias=False)

    def forward(self, x, idx):
        h = self.ln(x)
        h = x + self.down(torch.nn.functional.silu(self.gate(h)) * self.up(h))
        return h.softmax(-1)[idx].sum()


@pytest.fixture(scope="module")
def captured(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("replay") / "step.json.gz"
    torch._dynamo.reset()
    torch.manual_seed(0)
    with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
            capturing(str(path)):
        x = torch.randn(128, 64, requires_grad=True)
        torch.compile(_Block())(x, torch.tensor([0, 3, 5])).backward()
    trace = load_trace(path)
    assert [g.kind for g in trace.graphs] == ["forward", "backward"]
    assert all(g.replay and not g.replay_note for g in trace.graphs)
    return path


@pytest.mark.parametrize("graph", [0, 1], ids=["forward", "backward"])
def test_a_replay_takes_the_captured_decisions(captured, graph, tmp_path, capsys):
    out = tmp_path / "replay.json.gz"
    assert main(["replay", str(captured), "--graph", str(graph), "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "the same decisions as the capture" in said, said
    original, again = load_trace(captured).graphs[graph], load_trace(out).graphs[-1]
    assert again.kind == original.kind
    assert [n.name for n in again.nodes] == [n.name for n in original.nodes]
    assert [(f.a, f.b) for r in again.rounds for f in r.fusions] == \
        [(f.a, f.b) for r in original.rounds for f in r.fusions]
    assert [k.nodes for k in again.kernels] == [k.nodes for k in original.kernels]
    assert again.timing is not None and again.timing.compiled_ms > 0  # timed as captured
    assert "time per call (wall (CPU: noisy" in said


def test_a_forbidden_pair_changes_the_replay(captured, tmp_path, capsys):
    first = next(f for r in load_trace(captured).graphs[0].rounds for f in r.fusions)
    pair = f"{first.a[0]},{first.b[0]}"
    out = tmp_path / "forbidden.json.gz"
    assert main(["replay", str(captured), "--graph", "0", "--forbid", pair, "-o", str(out)]) == 0
    said = capsys.readouterr().out
    assert "with the change, against the capture" in said and "fusions:" in said, said
    fused = [(f.a, f.b) for r in load_trace(out).graphs[-1].rounds for f in r.fusions]
    assert (first.a, first.b) not in fused


def test_a_graph_that_cannot_be_replayed_says_why(captured, tmp_path, capsys):
    old = DATA / "cpu_mlp_block.json.gz"  # recorded before replay sources were
    assert main(["replay", str(old), "--graph", "0", "-o", str(tmp_path / "x.json.gz")]) == 2
    assert "cannot be replayed" in capsys.readouterr().err
    trace = load_trace(captured)
    g = trace.graphs[0]
    evil = replace(g, replay={**g.replay, "code": g.replay["code"].replace(
        "def forward(self,", "import os\ndef forward(self,")})
    path = tmp_path / "evil.json.gz"
    save_trace(replace(trace, graphs=(evil, *trace.graphs[1:])), path)
    assert main(["replay", str(path), "--graph", "0", "-o", str(tmp_path / "y.json.gz")]) == 2
    err = capsys.readouterr().err
    assert "cannot be replayed: its code is not replayed" in err, err
    assert not (tmp_path / "y.json.gz").exists()
    assert main(["replay", str(captured), "--graph", "7", "-o", str(tmp_path / "z")]) == 3
    doc = json.loads(gzip.decompress(captured.read_bytes()).split(b"\n")[0])
    graphs = doc["graphs"]["v"]  # format 3: the graphs' fields in columns
    assert graphs["replay"][0]["inputs"][0]["dtype"] == "float32"


def test_a_graph_of_dynamic_shapes_says_it_cannot_be_replayed(tmp_path, capsys):
    from fusionviz.model.report.summary import summary_text

    path = tmp_path / "dynamic.json.gz"
    torch._dynamo.reset()
    with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
            capturing(str(path)):
        torch.compile(lambda x: (x.sin() * 2).sum(0), dynamic=True)(torch.randn(8, 4))
    trace = load_trace(path)
    graph = trace.graphs[0]
    assert not graph.replay and "dynamic shapes are not replayed" in graph.replay_note
    assert "replay: not possible: input" in summary_text(trace)
    assert main(["replay", str(path), "--graph", "0", "-o", str(tmp_path / "r.json.gz")]) == 2
    assert "dynamic shapes are not replayed" in capsys.readouterr().err


def test_a_replay_compiles_with_the_captures_inductor_settings(captured, tmp_path, capsys):
    """Captured with max_fusion_size=2 (fewer fusions than the default), the replay
    decides the same without being told: it applies the trace's recorded settings,
    under a mode's options."""
    path = tmp_path / "small_fusions.json.gz"
    torch._dynamo.reset()
    torch.manual_seed(0)
    with fresh_inductor_cache(), torch._inductor.config.patch(
            force_disable_caches=True, max_fusion_size=2), capturing(str(path)):
        x = torch.randn(128, 64, requires_grad=True)
        # the train step's forward graph only (graph 0, as ``captured``'s): its
        # backward, compiled at .backward(), is not replayed here
        torch.compile(_Block())(x, torch.tensor([0, 3, 5]))
    small, default = load_trace(path), load_trace(captured)
    assert small.config["max_fusion_size"] == 2
    fusions = [sum(len(r.fusions) for r in t.graphs[0].rounds) for t in (small, default)]
    assert fusions[0] < fusions[1], fusions
    # a mode's options go over the recorded settings (the capture recorded
    # triton.cudagraphs=False; reduce-overhead sets it), which stay under them
    out = tmp_path / "r.json.gz"
    assert main(["replay", str(path), "--graph", "0", "--mode", "reduce-overhead",
                 "-o", str(out)]) == 0
    assert small.config["triton.cudagraphs"] is False
    replayed = load_trace(out)
    assert replayed.config["triton.cudagraphs"] is True
    assert replayed.config["max_fusion_size"] == 2
    assert "0 kind(s) of decision differ" in capsys.readouterr().out


def test_advise_measures_candidates_side_by_side_in_turns(tmp_path, capsys):
    """Two replays compiled at a time, timed one after the other in the planned order
    (baseline, candidate, baseline): the turn files say which got the GPU when. (The
    backward of ``tests/data/scripts/replay_block.py``: refusals under Inductor's
    score_fusion_memory_threshold, which a setting decides.)"""
    folder = tmp_path / "advise"
    captured = DATA / "cpu_replay_block.json.gz"
    assert main(["advise", str(captured), "--graph", "1", "--measure", "1", "--jobs", "2",
                 "--json", "-o", str(folder)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["measured"] is True
    graph = doc["graphs"][0]
    assert graph["clock"] == "wall time (CPU, noisy)" and graph["jobs"] == 2
    assert len(graph["baselines_ms"]) == 2, graph  # before and after the candidate
    (row,) = graph["measured"]
    assert row["verdict"] in ("win", "within noise", "slower", "changed results",
                              "not generated", "failed"), row
    assert row["try"][:4] == ["fusionviz", "replay", str(captured), "--graph"]
    assert len(list(folder.glob("graph_1/replay_*.json.gz"))) == 3
    (turns,) = (folder / "graph_1").glob("turns-*")
    given = sorted(turns.glob("go.*"), key=lambda p: p.stat().st_mtime_ns)
    timing = [p.name[3:] for p in given if p.name.startswith("go.t")]
    assert timing == ["t0", "t1", "t2"], [p.name for p in given]
    # each turn ended before the next one was given: never two replays on the device
    for first, second in zip(given, given[1:]):
        done = turns / f"done.{first.name[3:]}"
        assert done.stat().st_mtime_ns <= second.stat().st_mtime_ns


def test_the_time_budget_ends_replays_still_running(tmp_path, capsys):
    """``--budget`` is the most the measurement takes: replays still compiling when it
    runs out are ended (their traces settled "cancelled"), not left to run for minutes
    (a max-autotune replay of ResNet-50's convolutions ran past a 240 s budget on an
    H100 by more than 200 s before this)."""
    folder = tmp_path / "advise"
    assert main(["advise", str(DATA / "cpu_replay_block.json.gz"), "--measure", "1",
                 "--jobs", "2", "--budget", "3", "--json", "-o", str(folder)]) == 0
    forward, backward = json.loads(capsys.readouterr().out)["graphs"]
    assert forward["problem"].startswith("no candidate a replay can measure")
    assert backward["baselines_ms"] == []
    assert "(over the time budget)" in backward["problem"], backward
    assert {r["verdict"] for r in backward["measured"]} == {"not measured"}
    replays = sorted(folder.glob("graph_1/replay_*.json.gz"))
    assert replays, "the first two replays had started"
    assert {load_trace(p).script.status for p in replays} == {"cancelled"}


def test_a_graph_that_cannot_be_replayed_is_measured_by_running_the_script(tmp_path,
                                                                           capsys):
    """The fallback of item 1: a graph the trace holds no replay source for (custom ops,
    inputs it could not hold; here, removed) is measured by capturing the user's script
    again with each change, its graph of the same index timed."""
    trace = load_trace(DATA / "cpu_replay_block.json.gz")
    backward = replace(trace.graphs[1], replay={}, replay_note="a custom op: my::op")
    script = replace(trace.script, path=str(DATA / "scripts" / "replay_block.py"))
    path = tmp_path / "no_replay.json.gz"
    save_trace(replace(trace, script=script, graphs=(trace.graphs[0], backward)), path)
    folder = tmp_path / "advise"
    assert main(["advise", str(path), "--graph", "1", "--measure", "1", "--json", "-o",
                 str(folder)]) == 0
    captured = capsys.readouterr()
    assert "cannot be replayed (a custom op: my::op): each measurement runs your script" \
        in captured.err
    graph = json.loads(captured.out)["graphs"][0]
    assert graph["source"] == "script" and graph["jobs"] == 1
    assert len(graph["baselines_ms"]) == 2, graph
    (row,) = graph["measured"]
    assert row["verdict"] in ("win", "within noise", "slower"), row
    assert row["what"] == "score_fusion_memory_threshold=1"
    runs = [load_trace(p) for p in sorted(folder.glob("graph_1/replay_*.json.gz"))]
    assert [len(t.graphs) for t in runs] == [2, 2, 2]  # the whole script, each time
    assert runs[1].config["score_fusion_memory_threshold"] == 1
    assert {t.config["score_fusion_memory_threshold"] for t in (runs[0], runs[2])} != {1}
    # moved away, the script cannot run again: said, and a failure (exit 1)
    save_trace(replace(trace, script=replace(script, path=str(tmp_path / "gone.py")),
                       graphs=(trace.graphs[0], backward)), path)
    assert main(["advise", str(path), "--graph", "1", "--measure", "1", "--json"]) == 1
    graph = json.loads(capsys.readouterr().out)["graphs"][0]
    assert "is not there any more" in graph["problem"]
