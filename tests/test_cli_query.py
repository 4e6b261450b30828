"""``fusionviz query`` and ``fusionviz why`` on every committed trace: the JSON fits
``docs/query.schema.json``, holds what the trace holds, and ``why`` answers as the
window's "Why Not Fused?" dialog does on a fused and a rejected pair of each ledger."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.comms.step_overlap import step_overlap
from fusionviz.model.node_lookup import NodeLookupError, find_pair
from fusionviz.model.report.graph_reasons import frame_shown, step_calls
from fusionviz.model.report.ledger_table import ledger_rows
from fusionviz.model.report.query import graph_row
from fusionviz.model.report.why_report import entry_cells
from fusionviz.model.trace import BreakReason, Graph, Node, Trace
from fusionviz.model.tracefile.io import load_trace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).parents[1]
DATA = ROOT / "tests" / "data"
TRACES = sorted(DATA.glob("*.json.gz")) + sorted((DATA / "experiments").rglob("*.json.gz"))
SCHEMA = json.loads((ROOT / "docs" / "query.schema.json").read_text(encoding="utf-8"))


def _id(path: Path) -> str:
    return path.relative_to(DATA).as_posix()


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- the schema: checked by jsonschema when installed, else by the few rules it uses --

def validate(doc) -> None:
    try:
        import jsonschema
    except ImportError:
        errors = list(_errors(doc, SCHEMA, "$"))
        assert not errors, errors[:5]
    else:
        jsonschema.validate(doc, SCHEMA)


_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool, "null": type(None)}


def _is(value, name: str) -> bool:
    if name in ("integer", "number"):
        ok = int if name == "integer" else (int, float)
        return isinstance(value, ok) and not isinstance(value, bool)
    return isinstance(value, _TYPES[name])


def _errors(value, schema, where):
    """What in ``value`` breaks ``schema``: the subset of JSON Schema the file uses
    ($ref, type, const, enum, required, properties, additionalProperties, items,
    allOf, oneOf and boolean schemas)."""
    if schema is True:
        return
    if "$ref" in schema:
        yield from _errors(value, SCHEMA["$defs"][schema["$ref"].split("/")[-1]], where)
    types = schema.get("type")
    if types and not any(_is(value, t) for t in ([types] if isinstance(types, str) else types)):
        yield f"{where}: {value!r:.60} is not {types}"
        return
    if "const" in schema and value != schema["const"]:
        yield f"{where}: {value!r} is not {schema['const']!r}"
    if "enum" in schema and value not in schema["enum"]:
        yield f"{where}: {value!r} not in {schema['enum']}"
    for sub in schema.get("allOf", ()):
        yield from _errors(value, sub, where)
    if "oneOf" in schema:
        fits = [s for s in schema["oneOf"] if not list(_errors(value, s, where))]
        if len(fits) != 1:
            yield f"{where}: fits {len(fits)} of oneOf"
    if isinstance(value, dict):
        yield from (f"{where}: no {k!r}" for k in schema.get("required", ()) if k not in value)
        props = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                yield from _errors(v, props[k], f"{where}.{k}")
            elif extra is False:
                yield f"{where}: unexpected key {k!r}"
            elif isinstance(extra, dict):
                yield from _errors(v, extra, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            yield from _errors(v, schema["items"], f"{where}[{i}]")


def test_the_schema_checker_finds_what_is_wrong():
    assert list(_errors({"schema": "fusionviz.query/1"}, SCHEMA, "$"))
    graph = graph_row(Graph(index=0))
    assert not list(_errors(graph, {"$ref": "#/$defs/graph"}, "$"))
    assert list(_errors({**graph, "nodes": "7"}, {"$ref": "#/$defs/graph"}, "$"))
    assert list(_errors({**graph, "new": 1}, {"$ref": "#/$defs/graph"}, "$"))


# -- query --

@pytest.mark.parametrize("path", TRACES, ids=_id)
def test_query_json_of_every_trace(path, capsys):
    code, out, err = run(capsys, "query", path, "--json")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc)
    trace = load_trace(path)
    assert doc["schema"] == "fusionviz.query/1" and doc["trace"]["path"] == str(path)
    assert doc["script"]["path"] == trace.script.path
    assert [g["index"] for g in doc["graphs"]] == [g.index for g in trace.graphs]
    assert [(k["graph"], k["name"], k["nodes"]) for k in doc["kernels"]] == [
        (g.index, k.name, list(k.nodes)) for g in trace.graphs for k in g.kernels]
    assert all(len(k["node_labels"]) == len(k["nodes"]) for k in doc["kernels"])
    assert [(r["graph"], r["round"], len(r["fused"])) for r in doc["rounds"]] == [
        (g.index, r.index, len(r.fusions)) for g in trace.graphs for r in g.rounds]
    assert len(doc["ledger"]) == sum(len(ledger_rows(r)) for g in trace.graphs for r in g.rounds)
    for g, graph in zip(doc["graphs"], trace.graphs, strict=True):
        assert [(b["reason"], b["file"], b["line"]) for b in g["break_reasons"]] == [
            (b.reason, b.file, b.line) for b in graph.break_reasons]
        assert g["recompile_reasons"] == list(graph.recompile_reasons)
        assert (g["resumed_after"] is None) == (graph.resumed_after is None)
        assert bool(g["why"]) == bool(graph.break_reasons or graph.recompile_reasons
                                      or graph.resumed_after or graph.split
                                      or frame_shown(graph.frame))


@pytest.mark.parametrize("path", TRACES, ids=_id)
def test_query_text_of_every_trace(path, capsys):
    code, out, err = run(capsys, "query", path, "--what", "all")
    assert code == 0, err
    trace = load_trace(path)
    assert all(k.name in out for g in trace.graphs for k in g.kernels)
    assert "outcome" in out and "candidates" in out


def test_query_sections_and_one_graph(capsys):
    path = DATA / "gpu_mlp_block.json.gz"
    code, out, _ = run(capsys, "query", path, "--json", "--graph", 1, "--what", "kernels")
    doc = json.loads(out)
    validate(doc)
    assert code == 0 and [g["index"] for g in doc["graphs"]] == [1]
    assert "kernels" in doc and "rounds" not in doc and "ledger" not in doc
    assert {k["graph"] for k in doc["kernels"]} == {1}
    code, out, _ = run(capsys, "query", path)  # text: graphs and kernels
    assert code == 0 and "ops · module" in out and "outcome" not in out


def test_break_and_recompile_reasons_come_from_the_graph_record():
    brk = BreakReason(reason="Failed to trace builtin operator `print`", file="/u/user.py",
                      line=12, code="print(x)", function="f")
    row = graph_row(Graph(index=0, compile_id="0/1", break_reasons=(brk,),
                          recompile_reasons=("0/0: tensor 'x' size mismatch at index 0. "
                                             "expected 8, actual 16",)))
    validate_graph(row)
    assert row["break_reasons"] == [{"reason": brk.reason, "file": "/u/user.py", "line": 12,
                                     "code": "print(x)", "function": "f"}]
    assert row["recompile_reasons"] == ["0/0: tensor 'x' size mismatch at index 0. "
                                        "expected 8, actual 16"]
    assert row["resumed_after"] is None
    assert row["why"] == ("recompiled: x.size(0) changed 8 → 16; "
                          "ends at graph break: print() at user.py:12")
    empty = graph_row(Graph(index=0))
    assert (empty["break_reasons"], empty["recompile_reasons"], empty["resumed_after"],
            empty["why"]) == ([], [], None, "")
    after = graph_row(Graph(index=1, compile_id="1/0", resumed_after=brk))
    validate_graph(after)
    assert after["resumed_after"]["line"] == 12 and after["why"] == (
        "after graph break: print() at user.py:12")


def validate_graph(row: dict) -> None:
    errors = list(_errors(row, {"$ref": "#/$defs/graph"}, "$"))
    assert not errors, errors


def test_query_errors(capsys, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, _, err = run(capsys, "query", bad, "--json")
    assert code == 2 and "bad.json" in err
    code, _, err = run(capsys, "query", DATA / "cpu_mlp_block.json.gz", "--graph", 7)
    assert code == 3 and "no graph 7" in err and "graphs: 0, 1" in err
    with pytest.raises(SystemExit) as exit_:
        main(["query", str(DATA / "cpu_mlp_block.json.gz"), "--what", "kernels,nodes"])
    assert exit_.value.code == 2 and "nodes" in capsys.readouterr().err


# -- why --

def ledger_pairs(path: Path) -> list[tuple[int, str, str, int, str, str]]:
    """(graph, a, b, round, phase, outcome): a fused and a rejected pair of the ledger,
    where it has them; two nodes of different kernels where it has no ledger."""
    trace = load_trace(path)
    rows = [(g.index, row, r.index) for g in trace.graphs for r in g.rounds
            for row in ledger_rows(r)]
    fused = next((x for x in rows if x[1]["outcome"] == "fused"), None)
    other = next((x for x in rows if x[1]["outcome"] != "fused"), None)
    pairs = [(g, row["a"][0], row["b"][0], rnd, row["phase"], row["outcome"])
             for g, row, rnd in filter(None, (fused, other))]
    if not pairs:
        g = trace.graphs[0]
        pairs = [(g.index, g.kernels[0].nodes[0], g.kernels[-1].nodes[-1], 0, "", "")]
    return pairs


@pytest.mark.parametrize("path", TRACES, ids=_id)
def test_why_answers_as_the_window_does(path, capsys, qtbot):
    from fusionviz.ui.ledger.why_not import WhyNotDialog

    trace = load_trace(path)
    for g, a, b, rnd, phase, outcome in ledger_pairs(path):
        code, out, err = run(capsys, "why", path, a, b, "--graph", g, "--json")
        assert code == 0, err
        doc = json.loads(out)
        validate(doc)
        dialog = WhyNotDialog(next(x for x in trace.graphs if x.index == g), a, b)
        qtbot.addWidget(dialog)
        why, shown = dialog.why, dialog.text.toPlainText()
        assert doc["schema"] == "fusionviz.why/1" and doc["graph"]["index"] == g
        assert (doc["a"]["name"], doc["b"]["name"]) == (a, b)
        assert doc["summary"] == why.summary and why.summary in shown
        assert doc["a"]["label"] in shown and doc["b"]["label"] in shown
        assert (doc["fused"], doc["fused_round"], doc["same_kernel"]) == (
            why.fused, why.fused_round, why.same_kernel)
        assert [tuple(d["cells"].values()) for d in doc["decisions"]] == [
            entry_cells(e) for e in why.entries]
        if outcome == "fused":
            assert doc["fused"] and doc["fused_round"] == rnd
            assert doc["summary"].startswith("fused in round")
        elif outcome:  # the ledger's decision is among those the answer lists
            assert any((d["round"], d["phase"], d["outcome"]) == (rnd, phase, outcome)
                       for d in doc["decisions"])
        code, text, _ = run(capsys, "why", path, a, b, "--graph", g)
        assert code == 0 and why.summary in text and doc["a"]["label"] in text


def test_why_takes_buffer_and_readable_names(capsys):
    path = DATA / "cpu_hub_branches.json.gz"  # one graph: no --graph needed
    code, out, _ = run(capsys, "why", path, "op2", "op3", "--json")
    answer = json.loads(out)
    label = answer["a"]["label"]
    assert code == 0 and " · " in label
    for a in ("buf2", label, label.split(" · ")[0] + " · anything"):
        code, out, _ = run(capsys, "why", path, a, "op3", "--json")
        assert code == 0 and json.loads(out)["summary"] == answer["summary"]


def test_why_errors_say_what_to_do(capsys, tmp_path):
    two = DATA / "cpu_mlp_block.json.gz"  # forward and backward both have op0, op1
    code, _, err = run(capsys, "why", two, "op0", "op1")
    assert code == 3 and "graphs 0 (forward), 1 (backward)" in err and "--graph" in err
    code, _, err = run(capsys, "why", two, "op0", "opp1", "--graph", 0)
    assert code == 3 and "no node 'opp1' in graph 0" in err and "did you mean: op1" in err
    code, _, err = run(capsys, "why", two, "op0", "op1", "--graph", 5)
    assert code == 3 and "no graph 5" in err
    code, out, _ = run(capsys, "why", two, "op0", "op13")  # op13 only in the backward
    assert code == 0 and out.startswith("graph 1 (backward")
    code, _, err = run(capsys, "why", tmp_path / "missing.json.gz", "op0", "op1")
    assert code == 2 and "missing.json.gz" in err


def test_names_in_different_graphs_never_fuse():
    def graph(index, *names):
        return Graph(index=index, nodes=tuple(Node(n, "SchedulerNode", "pointwise") for n in names))

    trace = Trace(graphs=(graph(0, "op0", "op1"), graph(1, "op2")))
    with pytest.raises(NodeLookupError, match="op0 is in graph 0 and op2 in graph 1"):
        find_pair(trace, "op0", "op2")
    assert find_pair(trace, "op1", "op0")[1:] == ("op1", "op0")


def test_as_a_subprocess(tmp_path):
    """The installed entry point's route: ``python -m fusionviz``, output on stdout,
    the same documents as ``main``, a reader stopping early is no error."""
    path = DATA / "gpu_hub_branches_bench.json.gz"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("QT_QPA_PLATFORM", None)  # no display is needed

    def cli(*argv):
        return subprocess.run([sys.executable, "-m", "fusionviz", *map(str, argv)],
                              capture_output=True, text=True, env=env, cwd=tmp_path)

    query = cli("query", path, "--json")
    assert query.returncode == 0, query.stderr
    validate(json.loads(query.stdout))
    why = cli("why", path, "op2", "op3", "--json")
    assert why.returncode == 0 and json.loads(why.stdout)["fused"] is True
    head = subprocess.run(f"{sys.executable} -m fusionviz query {path} --json | head -1",
                          shell=True, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert head.stdout == "{\n" and "Error" not in head.stderr


def test_the_readme_names_every_key_of_the_schema():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Answers from the command line", 1)[1].split("\n## ", 1)[0]
    described = ("header", "trace", "script", "graph", "collective_time", "reorder",
                 "comm_pass", "kernel", "round", "ledger_row", "query", "why", "decision",
                 "node_ref", "eager_entry", "eager_figure", "eager_map", "frame", "step")
    keys = {k for name in described for k in SCHEMA["$defs"][name].get("properties", {})}
    missing = sorted(k for k in keys if k not in section)
    assert not missing, missing
    assert "docs/query.schema.json" in section and "Exit codes" in section


def test_query_on_a_ranks_folder_says_whether_ranks_agree(capsys, tmp_path):
    folder = DATA / "ranks" / "gpu_ranks_allreduce"
    code, out, _ = run(capsys, "query", str(folder), "--json")
    doc = json.loads(out)
    validate(doc)
    assert code == 0 and doc["schema"] == "fusionviz.ranks/1" and doc["agree"] is True
    assert [d["rank"] for d in doc["differences"]] == [1] and not doc["differences"][0]["decisions"]
    assert [r["trace"]["path"] for r in doc["ranks"]] == [
        str(folder / "rank0.json.gz"), str(folder / "rank1.json.gz")]
    for rank in doc["ranks"]:  # each graph's collectives: gloo (the ranks share the GPU)
        (row,) = rank["graphs"][0]["collectives"]
        assert (row["node"], row["kind"], row["reduce_op"], row["waits"]) == (
            "op1", "all_reduce", "sum", ["op2"])
        assert row["time_kind"] == "span" and row["time_ms"] == row["span_ms"] > 0
        assert row["device_ms"] is None and row["kernels_between"] == []
    # two ranks that did not do the same: said, and what differs is listed
    from fusionviz.model.experiment.ranks import finish_ranks

    a, b = (load_trace(DATA / n) for n in ("cpu_mlp_block.json.gz", "cpu_hub_branches.json.gz"))
    for name, src in (("rank0.json.gz", "cpu_mlp_block.json.gz"),
                      ("rank1.json.gz", "cpu_hub_branches.json.gz")):
        (tmp_path / name).write_bytes((DATA / src).read_bytes())
    finish_ranks("x.py", tmp_path, [a, b])
    code, out, _ = run(capsys, "query", str(tmp_path), "--json")
    doc = json.loads(out)
    validate(doc)
    assert doc["agree"] is False and doc["differences"][0]["decisions"][0] == "graphs: 2 vs 1"
    code, out, _ = run(capsys, "query", str(tmp_path))
    assert code == 0 and "Ranks disagree" in out and "# rank 1" in out


def test_query_gives_each_pass_that_reordered_after_fusion(capsys):
    folder = DATA / "ranks" / "cpu_comm_overlap"
    code, out, _ = run(capsys, "query", str(folder / "rank0.json.gz"), "--json")
    doc = json.loads(out)
    validate(doc)
    (graph,) = doc["graphs"]
    sink, rise = graph["reorders"]
    assert (sink["name"], rise["name"], sink["error"]) == ("sink_waits_iterative",
                                                           "raise_comms", "")
    (moved,) = sink["moved"]
    (overlap,) = sink["overlaps"]
    assert moved["group"] == [overlap["wait"]] and moved["after"] > moved["before"]
    assert overlap["between_before"] == 0 < overlap["between_after"]
    assert rise["moved"] == [] and sink["summary"].startswith("moved 1 of")
    (coll,) = graph["collectives"]  # gloo on the CPU: from issue to the end of its wait
    assert coll["time_kind"] == "span" and coll["time_ms"] == coll["span_ms"] > 0
    assert len(coll["kernels_between"]) == overlap["between_after"]


def test_query_on_an_experiment_folder_that_is_not_ranks_is_refused(capsys):
    code, _, err = run(capsys, "query", str(DATA / "experiments" / "cpu_forbid_whatif_ops"))
    assert code == 2 and "is a ab experiment, not the ranks of a capture" in err


RANK_TRACES = sorted((DATA / "ranks").glob("*/rank*.json.gz"))


@pytest.mark.parametrize("path", RANK_TRACES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_query_json_has_the_ranks_profiled_step(path, capsys):
    """#21: ``step`` holds the rank's profiled train step as ``summary`` words it
    (``comms.step_overlap``): the window, the lanes, communication hidden behind the
    backward and exposed, and each collective; null where none was recorded."""
    code, out, err = run(capsys, "query", path, "--json", "--what", "graphs")
    assert code == 0, err
    doc = json.loads(out)
    validate(doc)
    trace, step = load_trace(path), doc["step"]
    calls = step_calls(trace)
    assert [g["step_calls"] for g in doc["graphs"]] == [calls.get(g.index)
                                                       for g in trace.graphs]
    if trace.step is None:
        assert step is None and not calls
        return
    o = step_overlap(trace.step)
    assert (step["window"], step["duration_ms"], step["device"]) == (
        trace.step.window, trace.step.duration_ms, trace.step.device)
    assert sum(lane["spans"] for lane in step["lanes"]) == len(trace.step.spans)
    (compute,) = [lane for lane in step["lanes"] if lane["lane"] == "compute"]
    assert compute["graph_calls"] == {str(i): n for i, n in calls.items()}
    assert (step["clock"], step["communication_ms"], step["hidden_ms"],
            step["behind_backward_ms"], step["exposed_ms"]) == (
        o.clock, o.communication_ms, o.hidden_ms, o.behind_backward_ms, o.exposed_ms)
    rows = step["collectives"]
    assert [(c["name"], c["bytes"], c["ms"], c["backward_graphs"]) for c in rows] == [
        (c.span.name, c.span.bytes, c.ms, list(c.backward)) for c in o.collectives]
    assert all(c["exposed_ms"] == pytest.approx(c["ms"] - c["hidden_ms"]) for c in rows)
    # the same figures as summary's train-step lines
    assert main(["summary", str(path)]) == 0
    said = capsys.readouterr().out
    for c in rows:
        assert (f"{c['ms']:.4g} ms ({c['ms'] - c['hidden_ms']:.4g} ms exposed), overlaps "
                f"backward graphs {', '.join(f'#{g}' for g in c['backward_graphs']) or 'none'}"
                ) in said


def test_query_json_step_of_fsdp2_on_two_gpus(capsys):
    """nccl_fsdp2_llama: the device's clock; FSDP2's 9 all-gathers and 5 reduce-scatters
    (fp32 gradients: their bytes; an all-gather kernel names no dtype: null), each with
    the backward graphs it overlaps (none on the H100s it was last recorded on)."""
    path = DATA / "ranks" / "nccl_fsdp2_llama" / "rank0.json.gz"
    assert main(["query", str(path), "--json", "--what", "graphs"]) == 0
    step = json.loads(capsys.readouterr().out)["step"]
    assert step["clock"] == "device" and step["window"].startswith("from the 2nd call")
    rows = step["collectives"]
    assert {c["lane"] for c in rows} == {"device communication"}
    assert sorted(c["kind"] for c in rows) == ["all_gather"] * 9 + ["reduce_scatter"] * 5
    assert all((c["bytes"] is None) == (c["kind"] == "all_gather") for c in rows)
    backward = {g.index for g in load_trace(path).graphs if g.kind == "backward"}
    assert {g for c in rows for g in c["backward_graphs"]} <= backward
    assert 0 <= step["behind_backward_ms"] <= step["hidden_ms"] <= step["communication_ms"]
    assert step["communication_ms"] > 0 and step["exposed_ms"] == pytest.approx(
        step["communication_ms"] - step["hidden_ms"])
    lanes = {lane["lane"]: lane for lane in step["lanes"]}
    assert lanes["device communication"]["kinds"] == {"all_gather": 9, "reduce_scatter": 5}
    assert lanes["compute"]["graph_calls"]["2"] == 4
