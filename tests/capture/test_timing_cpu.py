"""Times that a capture records on the CPU, and that capturing changes nothing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"

pytestmark = pytest.mark.torch


def _results(lines) -> list[str]:
    return [line for line in lines if line.startswith("RESULT")]


def test_a_seeded_dropout_script_prints_the_same_values_with_and_without_capture(capture):
    script = str(SCRIPTS / "seeded_dropout.py")
    plain = subprocess.run([sys.executable, script], capture_output=True, text=True,
                           check=True, env={**os.environ, "CUDA_VISIBLE_DEVICES": ""})
    # run_capture(script, out, device="cpu", on_output=printed.append), shared with
    # the next test
    trace = capture("seeded_dropout.py")
    printed = capture.printed("seeded_dropout.py")
    assert trace.script.status == "ok", trace.script.traceback
    assert [g.timing is not None for g in trace.graphs] == [True, True]  # it was timed
    assert _results(printed) == _results(plain.stdout.splitlines())
    assert len(_results(printed)) == 4


def test_a_graph_with_random_ops_is_not_compared_with_eager(capture):
    trace = capture("seeded_dropout.py")
    forward = trace.graphs[0]
    assert forward.timing.max_abs_diff is None
    assert forward.timing.diff_note.startswith("random ops")
    backward = trace.graphs[1]  # no random op: compared, and equal
    assert backward.timing.diff_note == "" and backward.timing.max_abs_diff < 1e-4


def test_times_come_with_their_spread_repeats_and_the_machines_load(capture):
    t = capture("mlp_block").graphs[0].timing
    assert t.repeats >= 3 and t.compiled_wall_ms == t.compiled_ms  # CPU: wall time
    low, high = t.compiled_spread
    assert low <= t.compiled_ms <= high
    assert t.eager_ms is not None and len(t.eager_spread) == 2
    assert t.load["cores"] >= 1 and t.load["loadavg_1m"] >= 0
    assert t.profiled_calls == 0 and t.compiled_device_ms is None  # no GPU here


def test_kernels_are_launches_and_fallbacks_are_timed(capture):
    graph = capture("fallbacks.py").graphs[0]
    kinds = {k.name.split(":")[0]: k for k in graph.kernels}
    assert not any(name == "MultiOutput" for name in kinds), list(kinds)
    fallbacks = [k for k in graph.kernels if k.name.startswith("torch.ops.")]
    assert len(fallbacks) == 3  # sort, attention, cumsum
    for k in graph.kernels:
        assert k.calls == 1 and k.ms is not None and k.ms > 0, k.name
        assert k.ms_spread[0] <= k.ms <= k.ms_spread[1], k.name
    # the MultiOutput nodes (extern nodes without a callable) stay nodes, in no kernel
    multi = [n.name for n in graph.nodes if n.category == "extern" and not n.extern_kernel]
    assert len(multi) == 3
    assert all(not any(n in k.nodes for k in graph.kernels) for n in multi)


def test_the_compiled_adamw_step_gets_an_eager_time_or_says_why_not(capture):
    trace = capture("adamw_step.py")
    assert trace.script.status == "ok", trace.script.traceback
    for g in trace.graphs:
        assert g.timing is not None and g.timing.compiled_ms is not None
        assert g.timing.eager_ms is not None or g.timing.eager_source.startswith("none: "), \
            g.timing


def test_the_eager_baseline_is_the_program_and_the_dynamo_graph_stays_beside_it(capture):
    """mlp_block compiles its module in one frame: the module run eagerly (the program)
    is the eager baseline, and the Dynamo graph run eagerly stays beside it."""
    forward, backward = capture("mlp_block").graphs
    assert forward.timing.eager_source == "your program, eager forward (GatedMLPBlock)"
    assert backward.timing.eager_source == "your program, eager autograd backward (GatedMLPBlock)"
    for g in (forward, backward):
        t = g.timing
        assert t.eager_ms is not None and t.eager_wall_ms == t.eager_ms  # CPU: wall
        assert t.eager_spread[0] <= t.eager_ms <= t.eager_spread[1]
        assert t.dynamo_eager_ms is not None and t.dynamo_eager_wall_ms == t.dynamo_eager_ms
