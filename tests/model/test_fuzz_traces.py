"""Fuzzing the loader (#11): seeded mutations of the committed traces end in a
TraceError or in a trace, never in another exception, eager, lazy and in the command
line's summary; every lazy field is read twice, and one that failed fails again with
the same message.

Mutations (``MUTATIONS``): byte flips, truncations at a line or at any byte, lines
deleted, duplicated or swapped, a JSON value somewhere in a line replaced by one of
another type or a huge one. Each case is seeded by its number: a failure names the
trace, the seed and the mutation, and ``mutant`` rebuilds the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_fuzz import BREAKS, clearly_broken, mutant

from fusionviz.model.errors import TraceError
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.validate import detail_problems, graph_problems, trace_problems

DATA = Path(__file__).resolve().parents[1] / "data"
# the small traces (2 to 15 part lines each, 30-110 KB of JSON): a few ms a load
SOURCES = sorted(p for p in DATA.glob("*.json.gz") if p.stat().st_size < 10_000)
CASES = 300  # per source trace: 4,200 in all


def _read_every_lazy_field_twice(trace, path: Path) -> int:
    """Reads every lazy field twice; a failure must fail again, alike, naming the file
    (a single-document file's fields too). Returns how many failed."""
    failed = 0
    for graph in trace.graphs:
        for obj in (*graph.rounds, *graph.nodes):
            for name in sorted(type(obj).__lazy_fields__):
                outcomes = []
                for _ in range(2):
                    try:
                        outcomes.append(("ok", getattr(obj, name)))
                    except TraceError as e:
                        assert str(e).startswith(f"{path}: "), e
                        outcomes.append(("error", str(e)))
                assert outcomes[0] == outcomes[1], (name, outcomes)
                failed += outcomes[0][0] == "error"
    return failed


def _check(path: Path) -> str:
    """How ``path`` fared; any exception but TraceError escapes and fails the test."""
    try:
        eager = load_trace(path)
    except TraceError as e:
        assert str(e).startswith(str(path)), e
        eager = None
    else:
        summary_text(eager, rounds=True)  # what ``fusionviz summary`` prints
        for graph in eager.graphs:
            graph_problems(graph)
    try:
        lazy = load_trace(path, lazy=True)
    except TraceError as e:
        assert str(e).startswith(str(path)), e
        assert eager is None, "loaded eagerly, refused lazily"
        return "refused"
    failed = _read_every_lazy_field_twice(lazy, path)
    for graph in lazy.graphs:
        graph_problems(graph)
    if eager is not None:
        assert not failed and lazy == eager, "eager and lazy loads differ"
        return "loaded"
    return "opened lazily"


def fuzz(source: Path, cases: int, folder: Path, outcomes: dict[str, int]) -> None:
    """Cases 0 to ``cases`` of ``source``, each counted in ``outcomes`` by how it fared;
    any exception but TraceError fails, naming the case."""
    for seed in range(cases):
        path, what = mutant(source, seed, folder)
        try:
            outcome = _check(path)
        except Exception as e:  # the failure names the case
            raise AssertionError(f"{source} seed {seed} ({what}): "
                                 f"{type(e).__name__}: {e}") from e
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        path.unlink()


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name.split(".")[0])
def test_mutated_traces_load_or_are_refused_with_a_trace_error(source, tmp_path):
    outcomes: dict[str, int] = {}
    fuzz(source, CASES, tmp_path, outcomes)
    assert outcomes.get("refused", 0) > CASES // 10, outcomes  # the mutations do bite


def _listed(trace) -> set[str]:
    """What ``summary`` lists of a trace: warnings and problems."""
    lines = {*trace.warnings, *trace_problems(trace)}
    for g in trace.graphs:
        lines |= {*g.warnings, *graph_problems(g), *detail_problems(g)}
    return lines


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name.split(".")[0])
def test_damage_to_the_meaning_is_refused_or_listed(source, tmp_path):
    """A node name that is nowhere, a NaN, infinite, negative or absurd number, an
    unknown enumerated value: whatever the independent judge finds in a trace that
    loads is listed as a problem (benchmarks/fuzz_traces.py runs 11,000 such cases)."""
    base = load_trace(source)
    before = _listed(base)
    listed = 0
    for seed in range(100):
        path, what = mutant(source, seed, tmp_path, mutations=BREAKS)
        try:
            trace = load_trace(path)
        except TraceError:
            continue
        finally:
            path.unlink()
        broken, new = clearly_broken(trace), _listed(trace) - before
        assert new or not broken, f"{source.name} seed {seed} ({what}): {broken}"
        listed += bool(new)
    assert listed > 10  # the damage does reach what loads


def test_a_bad_part_line_is_parsed_once_and_its_text_not_kept(tmp_path, monkeypatch):
    """Case 411 of the fuzz benchmark: one byte of GPT-2's node part line changed. Each
    of its ~2,700 lazy fields parsed the 633 KB line again and kept an error holding it
    (JSONDecodeError.doc): 9.5 s and 1.7 GB to read them. Now: one parse, no text kept."""
    import gc
    import json

    from fusionviz.model.tracefile.parts import PartStore

    path, what = mutant(DATA / "gpu_gpt2_train.json.gz", 411, tmp_path)
    assert what == "bytes flipped in line 11"
    parses = []
    real = PartStore._parse_line
    monkeypatch.setattr(PartStore, "_parse_line",
                        lambda self, line, parse: parses.append(line) or real(self, line, parse))
    trace = load_trace(path, lazy=True)
    assert _read_every_lazy_field_twice(trace, path) > 1000
    assert sorted(parses) == sorted(set(parses))  # each line once
    gc.collect()
    # type(), not isinstance(): some objects of a loaded torch warn when asked __class__
    held = [o for o in gc.get_objects() if issubclass(type(o), json.JSONDecodeError)]
    assert not held
