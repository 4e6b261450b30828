"""The window opens traces lazily and finishes them in idle time (TraceCompleter)."""

from __future__ import annotations

import gc
import gzip
import json

import pytest

from fusionviz.model import lazy
from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import load_trace, save_trace, to_dict
from fusionviz.ui.idle_work import IdleWork


@pytest.fixture
def big_path(tmp_path):
    path = tmp_path / "big.json.gz"
    save_trace(synthetic_trace(3000, seed=7, rounds=3), path)
    return path


def test_the_window_shows_a_trace_first_and_builds_the_rest_between_events(window, big_path,
                                                                           qtbot):
    messages = []
    window.statusBar().messageChanged.connect(messages.append)
    assert window.open_trace(str(big_path))
    trace = window.state.trace
    assert window.completer.running and lazy.pending_fields(trace) > 0
    assert not window.warmer.running  # the steps are prepared after the rest is read
    assert window.graph_view.paint_data is not None  # on screen already
    qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
    assert lazy.pending_fields(trace) == 0 and gc.isenabled()
    assert trace == load_trace(big_path)
    assert any(m.startswith("Reading the rest of the trace") for m in messages)
    assert window.statusBar().currentMessage() == "" and not window.errors


def test_a_pane_reading_a_pending_part_gets_it_built(window, big_path, qtbot):
    window.open_trace(str(big_path))
    window.state.set_step(2)  # the ledger of round 2, before the completer got there
    rnd = window.state.trace.graphs[0].rounds[1]
    assert not lazy.is_pending(rnd, "candidates")
    assert len(window.ledger.model.rows) >= len(rnd.candidates) > 0
    node = window.state.trace.graphs[0].nodes[10]
    assert lazy.is_pending(node, "reads")
    window.state.select_nodes((node.name,))  # the details pane lists its reads
    assert not lazy.is_pending(node, "reads")
    assert node.reads[0].buffer in window.details_pane.text()


def test_a_malformed_part_is_reported_and_the_window_keeps_what_it_has(window, tmp_path,
                                                                      qtbot):
    data = to_dict(synthetic_trace(500, seed=2, rounds=2))
    data["graphs"][0]["nodes"][400]["origins"][0]["line"] = "forty"
    path = tmp_path / "bad.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    assert window.open_trace(str(path))  # the graph opens
    qtbot.waitUntil(lambda: bool(window.errors), timeout=20000)
    assert "malformed" in window.errors[0] and "op400" in window.errors[0]
    assert "origins[0].line: expected int" in window.errors[0]
    assert not window.completer.running and gc.isenabled()
    assert window.state.graph is not None and window.graph_view.paint_data is not None
    window.state.set_step(1)  # stepping still works
    assert window.state.step == 1


def test_opening_another_trace_stops_the_first_completion(window, big_path, synthetic_path,
                                                          qtbot):
    window.open_trace(str(big_path))
    first = window.state.trace
    assert window.completer.running
    window.open_trace(str(synthetic_path))
    assert window.state.trace is not first
    qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
    assert lazy.pending_fields(window.state.trace) == 0
    assert lazy.pending_fields(first) > 0 and not window.errors and gc.isenabled()


def test_finish_completes_at_once(qtbot, big_path):
    completer = IdleWork(pause_gc=True)
    done = []
    completer.sig_done.connect(lambda: done.append(True))
    trace = load_trace(big_path, lazy=True)
    completer.start(lazy.complete(trace), delay_ms=60_000)
    assert completer.running and not gc.isenabled()
    completer.finish()
    assert done and not completer.running and lazy.pending_fields(trace) == 0
    assert gc.isenabled()


def test_after_the_rest_every_step_of_the_shown_graph_is_prepared(window, big_path, qtbot):
    window.open_trace(str(big_path))
    qtbot.waitUntil(lambda: not window.completer.running and not window.warmer.running,
                    timeout=20000)
    graph = window.state.graph
    steps = window.stepper.count
    assert set(window.graph_view._styles) == set(range(steps))
    rounds_prepared = {id(r) for r in graph.rounds} & set(window.ledger._rows_cache)
    assert len(rounds_prepared) == len(graph.rounds)
