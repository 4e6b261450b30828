"""The run comparison with the callables the user compiled (``Trace.entries``) and the
graphs' eager baselines, on real GPU traces (HF BERT inference, HF Llama training):
each trace against itself and against a copy whose timings were altered."""

from __future__ import annotations

import csv
import dataclasses
import io
from pathlib import Path

import pytest

from fusionviz.model.experiment import compare
from fusionviz.model.experiment.compare_entries import entry_table, moved, pair_entries
from fusionviz.model.report.eager_explain import explain
from fusionviz.model.report.eager_figures import figure
from fusionviz.model.trace import Samples
from fusionviz.model.tracefile.io import load_trace

DATA = Path(__file__).parents[1] / "data"
BERT, LLAMA = DATA / "gpu_bert_fp16_infer.json.gz", DATA / "gpu_llama_hf_train.json.gz"


@pytest.fixture(scope="module")
def bert():
    return load_trace(BERT)


@pytest.fixture(scope="module")
def llama():
    return load_trace(LLAMA)


def scaled(s: Samples, k: float, spread: float = 0.0) -> Samples:
    """``s`` times ``k``; with ``spread``, every other wall sample pushed out by it."""
    wall = tuple(w * k * (1 + (spread if i % 2 else -spread)) for i, w in enumerate(s.wall))
    return dataclasses.replace(s, wall=wall, device=tuple(d * k for d in s.device))


def with_entry(trace, **sides):
    """``trace`` whose first entry has ``sides`` (field → Samples, or any Entry field)."""
    return dataclasses.replace(trace, entries=(dataclasses.replace(trace.entries[0], **sides),
                                               *trace.entries[1:]))


def rows_of(c):
    return {m: (x, y, ch) for m, x, y, ch in c.rows}


@pytest.mark.parametrize("path", [BERT, LLAMA], ids=lambda p: p.name)
def test_a_trace_against_itself_moves_nothing(path):
    t = load_trace(path)
    c = compare.compare(t, t)
    ex = explain(t, t.entries[0])
    parts = ["forward", "backward"] if t.entries[0].grad else ["forward"]
    assert [(d.part, d.clock) for d in c.entries] == [
        (p, clock) for p in parts for clock in ("device", "wall")]
    for d in c.entries:
        assert d.a == d.b == getattr(ex, d.part)[d.clock]  # explain's figures, unchanged
        assert d.compiled_change == d.eager_change == "within noise"
        assert d.notes() == "" and not d.only
    rows = rows_of(c)
    assert rows[compare.BASELINE] == ("your program", "your program", "")
    assert rows[compare.DYNAMO_EAGER][0] == rows[compare.DYNAMO_EAGER][1] > 0
    assert compare.NOT_COMPARABLE not in {ch for *_x, ch in c.rows}


def test_a_faster_compiled_forward_shows_as_a_change_and_a_new_speedup(bert):
    e = bert.entries[0]
    faster = with_entry(bert, compiled_forward=scaled(e.compiled_forward, 0.8))
    c = compare.compare(bert, faster, "default", "tuned")
    device = next(d for d in c.entries if d.clock == "device")
    assert device.compiled_change == "-20.0%" and device.eager_change == "within noise"
    assert device.a.verdict == "slower" and device.b.verdict == "faster"  # 1.02x → 1.23x
    headers, rows = entry_table(c.entries, "default", "tuned")
    row = dict(zip(headers, rows[0]))
    assert row["compiled ms (default)"] == figure(e.compiled_forward.device).median
    assert row["compiled ms (tuned)"] == pytest.approx(0.8 * row["compiled ms (default)"])
    assert row["vs eager (default)"].endswith("slower")
    assert row["vs eager (tuned)"] == f"{device.b.speedup:.2f}x faster"
    # the other way round, the same change in the other direction
    back = compare.compare(faster, bert)
    assert next(d for d in back.entries if d.clock == "device").compiled_change == "+25.0%"


def test_noisy_figures_are_marked_by_eager_figures_rule(llama):
    e = llama.entries[0]
    noisy = with_entry(llama, eager_backward=scaled(e.eager_backward, 1.0, spread=0.3))
    c = compare.compare(llama, noisy)
    wall = next(d for d in c.entries if (d.part, d.clock) == ("backward", "wall"))
    assert figure(noisy.entries[0].eager_backward.wall).noisy  # the rule itself says so
    assert wall.noisy() == ["eager B"] and "noisy: eager B" in wall.notes()
    assert wall.eager_change == "within noise"  # the median barely moved
    device = next(d for d in c.entries if (d.part, d.clock) == ("backward", "device"))
    assert device.noisy() == []  # device samples were not spread


def test_wall_figures_taken_on_a_busy_machine_are_uncertain(llama):
    busy = with_entry(llama, load={"other_cpu_cores": 1.5, "cores": 2})
    c = compare.compare(llama, busy)
    why = explain(busy, busy.entries[0]).busy
    assert why
    for d in c.entries:
        assert d.uncertain_a == ""
        assert d.uncertain_b == (why if d.clock == "wall" else "")
    assert all(f"uncertain in B: {why}" in d.notes() for d in c.entries if d.clock == "wall")


def test_entries_pair_by_name_and_kind_then_order(bert, llama):
    e = bert.entries[0]
    twice = dataclasses.replace(bert, entries=(e, dataclasses.replace(
        e, compiled_forward=scaled(e.compiled_forward, 2.0))))
    pairs = pair_entries(twice, twice)
    assert [(x is y) for x, y in pairs] == [True, True]
    # B lacks the second BertModel and has a callable A lacks
    other = dataclasses.replace(bert, entries=(llama.entries[0], e))
    pairs = pair_entries(twice, other)
    assert [(x and x.name, y and y.name) for x, y in pairs] == [
        ("BertModel", "BertModel"), ("BertModel", None), (None, "LossOf")]
    c = compare.compare(twice, other)
    only_a = [d for d in c.entries if d.only == "A"]
    only_b = [d for d in c.entries if d.only == "B"]
    assert only_a and all(d.b is None and d.notes() == "only in A" for d in only_a)
    assert {d.part for d in only_b} == {"forward", "backward"}
    assert all(d.a is None and d.compiled_change == "" for d in only_b)


def test_another_eager_baseline_in_b_is_not_compared(bert):
    def dynamo(g):
        t = g.timing
        return dataclasses.replace(g, timing=dataclasses.replace(
            t, eager_ms=t.dynamo_eager_ms, eager_spread=(), dynamo_eager_ms=None,
            eager_source="Dynamo graph, eager forward"))

    b = dataclasses.replace(bert, graphs=tuple(dynamo(g) for g in bert.graphs))
    rows = rows_of(compare.compare(bert, b))
    assert rows[compare.BASELINE] == ("your program", "Dynamo graph", "differs")
    for metric in compare.EAGER_ROWS:
        assert rows[metric][2] == compare.NOT_COMPARABLE
    assert rows["Compiled runtime (ms)"][2] == "within noise"
    # the Dynamo graph's figure: kept beside the program's in A, the baseline itself in B
    assert rows[compare.DYNAMO_EAGER][:2] == (pytest.approx(bert.graphs[0].timing
                                                            .dynamo_eager_ms),) * 2


def test_the_report_and_csv_carry_the_entries(llama):
    e = llama.entries[0]
    b = with_entry(llama, compiled_backward=scaled(e.compiled_backward, 1.15))
    c = compare.compare(llama, b, "default", "variant")
    md = compare.report_markdown(c, "title")
    assert compare.ENTRIES_TITLE in md and compare.eager_note(c) in md
    table = md.split(compare.ENTRIES_TITLE)[1].strip().splitlines()
    assert table[0].startswith("| callable | part | clock | compiled ms (default) |")
    assert len(table) >= 2 + len(c.entries)
    assert "| LossOf (module) | backward | device |" in md and "+15.0%" in md
    rows = list(csv.reader(io.StringIO(compare.table_csv(c))))
    assert [r[0] for r in rows[1:len(c.rows) + 1]] == [m for m, *_ in c.rows]
    extra = rows[len(c.rows) + 1:]
    assert len(extra) == 3 * len(c.entries)
    backward = {r[0]: r for r in extra if "backward, device" in r[0]}
    compiled = backward["LossOf (module) backward, device: compiled (ms)"]
    assert float(compiled[2]) == pytest.approx(1.15 * float(compiled[1]))
    assert compiled[3] == "+15.0%"
    speedup = backward["LossOf (module) backward, device: speedup vs eager"]
    assert float(speedup[2]) < float(speedup[1])


def test_traces_without_entries_or_eager_sources_compare_as_before():
    exp = DATA / "experiments" / "cpu_ab_whatif_ops"
    a, b = load_trace(exp / "a.json.gz"), load_trace(exp / "b.json.gz")
    c = compare.compare(a, b)
    assert c.entries == () and compare.BASELINE not in rows_of(c)
    assert compare.ENTRIES_TITLE not in compare.report_markdown(c)
    assert compare.eager_note(c) == ""
    gpu = DATA / "experiments" / "gpu_seed000_hub_branches"
    c = compare.compare(load_trace(gpu / "a.json.gz"), load_trace(gpu / "b.json.gz"))
    assert rows_of(c)[compare.BASELINE] == ("Dynamo graph", "Dynamo graph", "")
    assert compare.DYNAMO_EAGER not in rows_of(c) and compare.eager_note(c) == ""


def test_moved_follows_the_middle_halves():
    a = figure([1.0, 1.1, 1.2, 1.3, 1.4])
    assert moved(a, figure([1.2, 1.3, 1.4, 1.5, 1.6])) == "within noise"
    assert moved(a, figure([2.0, 2.1, 2.2, 2.3, 2.4])) == "+83.3%"
    assert moved(a, None) == moved(None, a) == ""
