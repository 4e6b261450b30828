"""What the recorded times mean: device or wall, spreads, noise and load."""

from __future__ import annotations

from dataclasses import replace

import pytest

from fusionviz.model.experiment.compare import compare, spreads, within_noise
from fusionviz.model.queries import load_warning, time_kind
from fusionviz.model.report.summary import graph_lines, timing_lines
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import Timing


def _timed(compiled: float, low: float, high: float, **kw):
    trace = synthetic_trace(50, seed=1, rounds=2)
    t = Timing(compiled_ms=compiled, compiled_spread=(low, high), eager_ms=2 * compiled,
               eager_spread=(2 * low, 2 * high), repeats=20, **kw)
    return replace(trace, graphs=tuple(replace(g, timing=t) for g in trace.graphs))


def test_overlapping_spreads_are_reported_as_within_noise_not_as_a_percentage():
    a, b = _timed(1.0, 0.9, 1.3), _timed(1.1, 1.0, 1.4)
    rows = {m: change for m, _x, _y, change in compare(a, b).rows}
    assert rows["Compiled runtime (ms)"] == "within noise"
    assert rows["Compiled speedup vs eager"] == "within noise"  # a ratio of noisy times
    far = _timed(2.0, 1.9, 2.1)
    rows = {m: change for m, _x, _y, change in compare(a, far).rows}
    assert rows["Compiled runtime (ms)"] == "+100.0%"


def test_spreads_add_up_over_graphs_and_need_every_graph():
    trace = _timed(1.0, 0.5, 2.0)
    n = len(trace.graphs)
    assert spreads(trace)["Compiled runtime (ms)"] == (0.5 * n, 2.0 * n)
    untimed = replace(trace, graphs=(*trace.graphs, replace(trace.graphs[0], timing=None)))
    assert "Compiled runtime (ms)" not in spreads(untimed)
    assert not within_noise(None, (1.0, 2.0)) and within_noise((1.0, 2.0), (2.0, 3.0))


def test_device_times_are_named_so_and_a_busy_machine_is_warned_about():
    assert time_kind(Timing(compiled_ms=1.0, profiled_calls=3)) == "device"
    assert time_kind(Timing(compiled_ms=1.0)) == "wall"
    assert load_warning(Timing(load={"loadavg_1m": 1.5, "cores": 2})) == ""
    busy = Timing(compiled_ms=1.0, load={"loadavg_1m": 5.2, "cores": 2})
    assert "load 5.2 on 2 cores" in load_warning(busy)
    graph = replace(synthetic_trace(50, seed=1).graphs[0], timing=busy)  # a notice
    assert any(line.startswith("  notice: graph 0 timing: timed while the machine was busy")
               for line in graph_lines(graph))


def test_random_graphs_say_why_their_outputs_were_not_compared():
    t = Timing(compiled_ms=1.0, diff_note="random ops: outputs not compared")
    assert "  random ops: outputs not compared" in timing_lines(t)


def test_bandwidth_is_one_launchs_bytes_over_one_launchs_time():
    from fusionviz.model.report.chart_data import achieved_gb_s, kernel_tip
    from fusionviz.model.trace import Kernel

    k = Kernel("triton_poi_0", "poi", "triton", bytes=36 * 2**20, ms=0.1579, calls=12)
    assert achieved_gb_s(k) == pytest.approx(36 * 2**20 / (0.1579 / 12) / 1e6)
    tip = kernel_tip(k, peak_gb_s=3352.3)
    assert "0.1579 ms per graph call, 12 launches" in tip and "% of peak" in tip
    assert achieved_gb_s(Kernel("k", "poi", "triton", bytes=None, ms=1.0)) is None

