"""Why a script gave several graphs, captured for real on the CPU: the graph break of
``breaks.py`` (a print() in the compiled function) and the recompiles of
``recompiles.py`` (a new shape, then a new dtype, with dynamic=False), as the trace,
``summary``, ``query --json`` and the graphs list show them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.model.report.graph_reasons import why_short, why_text
from fusionviz.model.tracefile.io import load_trace, save_trace

pytestmark = pytest.mark.torch

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"
SIZE_GUARD = "0/0: tensor 'x' size mismatch at index 0. expected 8, actual 16"


def _line_of(script: str, text: str) -> int:
    lines = (SCRIPTS / script).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


@pytest.fixture
def breaks(capture):
    trace = capture("breaks.py", timing=False)
    assert trace.script.status == "ok", trace.script.traceback
    return trace


@pytest.fixture
def recompiles(capture):
    trace = capture("recompiles.py", timing=False)
    assert trace.script.status == "ok", trace.script.traceback
    return trace


def _cli(capsys, tmp_path, trace, *argv) -> str:
    path = tmp_path / "trace.json.gz"
    save_trace(trace, str(path))
    assert main([argv[0], str(path), *argv[1:]]) == 0
    return capsys.readouterr().out


def test_the_graph_before_a_break_records_the_users_line_and_dynamos_reason(breaks):
    assert not breaks.problems, breaks.problems
    assert not [m for m in breaks.capabilities.missing if "reason" in m]
    assert {"OutputGraph.compile_subgraph (graph-break reasons)",
            "convert_frame.get_and_maybe_log_recompilation_reasons (recompile reasons)",
            } <= set(breaks.capabilities.installed)
    before, after = breaks.graphs
    assert (before.compile_id, after.compile_id) == ("0/0", "1/0")
    (brk,) = before.break_reasons
    assert os.path.basename(brk.file) == "breaks.py"
    assert brk.line == _line_of("breaks.py", 'print("between the two graphs")')
    assert brk.code.startswith('print("between the two graphs")')
    assert brk.function == "step"
    assert "print" in brk.reason  # torch 2.13: "Failed to trace builtin operator `print` ..."
    # the piece after the break is Dynamo's resume function: a new frame, no break of its own
    assert after.break_reasons == () and after.resumed_after == brk
    assert before.resumed_after is None
    assert before.recompile_reasons == after.recompile_reasons == ()


def test_recompiles_record_the_failed_guard(recompiles):
    assert not recompiles.problems, recompiles.problems
    first, shape, dtype = recompiles.graphs
    assert [g.compile_id for g in recompiles.graphs] == ["0/0", "0/1", "0/2"]
    assert first.recompile_reasons == ()
    assert shape.recompile_reasons == (SIZE_GUARD,)
    # the third compile failed a guard of each earlier one: both on the dtype
    assert dtype.recompile_reasons and all(
        "tensor 'x' dtype mismatch. expected Float, actual Double" in r
        for r in dtype.recompile_reasons)
    assert [r.split(":")[0] for r in dtype.recompile_reasons] == ["0/1", "0/0"]
    assert all(g.break_reasons == () and g.resumed_after is None for g in recompiles.graphs)


def test_summary_lists_the_reasons_per_graph(breaks, recompiles, capsys, tmp_path):
    line = _line_of("breaks.py", 'print("between the two graphs")')
    out = _cli(capsys, tmp_path, breaks, "summary")
    graph0, graph1 = out.split("\ngraph ")[1:]
    assert f"  ends at graph break: print() at {SCRIPTS / 'breaks.py'}:{line} in step" in graph0
    assert '      print("between the two graphs")' in graph0
    assert f"  after graph break: print() at breaks.py:{line}" in graph1
    out = _cli(capsys, tmp_path, recompiles, "summary")
    assert ("  recompiled: x.size(0) changed 8 → 16 (failed guard "
            f"{SIZE_GUARD})") in out
    assert "  recompiled: x dtype changed Float → Double" in out


def test_query_json_carries_the_reasons(breaks, recompiles, capsys, tmp_path):
    from tests.test_cli_query import validate

    doc = json.loads(_cli(capsys, tmp_path, breaks, "query", "--json", "--what", "graphs"))
    validate(doc)
    before, after = doc["graphs"]
    (brk,) = before["break_reasons"]
    assert brk["function"] == "step" and brk["file"].endswith("breaks.py")
    assert brk["line"] == _line_of("breaks.py", 'print("between the two graphs")')
    assert before["why"] == f"ends at graph break: print() at breaks.py:{brk['line']}"
    assert after["resumed_after"] == brk and after["break_reasons"] == []
    doc = json.loads(_cli(capsys, tmp_path, recompiles, "query", "--json", "--what", "graphs"))
    validate(doc)
    assert [g["recompile_reasons"][:1] for g in doc["graphs"]][:2] == [[], [SIZE_GUARD]]
    assert doc["graphs"][1]["why"] == "recompiled: x.size(0) changed 8 → 16"
    text = _cli(capsys, tmp_path, recompiles, "query")
    assert "recompiled: x dtype changed Float → Double (+1 more)" in text


def test_graphs_list_says_why_and_explains_the_compile_id(breaks, recompiles, qtbot):
    from fusionviz.ui.graphs_list import WHY, GraphsList
    from fusionviz.ui.view_state import ViewState

    state = ViewState()
    widget = GraphsList(state)
    qtbot.addWidget(widget)
    state.set_trace(breaks)
    line = _line_of("breaks.py", 'print("between the two graphs")')
    before, after = widget.topLevelItem(0), widget.topLevelItem(1)
    assert before.text(0) == "#0 inference [0/0]"
    assert before.text(WHY) == f"ends at graph break: print() at breaks.py:{line}"
    assert after.text(WHY) == f"after graph break: print() at breaks.py:{line}"
    tip = before.toolTip(WHY)
    assert f"breaks.py:{line} in step" in tip and 'print("between the two graphs")' in tip
    assert "print" in tip.split("in step", 1)[1]  # Dynamo's reason, whole
    assert "frame 1 (the 2nd function Dynamo compiled), compile 0" in after.toolTip(0)
    state.set_trace(recompiles)
    shape = widget.topLevelItem(1)
    assert shape.text(0) == "#1 inference [0/1]"
    assert shape.text(WHY) == "recompiled: x.size(0) changed 8 → 16"
    assert SIZE_GUARD in shape.toolTip(WHY)
    assert ("Compile id [0/1]: frame 0 (the 1st function Dynamo compiled), compile 1 "
            "(its 2nd compilation: a recompile)") in shape.toolTip(0)
    assert widget.topLevelItem(0).text(WHY) == ""


def test_traces_recorded_before_load_with_no_reasons():
    data = Path(__file__).parents[1] / "data"
    older = [p for p in sorted(data.glob("*.json.gz"))
             if p.name not in ("gpu_breaks.json.gz", "gpu_recompiles.json.gz")]
    for path in older:
        for lazy in (False, True):
            trace = load_trace(str(path), lazy=lazy)
            assert all(g.break_reasons == () and g.recompile_reasons == ()
                       and g.resumed_after is None for g in trace.graphs), path


# -- the hooks on their own: what older torch versions do, and missing hooks --

def test_missing_dynamo_hooks_are_listed_and_compile_metrics_stand_in(monkeypatch):
    import torch._dynamo.convert_frame as convert_frame
    import torch._dynamo.output_graph as output_graph

    from fusionviz.model.capture.dynamo_reasons import DynamoReasons
    from fusionviz.model.capture.patcher import Patcher

    monkeypatch.delattr(convert_frame, "get_and_maybe_log_recompilation_reasons")
    monkeypatch.delattr(output_graph.OutputGraph, "compile_subgraph")
    p = Patcher(lambda where, tb: None)
    DynamoReasons().install(p)
    try:
        assert p.missing == ["OutputGraph.compile_subgraph (graph-break reasons)",
                             "convert_frame.get_and_maybe_log_recompilation_reasons "
                             "(recompile reasons)"]
        assert any("get_compilation_metrics" in x for x in p.installed)
    finally:
        p.undo()


def test_reasons_met_outside_a_compile_context_go_to_the_next_compile():
    """Older torch computes recompile reasons before entering the new compile's
    context; Dynamo's resume functions name the break they follow."""
    from traceback import FrameSummary
    from types import SimpleNamespace

    from torch._guards import CompileContext, CompileId, compile_context

    from fusionviz.model.capture.dynamo_reasons import DynamoReasons
    from fusionviz.model.capture.patcher import Patcher

    errors = []
    r = DynamoReasons()
    r._p = Patcher(lambda where, tb: errors.append(tb))

    def compile_subgraph(frame, compile_, code_name, reason):
        tx = SimpleNamespace(f_code=SimpleNamespace(co_name=code_name))
        with compile_context(CompileContext(CompileId(frame_id=frame, frame_compile_id=compile_))):
            r._on_compile_subgraph(None, (SimpleNamespace(root_tx=tx), tx), {"reason": reason})

    stack = [FrameSummary("/u/train.py", 9, "main", line="loss = step(x)"),
             FrameSummary("/u/train.py", 4, "step", line="print(y)")]
    brk = SimpleNamespace(reason="call_function BuiltinVariable(print) [TensorVariable()] {}",
                          user_stack=stack, graph_break=True)  # torch 2.5's wording
    compile_subgraph(0, 0, "step", brk)
    ret = SimpleNamespace(reason="return_value", user_stack=stack, graph_break=False)
    compile_subgraph(1, 0, "torch_dynamo_resume_in_step_at_4", ret)
    r._on_recompile(["1/0: tensor 'y' size mismatch at index 0. expected 8, actual 16"])
    compile_subgraph(1, 1, "torch_dynamo_resume_in_step_at_4", ret)
    assert not errors, errors
    (b,) = r.for_graph("0/0")["break_reasons"]
    assert (b.file, b.line, b.code, b.function) == ("/u/train.py", 4, "print(y)", "step")
    assert r.for_graph("0/0")["resumed_after"] is None
    assert r.for_graph("1/0") == {"break_reasons": (), "recompile_reasons": (),
                                  "resumed_after": b, "frame": None}
    assert r.for_graph("0/0")["frame"].function == "step"  # not a resume: where it starts
    assert r.for_graph("1/1")["recompile_reasons"] == (
        "1/0: tensor 'y' size mismatch at index 0. expected 8, actual 16",)


def test_a_resume_names_the_break_made_inside_the_call_it_resumes_after():
    """FSDP2's hook breaks the graph inside torch's code (its innermost frame), under the
    user's call of the wrapped module: the resume function after that call names the
    break, found by the user's frame in the break's stack."""
    from traceback import FrameSummary
    from types import SimpleNamespace

    from torch._guards import CompileContext, CompileId, compile_context

    from fusionviz.model.capture.dynamo_reasons import DynamoReasons
    from fusionviz.model.capture.patcher import Patcher

    errors = []
    r = DynamoReasons()
    r._p = Patcher(lambda where, tb: errors.append(tb))

    def compile_subgraph(frame, code_name, reason):
        tx = SimpleNamespace(f_code=SimpleNamespace(co_name=code_name))
        with compile_context(CompileContext(CompileId(frame_id=frame, frame_compile_id=0))):
            r._on_compile_subgraph(None, (SimpleNamespace(root_tx=tx), tx), {"reason": reason})

    stack = [FrameSummary("/u/model.py", 19, "forward", line="return self.up(x)"),
             FrameSummary("/t/_fsdp_common.py", 30, "wrapper", line="return disable(")]
    brk = SimpleNamespace(reason="Attempted to call function marked as skipped",
                          user_stack=stack, graph_break=True)
    compile_subgraph(0, "forward", brk)
    ret = SimpleNamespace(reason="return_value", user_stack=stack, graph_break=False)
    compile_subgraph(1, "torch_dynamo_resume_in_forward_at_19", ret)
    compile_subgraph(2, "torch_dynamo_resume_in_forward_at_20", ret)
    assert not errors, errors
    (b,) = r.for_graph("0/0")["break_reasons"]
    assert (b.function, b.line) == ("wrapper", 30)
    assert r.for_graph("1/0")["resumed_after"] == b
    assert r.for_graph("2/0")["resumed_after"] is None  # no break at line 20


def test_torch_2_11s_dynamo_gives_the_same_reasons_on_the_gpu():
    """Recorded on an H100 with torch 2.11 (Triton kernels): the hooks hold there too."""
    data = Path(__file__).parents[1] / "data"
    breaks = load_trace(data / "gpu_breaks.json.gz")
    assert breaks.env["torch"].startswith("2.11") and not breaks.capabilities.missing
    assert all(k.backend == "triton" for g in breaks.graphs for k in g.kernels)
    before, after = breaks.graphs
    (brk,) = before.break_reasons
    assert brk.line == _line_of("breaks.py", 'print("between the two graphs")')
    assert brk.file.endswith("breaks.py") and "print" in brk.code
    assert after.resumed_after is not None and after.resumed_after.line == brk.line
    recompiles = load_trace(data / "gpu_recompiles.json.gz")
    reasons = [r for g in recompiles.graphs for r in g.recompile_reasons]
    assert SIZE_GUARD in reasons
    assert any("dtype mismatch. expected Float, actual Double" in r for r in reasons)


def test_the_compiled_functions_frame_records_its_code_and_caller(breaks):
    """The function handed to torch.compile: its frame's code and the user's line that
    called it, said in full (summary, tooltip), not as a reason in the graphs list."""
    before, after = breaks.graphs
    f = before.frame
    assert (f.function, os.path.basename(f.file), f.line) == (
        "step", "breaks.py", _line_of("breaks.py", "def step("))
    assert (f.entry, f.module, f.module_class, f.modules, f.wrapped_by) == (
        True, "", "", (), "")
    call = _line_of("breaks.py", "torch.compile(step)")
    assert f.caller == f"{SCRIPTS / 'breaks.py'}:{call} in <module>"
    assert after.frame is None  # Dynamo's resume function: resumed_after says why
    assert why_short(before).startswith("ends at graph break")
    assert why_text(before).startswith("This graph's frame starts at step (")


def test_a_blocks_forward_under_an_eager_loop_is_a_frame_of_its_own(capture, capsys,
                                                                     tmp_path):
    """loop_break.py: Dynamo skips the model's frame (a graph break in its loop) and
    compiles the block's forward as a frame of its own, with no graph break before
    it, called by the model's eager loop: the graph names the frame and its module."""
    trace = capture("loop_break.py", timing=False)
    assert trace.script.status == "ok", trace.script.traceback
    (g,) = trace.graphs
    assert not g.break_reasons and g.resumed_after is None and not g.recompile_reasons
    f = g.frame
    assert (f.function, f.module, f.module_class, f.wrapped_by, f.entry) == (
        "Block.forward", "blocks.0", "Block", "", False)
    assert f.modules == ("blocks.0", "blocks.1", "blocks.2")
    assert f.line == _line_of("loop_break.py", "def forward(self, x):")
    assert f.caller.endswith(f"loop_break.py:{_line_of('loop_break.py', 'x = block(x)')}"
                             " in forward")
    said = "a frame of its own: Block.forward (blocks.0 of blocks.*)"
    assert why_short(g) == said
    assert ("reuses this graph for each call from untraced code that its guards accept"
            in why_text(g))
    assert f"  {said}" in _cli(capsys, tmp_path, trace, "summary").splitlines()
