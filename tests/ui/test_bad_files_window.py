"""Each class of bad trace file opened in the real window (#11): it is refused with a
dialog naming the file (and the trace shown before stays), or it opens with a notice
or a dialog saying what cannot be read; then every round is stepped, nodes are hovered,
selected and searched, and "why not fused" is asked. No exception escapes into Qt's
event loop (pytest-qt's capture, asserted empty) or out of the calls."""

from __future__ import annotations

import dataclasses
import gzip
import json
import os
import zlib
from pathlib import Path

import pytest
from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QToolTip

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.trace import VERSION, Edge
from fusionviz.model.tracefile.io import save_trace

TRACE = synthetic_trace(120, seed=2, rounds=3)
REAL = Path(__file__).parents[1] / "data" / "gpu_llama_hf_train.json.gz"  # a compiled entry too
GOOD = "good.json.gz"


def _lines(folder: Path) -> list[bytes]:
    path = folder / "whole.json"
    save_trace(TRACE, path)
    return path.read_bytes().splitlines()


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def truncated_gzip(folder: Path) -> Path:
    data = gzip.compress(b"\n".join(_lines(folder)) + b"\n")
    path = folder / "truncated.json.gz"
    path.write_bytes(data[:-40])
    return path


def missing_part_lines(folder: Path) -> Path:
    return _write(folder / "missing_parts.json", _lines(folder)[:3])


def malformed_part(folder: Path) -> Path:
    lines = _lines(folder)
    details = json.loads(lines[1])  # reads, writes, origins: a column each (format 3)
    reads = details[0]
    reads["v"]["bytes"][sum(reads["n"][:5])] = "many"  # op5's first read
    lines[1] = json.dumps(details).encode()
    lines[3] = b'{"n": [1], "v": {"plain": [{"rank": "first"}]}}'  # round 1's candidates
    lines[6] = b"{not json"  # round 2's verdicts
    return _write(folder / "malformed_part.json", lines)


def deep_nesting(folder: Path) -> Path:
    path = folder / "deep.json"
    path.write_bytes(b"[" * 100_000 + b"]" * 100_000)
    return path


def deep_nesting_in_a_part(folder: Path) -> Path:
    lines = _lines(folder)
    lines[2] = b"[" * 100_000 + b"]" * 100_000  # round 0's candidates
    return _write(folder / "deep_part.json", lines)


def huge_int(folder: Path) -> Path:
    lines = _lines(folder)
    lines[0] = lines[0].replace(b'"version":%d' % VERSION, b'"version":' + b"9" * 5000, 1)
    return _write(folder / "huge_int.json", lines)


def huge_int_in_a_part(folder: Path) -> Path:
    lines = _lines(folder)
    lines[1] = lines[1].replace(b'"bytes":', b'"bytes":' + b"9" * 5000, 1)
    return _write(folder / "huge_int_part.json", lines)


def memory_bomb(folder: Path) -> Path:
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    path = folder / "bomb.json.gz"
    path.write_bytes(deflate.compress(b"[" + b"[]," * 30_000_000 + b"[]]") + deflate.flush())
    return path


def fifo(folder: Path) -> Path:
    path = folder / "pipe.json"
    os.mkfifo(path)
    return path


def semantic_problems(folder: Path) -> Path:
    g = TRACE.graphs[0]
    edges = (*g.edges, Edge(src="op9", dst="op9", buffer="b"),
             Edge(src="ghost", dst="op1", buffer="b"), Edge(src="op20", dst="op3", buffer="b"),
             Edge(src="op3", dst="op20", buffer="b"))
    nodes = (*g.nodes, dataclasses.replace(g.nodes[4], category="sideways"),
             dataclasses.replace(g.nodes[2], bytes=-8))
    kernels = (dataclasses.replace(g.kernels[0], ms=float("nan")), *g.kernels[1:])
    graph = dataclasses.replace(g, nodes=nodes, edges=edges, kernels=kernels)
    path = folder / "semantic.json.gz"
    save_trace(dataclasses.replace(TRACE, graphs=(graph,)), path)
    return path


# (how to make it, refused at open, what the dialogs or notices say)
BAD_FILES = {
    "truncated gzip": (truncated_gzip, False, "gzip stream ends early"),
    "missing part lines": (missing_part_lines, False, "the file is cut"),
    "malformed part": (malformed_part, False, "malformed"),
    "deep nesting": (deep_nesting, True, "not a fusionviz trace"),
    "deep nesting in a part": (deep_nesting_in_a_part, False, "nested too deeply"),
    "huge int": (huge_int, True, "invalid JSON"),
    "huge int in a part": (huge_int_in_a_part, False, "is not JSON"),
    "memory bomb": (memory_bomb, True, "would take more than"),
    "fifo": (fifo, True, "not a regular file"),
    "semantic problems": (semantic_problems, False, "does not hold together"),
}


def _reports(window) -> list[str]:
    return [*window.errors, *window.notice_lines()]


def _exercise(window, qtbot) -> list[str]:
    """Step every round, hover, select and search nodes, ask why not fused; returns
    the dialogs shown once every round was stepped to (before the idle reader ran)."""
    state, view = window.state, window.graph_view
    graph = state.graph
    for k in range(len(state.steps)):
        state.set_step(k)
    stepped = list(window.errors)
    names = [n.name for n in graph.nodes]
    picks = [names[0], names[2], names[5], names[9], names[-1]]
    view.resetTransform()
    for name in picks:
        view.centerOn(view.node_scene_pos(name))
        target = view.mapFromScene(view.node_scene_pos(name))
        qtbot.mouseMove(view.viewport(), target + QPoint(300, 300))
        qtbot.mouseMove(view.viewport(), target)
    QToolTip.hideText()
    for name in picks:
        state.select_nodes((name,))
        window.details_pane.text()
        view.find(name)
    for pair in ((picks[0], picks[1]), (picks[2], picks[3]), (picks[1], picks[4])):
        state.select_nodes(pair)
        for k in (len(state.steps) - 1, 1, 0):
            state.set_step(k)
            dialog = window.why_not_fused()
            if dialog is not None:
                dialog.close()
    qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
    window.next_graph()
    window.set_kernels_only(True)
    window.set_kernels_only(False)
    return stepped


@pytest.mark.parametrize("kind", BAD_FILES)
def test_a_bad_file_is_refused_or_opened_with_a_notice_and_never_raises(window, qtbot,
                                                                       tmp_path, kind):
    make, refused, says = BAD_FILES[kind]
    good = tmp_path / GOOD
    save_trace(TRACE, good)
    with qtbot.capture_exceptions() as uncaught:
        assert window.open_trace(str(good))
        qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
        assert not window.errors
        path = make(tmp_path)
        assert window.open_trace(str(path)) is not refused
        if refused:
            assert window.errors and window.errors[-1].startswith("Cannot open the trace")
            assert str(path) in window.errors[-1] and says in window.errors[-1]
            assert window.state.path == str(good)  # what was open stays open
        stepped = _exercise(window, qtbot)
        if kind in ("malformed part", "deep nesting in a part"):  # a round's ledger is bad:
            assert any(str(path) in e for e in stepped)  # said when stepped to, at once
        reports = _reports(window)
        assert any(says in r for r in reports), reports
        if not refused:
            assert window.state.path == str(path)
            assert any(str(path) in r for r in window.errors) or window.notice_lines()
    assert not uncaught, [f"{e[0].__name__}: {e[1]}" for e in uncaught]


def test_a_round_that_does_not_hold_together_is_a_notice_once_its_rounds_are_read(
        window, qtbot, tmp_path):
    """The rounds are read lazily, on the idle path: their problems join the Notices
    once all is read."""
    from fusionviz.model.tracefile.io import load_trace

    real = load_trace(str(Path(__file__).parents[1] / "data" / "gpu_mlp_block_bench.json.gz"))
    g = real.graphs[0]
    r = g.rounds[0]
    c, *rest = r.candidates
    r = dataclasses.replace(r, candidates=(dataclasses.replace(c, outcome="exploded"), *rest))
    broken = dataclasses.replace(real, graphs=(dataclasses.replace(g, rounds=(r, *g.rounds[1:])),
                                               *real.graphs[1:]))
    path = tmp_path / "broken_round.json.gz"
    save_trace(broken, str(path))
    assert window.open_trace(str(path)), window.errors
    qtbot.waitUntil(lambda: not window.completer.running, timeout=10000)
    notices = window.notice_lines()
    assert any("does not hold together: candidates of an unknown outcome: round 1"
               in line for line in notices), notices


def test_each_view_says_in_place_what_of_its_part_does_not_hold_together(
        window, qtbot, tmp_path):
    """A graph edge to a node that is nowhere, a kernel's register count of -7, a
    candidate of an unknown outcome, an origin line of -3 and a NaN eager time: the
    graph, the Kernels table, the ledger, Details and Compiled vs eager each show a
    strip above themselves naming their own problem (and only theirs); a click on a
    strip brings Notices to the front; a trace that holds together shows none."""
    import math

    from fusionviz.model import validate
    from fusionviz.model.tracefile.io import load_trace

    real = load_trace(str(REAL))
    g = real.graphs[0]
    r = next(r for r in g.rounds if r.candidates)
    c, *rest = r.candidates
    node = next(n for n in g.nodes if n.origins)
    k = g.kernels[0]
    e = real.entries[0]
    g = dataclasses.replace(
        g, edges=(*g.edges, Edge(g.nodes[0].name, "op_nowhere", "buf_x")),
        kernels=(dataclasses.replace(k, n_regs=-7), *g.kernels[1:]),
        rounds=tuple(dataclasses.replace(x, candidates=(
            dataclasses.replace(c, outcome="exploded"), *rest)) if x is r else x
            for x in g.rounds),
        nodes=tuple(dataclasses.replace(n, origins=(dataclasses.replace(
            n.origins[0], line=-3), *n.origins[1:])) if n is node else n for n in g.nodes))
    e = dataclasses.replace(e, eager_forward=dataclasses.replace(
        e.eager_forward, wall=(math.nan, *e.eager_forward.wall[1:])))
    broken = dataclasses.replace(real, graphs=(g, *real.graphs[1:]), entries=(e,))
    path = tmp_path / "broken_views.json.gz"
    save_trace(broken, str(path))
    assert window.open_trace(str(path)), window.errors
    qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
    strips = window.strips
    expected = {validate.GRAPH: "edges naming nodes that are not in the graph: op",
                validate.KERNELS: f"kernel {k.name} n_regs -7",
                validate.ROUNDS: "candidates of an unknown outcome",
                validate.DETAILS: f"{node.name} line -3",
                validate.ENTRIES: "compiled callables' times that are not finite"}
    for view, text in expected.items():
        assert strips[view].isVisibleTo(window) and strips[view].lines, view
        assert text in strips[view].text(), (view, strips[view].text())
        assert strips[view].textFormat() == Qt.TextFormat.PlainText
        others = [v for v in expected if v != view]
        assert not any(text in strips[v].text() for v in others), view
        assert all(line in "\n".join(window.notice_lines()) for line in strips[view].lines)
    window.docks["charts"].raise_()
    qtbot.mouseClick(strips[validate.KERNELS], Qt.MouseButton.LeftButton)
    assert window.docks["notices"].isVisible()
    assert window.open_trace(str(REAL))
    qtbot.waitUntil(lambda: not window.completer.running, timeout=20000)
    assert not any(s.isVisibleTo(window) for s in strips.values())
