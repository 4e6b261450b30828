"""Capture the bundled examples with real torch.compile on the CPU and check the record."""

from pathlib import Path

import pytest

from fusionviz.model.comms.step_overlap import SINGLE_PROCESS
from fusionviz.model.trace import OUTCOMES

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"

pytestmark = pytest.mark.torch


def _all_groups_partition(groups, names):
    flat = [n for g in groups for n in g]
    return sorted(flat) == sorted(names)


def test_forward_and_backward_give_two_graphs(capture):
    trace = capture("mlp_block")
    assert trace.script.status == "ok", trace.script.traceback
    kinds = [g.kind for g in trace.graphs]
    assert kinds == ["forward", "backward"]
    assert trace.env["torch"].startswith("2.")
    assert not trace.problems, trace.problems
    # one process: no collectives, so no train step is profiled, and the trace says why
    assert trace.step.note == SINGLE_PROCESS and not trace.step.spans


def test_nodes_rounds_and_kernels_are_consistent(capture):
    fwd = capture("mlp_block").graphs[0]
    names = [n.name for n in fwd.nodes]
    cats = {n.name: n.category for n in fwd.nodes}
    assert "extern" in cats.values() and "reduction" in cats.values()
    assert any(n.extern_kernel.startswith("extern_kernels.") for n in fwd.nodes)
    assert fwd.edges and all(e.src in names and e.dst in names for e in fwd.edges)
    # the layer norm's nodes come from the user's source line
    ln = [n for n in fwd.nodes if "var_mean" in n.ops]
    assert ln and all(o.file.endswith("mlp_block.py") and "self.norm" in o.code
                      for n in ln for o in n.origins)
    # rounds: each round's groups partition the nodes, groups only ever merge
    assert fwd.rounds and fwd.rounds[0].index == 1
    assert _all_groups_partition(fwd.rounds[0].groups_before, names)
    for r in fwd.rounds:
        assert _all_groups_partition(r.groups_after, names)
        assert len(r.groups_after) == len(r.groups_before) - len(r.fusions)
        assert all(c.outcome in OUTCOMES for c in r.candidates)
        assert [c.rank for c in r.candidates] == list(range(len(r.candidates)))
    first = fwd.rounds[0]
    assert first.fusions and all(f.bytes_saved > 0 for f in first.fusions)
    fused = [c for c in first.candidates if c.outcome == "fused"]
    assert len(fused) == len(first.fusions)
    assert all("memory_score" in c.score for c in first.candidates)
    # kernels: every non-extern node is in exactly one generated kernel
    kernel_nodes = [n for k in fwd.kernels if k.backend == "cpp" for n in k.nodes]
    computed = [n.name for n in fwd.nodes if n.category not in ("extern", "nop")]
    assert sorted(kernel_nodes) == sorted(computed)
    for k in fwd.kernels:
        assert k.calls == 1 and k.source
        assert k.ms is not None and k.ms > 0
        if k.backend == "cpp":
            assert k.name.startswith("cpp_fused_") and "extern \"C\"" in k.source
    assert fwd.timing.compiled_ms > 0 and fwd.timing.eager_ms > 0


def test_rejections_carry_reasons(capture):
    bwd = capture("mlp_block").graphs[1]
    verdicts = [v for r in bwd.rounds for v in r.verdicts]
    assert verdicts and all(not v.ok and v.reasons for v in verdicts)
    assert any("no shared data" in x.text for v in verdicts for x in v.reasons)


def test_graph_break_gives_one_graph_per_piece(capture):
    trace = capture("graph_break")
    assert trace.script.status == "ok"
    assert len(trace.graphs) == 2
    assert len({g.compile_id for g in trace.graphs}) == 2
    assert all(g.kernels for g in trace.graphs)
    # why: the first piece ends at .item() (line 22), Dynamo then breaks again at the
    # print() of that line in a frame with no graph, and the second piece resumes after it
    first, second = trace.graphs
    (brk,) = first.break_reasons
    assert (brk.line, brk.function) == (22, "step") and "item()" in brk.code
    assert "Tensor.item()" in brk.reason
    assert second.resumed_after is not None and "print" in second.resumed_after.reason
    assert second.resumed_after.line == 22 and second.break_reasons == ()


def test_hub_example_records_reductions(capture):
    g = capture("hub_branches").graphs[0]
    assert sum(n.category == "reduction" for n in g.nodes) >= 4
    assert len(g.final_groups) < len(g.nodes)


def test_crash_after_compile_keeps_the_graph(capture):
    trace = capture("crash_after_compile.py")
    assert trace.script.status == "crashed"
    assert "SIGABRT" in trace.script.message
    assert len(trace.graphs) == 1 and trace.graphs[0].kernels


def test_error_after_compile_keeps_graph_and_traceback(capture):
    trace = capture("fails_after_compile.py")
    assert trace.script.status == "error"
    assert "boom after the first graph" in trace.script.traceback
    assert len(trace.graphs) == 1


def test_syntax_error_is_reported(capture):
    trace = capture("syntax_error.py")
    assert trace.script.status == "error"
    assert "SyntaxError" in trace.script.message
    assert not trace.graphs


def test_script_without_compile_says_so(capture):
    from fusionviz.model.capture.no_graph import NOTHING

    trace = capture("no_compile.py")
    assert trace.script.status == "no_graphs"
    assert trace.script.message == NOTHING  # Dynamo recorded nothing: the old question
    assert "does it call torch.compile" in trace.script.message


def test_another_backend_is_named_as_the_reason_for_no_graph(capture):
    trace = capture("aot_eager.py")
    assert trace.script.status == "no_graphs"
    assert "Dynamo compiled 1 graph, but none reached Inductor" in trace.script.message
    assert 'backend="aot_eager"' in trace.script.message


def _line_of(script: str, text: str) -> int:
    lines = (SCRIPTS / script).read_text().splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


def test_a_compiled_ddp_module_gives_every_rank_dynamos_reason_and_the_fix(
        tmp_path, capsys):
    """torch.compile(DDP(model)) on torch 2.13: Dynamo skips DDP's forward and never
    compiles the Sequential inside. Each rank's status says so, from the user's line,
    and suggests DDP(torch.compile(model)); the terminal's rank lines too."""
    from fusionviz.cli.main import main
    from fusionviz.model.run.runner import rank_paths
    from fusionviz.model.tracefile.io import load_trace

    folder = tmp_path / "ranks"
    assert main(["capture", "--nproc-per-node", "2", "--device", "cpu", "--no-timing",
                 "-o", str(folder), str(SCRIPTS / "ddp_compile_outer.py")]) == 1
    printed = capsys.readouterr().out
    call = f"ddp_compile_outer.py:{_line_of('ddp_compile_outer.py', 'loss = step(')}"
    for rank, path in enumerate(rank_paths(folder, 2)):
        script = load_trace(path).script
        assert script.status == "no_graphs", script.traceback
        first, *rest = script.message.splitlines()
        assert "Dynamo recorded 3 graph breaks and 3 skipped frames" in first
        assert "DDP(torch.compile(model)), not torch.compile(DDP(model))" in first
        assert f"rank {rank}: status   no_graphs: {first}" in printed
        assert rest[0] == "What Dynamo recorded:"
        # the skipped DDP function first (it has the advice), reached from the user's call
        assert "`DistributedDataParallel._inside_ddp_forward`" in rest[1]
        assert rest[1].startswith("- graph break: Attempted to call function marked as skipped")
        assert f"from {call}]" in rest[1] and rest[1].endswith("(×2)")
        assert any("Attempt to trace generator" in line and f"from {call}]" in line
                   for line in rest)
        assert "site-packages" not in script.message  # paths shortened
        assert rest[-1].startswith("Also try: run with TORCH_LOGS=graph_breaks")
        assert len(script.message) <= 2000


def test_a_compiled_generator_and_prints_are_listed_bounded_with_the_users_lines(capture):
    trace = capture("nothing_compiles.py", timing=False)
    assert trace.script.status == "no_graphs", trace.script.traceback
    first, heading, *rest = trace.script.message.splitlines()
    assert "Dynamo recorded 6 graph breaks and 1 skipped frame" in first
    assert "Try: compile the function that calls the generator" in first
    listed = [line for line in rest if line.startswith("- ")]
    assert len(listed) == 5 and "… and 2 more" in rest  # 7 places, the first 5 listed
    gen = _line_of("nothing_compiles.py", "def batches")
    assert listed[0] == ("- frame skipped: Attempt to trace generator: Generators cannot be "
                         f"compiled directly with `torch.compile`. [at nothing_compiles.py:{gen}"
                         " batches]")
    prints = [_line_of("nothing_compiles.py", f'print("step", step{k})')
              for k in ("", " + 1", " + 2", " + 3")]
    assert [int(line.split("nothing_compiles.py:")[1].split()[0]) for line in listed[1:]] \
        == prints
    assert all("builtin operator `print`" in line for line in listed[1:])
    assert rest[-2] == "Also try: move print() out of the compiled code: Dynamo breaks " \
        "the graph at each call."


def test_the_reasons_fit_the_bound_and_come_from_dynamos_counters_without_hooks():
    """In this process: the reasons recorded by the hooks, cut to a small bound (whole
    lines dropped, not text), and the same reasons from torch._dynamo's counters when
    no hook recorded them (a torch whose hooks moved): without a place, so no advice
    that needs one."""
    import torch
    from torch._dynamo.utils import counters

    from fusionviz.model.capture.dynamo_reasons import DynamoReasons
    from fusionviz.model.capture.no_graph import LOGS, no_graph_message, reasons_message
    from fusionviz.model.capture.patcher import Patcher

    def batches(x):
        yield x * 2.0

    def say(step):
        print("step", step)

    def shout(step):
        print("STEP", step)

    errors = []
    reasons = DynamoReasons()
    patcher = Patcher(lambda where, tb: errors.append(tb))
    torch._dynamo.reset()
    counters.clear()
    try:
        reasons.install(patcher)
        list(torch.compile(batches)(torch.randn(4)))
        torch.compile(say)(1)
        torch.compile(shout)(2)
    finally:
        patcher.undo()
    try:
        assert not errors, errors
        assert [e.kind for e in reasons.events] == ["frame skipped", "graph break",
                                                    "graph break"]
        full = reasons_message(reasons.events, limit=2000)
        assert full.count("\n- ") == 3 and "more" not in full
        cut = reasons_message(reasons.events, limit=len(full) - 1)
        assert len(cut) < len(full) and cut.count("\n- ") == 2
        assert cut.splitlines()[0] == full.splitlines()[0] and "… and 1 more" in cut
        from_counters = no_graph_message(None)
        assert "Dynamo recorded 2 graph breaks and 1 skipped frame" in from_counters
        assert "frame skipped: Attempt to trace generator" in from_counters
        assert "[at " not in from_counters and "calls the generator" not in from_counters
        assert "move print() out of the compiled code" in from_counters.splitlines()[0]
        assert from_counters.splitlines()[-1] == f"Also try: {LOGS}."
    finally:
        counters.clear()
        torch._dynamo.reset()


def test_timeout_stops_the_script(capture):
    trace = capture("hang_before_compile.py", timeout=8)
    assert trace.script.status == "timeout"
    assert "time limit (--timeout)" in trace.script.message


def test_nodes_know_the_module_they_come_from_forward_and_backward(capture):
    trace = capture("blocks.py")
    assert trace.script.status == "ok", trace.script.traceback
    forward, backward = trace.graphs

    def classes(graph):
        return {(n.module, n.module_class) for n in graph.nodes}

    assert {("h.0.ln", "LayerNorm"), ("h.1.fc", "Linear"), ("h.2.fc", "Linear")} <= classes(forward)
    # backward nodes: the modules of the forward ops they differentiate
    assert {("h.1.ln", "LayerNorm"), ("h.0.fc", "Linear"), ("h.2.fc", "Linear")} <= classes(backward)
    # a node lowered from ops of two blocks (a residual add fused into the next norm)
    # is in the deepest module both ran in: the ModuleList (no class: it is never called)
    mixed = next(n for n in forward.nodes if {o.module for o in n.origins} >= {"h.0", "h.1.ln"})
    assert (mixed.module, mixed.module_class) == ("h", "")
    assert all(n.module.startswith("h") for g in trace.graphs for n in g.nodes)


def test_a_child_left_holding_stdout_neither_holds_the_capture_nor_outlives_it(tmp_path, alive):
    import re
    import time

    from fusionviz.model.run.runner import run_capture

    scripts = __import__("pathlib").Path(__file__).parents[1] / "data" / "scripts"
    lines: list[str] = []
    t0 = time.monotonic()
    trace = run_capture(str(scripts / "leaves_a_child.py"), str(tmp_path / "t.json.gz"),
                        device="cpu", on_output=lines.append)
    assert time.monotonic() - t0 < 60  # not the child's 120 s
    assert trace.script.status == "no_graphs"
    pid = int(re.search(r"child pid (\d+)", "\n".join(lines)).group(1))
    time.sleep(0.5)
    assert not alive(pid), "the script's child still runs after the capture"


def test_the_capture_adds_no_warning_of_its_own_to_the_scripts_output(tmp_path):
    """Turning Inductor's caches off makes torch warn that dynamo_pgo is disabled: that
    is fusionviz's doing, so the child does not pass it on to the user."""
    import subprocess

    from fusionviz.model.run.runner import capture_argv, capture_env

    argv = capture_argv(str(SCRIPTS / "aot_eager.py"), str(tmp_path / "t.json.gz"),
                        device="cpu")
    done = subprocess.run(argv, env=capture_env(str(tmp_path / "cache")), text=True,
                          capture_output=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "dynamo_pgo" not in done.stderr and "UserWarning" not in done.stderr


def test_a_huge_error_is_kept_bounded_in_the_trace(capture):
    trace = capture("huge_error.py")
    assert trace.script.status == "error"
    assert trace.script.message.startswith("ValueError: xxx") and len(trace.script.message) <= 2000
    assert len(trace.script.traceback) < 17_000
    assert trace.script.traceback.startswith("[… ") and "characters cut …]" in trace.script.traceback


def test_a_process_that_will_not_exit_after_its_trace_is_ended_keeping_the_status(
        tmp_path, monkeypatch):
    """A thread the script leaves running blocks the interpreter's exit (a GPT-2 step
    with the CUDA profiler did so on the H100 for minutes after its final trace): the
    capture ends the process soon after, and says so, instead of a timeout."""
    import time

    from fusionviz.model.run import runner

    monkeypatch.setattr(runner, "EXIT_AFTER_DONE_S", 1.0)
    t0 = time.monotonic()
    trace = runner.run_capture(str(SCRIPTS / "lingers_at_exit.py"),
                               str(tmp_path / "t.json.gz"), device="cpu", timeout=120)
    assert time.monotonic() - t0 < 60
    assert trace.script.status == "no_graphs"  # what the script did, not "timeout"
    assert "did not exit after it finished" in trace.script.message
