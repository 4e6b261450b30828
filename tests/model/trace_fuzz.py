"""Seeded mutations of a trace file, and an independent judge of what a loaded trace
says that cannot be: shared by the fuzz test (tests/model/test_fuzz_traces.py) and
the fuzz benchmark (benchmarks/fuzz_traces.py).

``MUTATIONS`` damage the file blindly: byte flips, truncations at a line or at any
byte, lines deleted, duplicated or swapped, a JSON value replaced by one of another
type or a huge one, deep nesting. ``BREAKS`` damage its meaning and keep it valid
JSON: a node name replaced where it is defined or referred to, a number made NaN,
infinite, negative or absurd, an enumerated value made unknown.

``clearly_broken`` is the judge: it walks every field of a fully built trace by its
name alone (names that must be graph nodes, numbers that must be finite and
non-negative, values from a closed list) and is written apart from
``fusionviz.model.validate`` so that it can find what the validator misses.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import math
import random
from pathlib import Path

from fusionviz.model.trace import CATEGORIES, OUTCOMES, Trace
from fusionviz.model.validate import STATUSES


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


def _leaves(doc, keep) -> list[tuple[object, object]]:
    """(container, key) of every leaf of ``doc`` for which ``keep(key, value)``."""
    out, stack = [], [doc]
    while stack:
        node = stack.pop()
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            if isinstance(value, dict | list):
                stack.append(value)
            elif keep(key, value):
                out.append((node, key))
    return out


def _break(rng: random.Random, lines: list[bytes], what: str, keep, value) -> str:
    """Sets one leaf chosen among those ``keep`` admits, in a random line holding one,
    to ``value(old)``; a blind mutation when no line holds one."""
    order = list(range(len(lines)))
    rng.shuffle(order)
    for i in order:
        try:
            doc = json.loads(lines[i])
        except (ValueError, RecursionError):
            continue
        if not isinstance(doc, dict | list):
            continue
        found = _leaves(doc, keep)
        if found:
            parent, key = rng.choice(found)
            old, parent[key] = parent[key], value(parent[key])
            lines[i] = json.dumps(doc, allow_nan=True).encode("utf-8", "surrogatepass")
            return f"line {i + 1} {what} at {key!r}: {old!r:.30} -> {parent[key]!r:.30}"
    return _flip(rng, lines)


def _node_names(lines: list[bytes]) -> set[str]:
    names = set()
    for line in lines:
        try:
            doc = json.loads(line)
        except (ValueError, RecursionError):
            continue
        stack = [doc]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                if "category" in node and isinstance(node.get("name"), str):
                    names.add(node["name"])
                stack += list(node.values())
            elif isinstance(node, list):
                stack += node
    return names


def _dangle(rng: random.Random, lines: list[bytes]) -> str:
    """A node's name, where it is defined or where something refers to it, made one
    that is nowhere."""
    names = _node_names(lines)
    return _break(rng, lines, "node name", lambda k, v: isinstance(v, str) and v in names,
                  lambda old: f"{old}_nowhere")


def _bad_number(rng: random.Random, lines: list[bytes]) -> str:
    value = rng.choice([float("nan"), float("inf"), float("-inf"), -7, -0.5, 1e40, 10**40])
    return _break(rng, lines, "number",
                  lambda k, v: isinstance(v, int | float) and not isinstance(v, bool)
                  and k not in ("version",), lambda old: value)


ENUM_KEYS = ("outcome", "status", "category", "kind", "spill", "side")


def _bad_enum(rng: random.Random, lines: list[bytes]) -> str:
    return _break(rng, lines, "enum", lambda k, v: k in ENUM_KEYS and isinstance(v, str),
                  lambda old: f"no-such-{old}")


BREAKS = [_dangle, _bad_number, _bad_enum]


def mutant(source: Path, seed: int, folder: Path,
           mutations: list = MUTATIONS) -> tuple[Path, str]:
    """The file of case ``seed`` of ``source`` damaged by one or two of ``mutations``,
    and what was done to it."""
    rng = random.Random(seed)
    lines = gzip.decompress(source.read_bytes()).split(b"\n")
    done = []
    for _ in range(rng.choice([1, 1, 2])):
        done.append(rng.choice(mutations)(rng, lines))
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


# --- the judge -----------------------------------------------------------------------

# Fields whose strings are scheduler node names of their graph.
REFERENCES = frozenset(("src", "dst", "nodes", "groups", "final_groups", "groups_before",
                        "groups_after", "a", "b", "tried", "order_before", "order_after"))
# (class, field) -> the values it may take.
ENUMS = {("Node", "category"): CATEGORIES, ("Candidate", "outcome"): OUTCOMES,
         ("Script", "status"): STATUSES, ("Graph", "kind"): ("forward", "backward", "inference"),
         ("Entry", "kind"): ("module", "function"),
         ("EagerKernel", "side"): ("forward", "backward"),
         ("Benchmark", "spill"): ("", "first", "second", "fused")}
SIGNED = frozenset(("bytes_saved", "exit_code"))  # may be negative (a signal: -9)
FREE = frozenset(("max_abs_diff",))  # any number: NaN outputs are the user's to see
MEASURED = frozenset(("score", "launch", "load"))  # dicts of what Inductor or a clock said
ABSURD = 2 ** 50  # 1 PiB, ms, s or counts: more than anything real


def clearly_broken(trace: Trace) -> list[str]:
    """What in a fully built ``trace`` cannot be, judged field by field by name: a
    reference to a node its graph does not have, a node name used twice, a number
    that is not finite, negative (but a saving) or over 2^50, a value outside its
    closed list. Of free-form dicts, only those of measures (score, launch, load) are
    judged: their numbers must be finite."""
    out: list[str] = []

    def walk(obj, owner: str, name: str, nodes: set[str] | None) -> None:
        if dataclasses.is_dataclass(obj):
            cls = type(obj).__name__
            for f in dataclasses.fields(obj):
                walk(getattr(obj, f.name), cls, f.name, nodes)
        elif isinstance(obj, tuple | list):
            for x in obj:
                walk(x, owner, name, nodes)
        elif isinstance(obj, dict):  # free-form, but the numbers tables show are finite
            if name in MEASURED and any(
                    isinstance(v, float) and not math.isfinite(v) for v in obj.values()):
                out.append(f"{owner}.{name} holds a number that is not finite")
        elif isinstance(obj, bool) or obj is None or name in FREE:
            return
        elif isinstance(obj, int | float):
            if not math.isfinite(obj) or (obj < 0 and name not in SIGNED) or abs(obj) > ABSURD:
                out.append(f"{owner}.{name} = {obj!r}")
        elif isinstance(obj, str):
            if nodes is not None and name in REFERENCES and obj not in nodes:
                out.append(f"{owner}.{name} names {obj!r:.40}, not a node")
            allowed = ENUMS.get((owner, name))
            if allowed is not None and obj not in allowed:
                out.append(f"{owner}.{name} = {obj!r:.40}, not one of {allowed}")

    for f in dataclasses.fields(trace):
        if f.name != "graphs":
            walk(getattr(trace, f.name), "Trace", f.name, None)
    for graph in trace.graphs:
        names = [n.name for n in graph.nodes]
        if len(set(names)) != len(names):
            out.append(f"graph {graph.index}: a node name used twice")
        walk(graph, "Trace", "graphs", set(names))
    return out
