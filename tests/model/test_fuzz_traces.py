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

import gzip
import json
import random
from pathlib import Path

import pytest

from fusionviz.model.errors import TraceError
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.validate import graph_problems

DATA = Path(__file__).resolve().parents[1] / "data"
# the small traces (2 to 15 part lines each, 30-110 KB of JSON): a few ms a load
SOURCES = sorted(p for p in DATA.glob("*.json.gz") if p.stat().st_size < 10_000)
CASES = 300  # per source trace: 4,200 in all


def _flip(rng: random.Random, lines: list[bytes]) -> str:
    i = rng.randrange(len(lines))
    text = bytearray(lines[i])
    for _ in range(rng.randint(1, 3)):
        if text:
            k = rng.randrange(len(text))
            text[k] = rng.choice(b'[]{}",:0123456789-.eEtfn \\\xff') if rng.random() < 0.7 \
                else rng.randrange(256)
    lines[i] = bytes(text)
    return f"bytes flipped in line {i + 1}"


def _cut(rng: random.Random, lines: list[bytes]) -> str:
    i = rng.randrange(len(lines))
    if rng.random() < 0.5:
        del lines[i:]
        return f"cut before line {i + 1}"
    lines[i:] = [lines[i][:rng.randrange(len(lines[i]) + 1)]]
    return f"cut inside line {i + 1}"


def _lines(rng: random.Random, lines: list[bytes]) -> str:
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    how = rng.choice(["deleted", "duplicated", "swapped"])
    if how == "deleted":
        del lines[i]
    elif how == "duplicated":
        lines.insert(j, lines[i])
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return f"line {i + 1} {how} (with {j + 1})"


def _odd_value(rng: random.Random) -> object:
    return rng.choice([
        None, True, False, 0, -1, 1.5, -1e308, 10**30, 2**64, 2**63 - 1, -(2**63) - 1,
        "", "x", "op0", "y" * 5000, [], [[]], [None], {}, {"name": 1}, [1, "a", None],
        {"buffer": None, "bytes": "many"}, [["op0", 3]], float("nan"), float("inf"),
        "\ud800", "[" * 50,
    ])


def _confuse(rng: random.Random, lines: list[bytes]) -> str:
    """A value somewhere in a line replaced by one of another type (or a huge one)."""
    i = rng.randrange(len(lines))
    try:
        doc = json.loads(lines[i])
    except (ValueError, RecursionError):  # not JSON (any more): flip bytes instead
        return _flip(rng, lines)
    path, parent = [], None
    node = doc
    while isinstance(node, dict | list) and node and (parent is None or rng.random() < 0.8):
        key = rng.choice(list(node)) if isinstance(node, dict) else rng.randrange(len(node))
        parent, node = node, node[key]
        path.append(key)
    if parent is None:
        doc = _odd_value(rng)
    else:
        parent[path[-1]] = _odd_value(rng)
    lines[i] = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
    return f"line {i + 1} at {path}: {parent[path[-1]] if parent is not None else doc!r:.40}"


def _nest(rng: random.Random, lines: list[bytes]) -> str:
    i = rng.randrange(len(lines))
    depth = rng.choice([900, 2000, 100_000])
    lines[i] = b"[" * depth + lines[i] + b"]" * depth
    return f"line {i + 1} nested {depth} deep"


MUTATIONS = [_flip, _flip, _cut, _lines, _confuse, _confuse, _confuse, _nest]


def mutant(source: Path, seed: int, folder: Path) -> tuple[Path, str]:
    """The file of case ``seed`` of ``source``, and what was done to it."""
    rng = random.Random(seed)
    lines = gzip.decompress(source.read_bytes()).split(b"\n")
    done = []
    for _ in range(rng.choice([1, 1, 2])):
        done.append(rng.choice(MUTATIONS)(rng, lines))
        lines = lines or [b""]
    what = "; ".join(done)
    text = b"\n".join(lines)
    gzipped = rng.random() < 0.5
    path = folder / f"{source.name.split('.')[0]}_{seed}.json{'.gz' if gzipped else ''}"
    if gzipped and rng.random() < 0.2:
        data = gzip.compress(text, mtime=0)
        path.write_bytes(data[:rng.randrange(10, len(data))])
        what += "; gzip cut"
    else:
        path.write_bytes(gzip.compress(text, compresslevel=1, mtime=0) if gzipped else text)
    return path, what


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


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name.split(".")[0])
def test_mutated_traces_load_or_are_refused_with_a_trace_error(source, tmp_path):
    outcomes: dict[str, int] = {}
    for seed in range(CASES):
        path, what = mutant(source, seed, tmp_path)
        try:
            outcome = _check(path)
        except Exception as e:  # the failure names the case
            raise AssertionError(f"{source.name} seed {seed} ({what}): "
                                 f"{type(e).__name__}: {e}") from e
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        path.unlink()
    assert outcomes.get("refused", 0) > CASES // 10, outcomes  # the mutations do bite
