"""The whole step (#20, item 4): each measured change added up over the graphs it was
measured on (``fusionviz.model.advisor.step``), on the H100 measurement of a Llama step
and on its candidates given other verdicts."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.model.advisor.candidates import rank
from fusionviz.model.advisor.document import measured_document, read_measured
from fusionviz.model.advisor.measure import Measured, Measurement
from fusionviz.model.advisor.step import step_changes, step_line, step_ms
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).resolve().parents[1] / "data" / "advice"
LLAMA = DATA / "gpu_llama_train.json.gz"


def _h100():
    trace = load_trace(LLAMA)
    return trace, read_measured(json.loads((DATA / "advice.json").read_text()), trace)


def test_a_setting_measured_on_both_graphs_is_one_change_of_the_step():
    _trace, measured = _h100()
    changes = {s.what: s for s in step_changes(measured)}
    mode = next(s for w, s in changes.items() if "max-autotune" in w)
    assert [i for i, _r in mode.on] == [0, 1]  # the forward's and the backward's
    assert mode.verdicts().startswith("graph 0: within noise; graph 1: changed results")
    pairs = [w for w in changes if "with" in w]
    assert pairs and all(w.startswith("graph 0: ") for w in pairs)  # a pair is one graph's
    assert all(s.net_ms == 0 for s in changes.values())  # no win, nothing slower
    assert step_line(measured) == "no change won on the 2 graph(s) measured"
    assert round(step_ms(measured), 3) == round(1.101 + 2.0115, 3)  # baselines' medians


def test_a_setting_slower_on_one_graph_loses_what_it_won_on_another():
    trace, measured = _h100()
    fwd, bwd = measured[0], measured[1]
    setting = next(r for r in fwd.results if r.candidate.kind == "config"
                   and "max-autotune" in r.candidate.what)
    (other,) = bwd.results
    fwd.results = [replace(setting, verdict="win", gain_ms=0.05)]
    bwd.results = [replace(other, verdict="slower", gain_ms=-0.02)]
    pair = next(c for c in rank(trace, trace.graphs[1]) if c.kind == "pair")
    bwd.results.append(Measured(pair, "win", 2.0, 1.9, 0.1, 0.01))
    best, second = step_changes(measured)
    assert best.what == f"graph 1: {pair.what}" and best.net_ms == 0.1
    assert round(second.net_ms, 3) == 0.03 and second.lost_ms == 0.02
    line = step_line(measured)
    assert line.startswith(f"the best change over the 2 graph(s) measured is graph 1: "
                           f"{pair.what}: 0.100 ms per step (3.2% of their 3.112 ms)")
    doc = measured_document("t.json.gz", [(trace.graphs[i], [], m) for i, m in
                                          sorted(measured.items())])
    assert [s["net_ms"] for s in doc["step"]][:2] == pytest.approx([0.1, 0.03])
    assert doc["step"][1]["graphs"] == [{"graph": 0, "verdict": "win", "gain_ms": 0.05},
                                        {"graph": 1, "verdict": "slower", "gain_ms": -0.02}]


def test_nothing_measured_is_no_step():
    assert step_changes({}) == [] and step_ms({}) == 0
    assert step_line({3: Measurement(3, "", problem="cannot be replayed")}) == \
        "no change won on the 0 graph(s) measured"
