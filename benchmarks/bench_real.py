"""Benchmark the whole window on real GPU traces with a module hierarchy.

Run: ``QT_QPA_PLATFORM=offscreen python benchmarks/bench_real.py [traces…]`` (default:
the committed deep Llama and the real traces in ``tests/data``). For each trace, the
whole ``MainWindow`` offscreen (as ``bench_ui``'s whole-window table): open + first
frame on the first graph and on the backward one (fresh windows, medians of 3),
switching graphs, fusion steps, expanding every module and folding back, pan, a click
on a node, the why-not query on a pair and sorting the kernel table. Each operation is
timed with the events and the full window repaint after it (``window_frame``), ms;
steps also as the user sees them ("loop": the events only, which repaint what changed).
Targets (#23, 2-core machine; ~5k nodes a graph): open + first frame ≤ 500, switch ≤
300, step ≤ 16, expand all ≤ 100; at 20k: open + first frame ≤ 1500, step ≤ 33, pan ≤ 16.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_ui import _open_once, settle, timed, window_frame, window_pans  # noqa: E402
from PySide6.QtCore import Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

TRACES = ["benchmarks/traces/gpu_llama_deep64_train.json.gz",
          "benchmarks/traces/cpu_llama_deep320_train.json.gz",
          "tests/data/gpu_gpt2_train.json.gz", "tests/data/gpu_llama_hf_train.json.gz",
          "tests/data/gpu_moe_train.json.gz"]
REPEATS = 3


def ms(samples: list[float]) -> float:
    return 1000 * statistics.median(samples)


def timed_frame(window, fn) -> float:
    """Seconds of ``fn`` and the window frame after it."""
    return timed(fn) + window_frame(window)


def _opens(path: Path, folder: Path, graph: int) -> tuple[object, dict[str, float]]:
    """Medians of REPEATS fresh windows opening ``path`` on ``graph``; the last window."""
    runs = []
    for k in range(REPEATS):
        window, times = _open_once(path, folder, f"{path.stem}_{graph}", k, graph=graph)
        runs.append(times)
        if k < REPEATS - 1:
            window.close()
            window.deleteLater()
            QApplication.processEvents()
    return window, {key: statistics.median(t[key] for t in runs)
                    for key in ("open+first", "rest")}


def _steps(window, loop: bool = False) -> list[float]:
    """Every step of the shown graph, twice round (the steps prepared in idle time);
    ``loop``: as the user sees them, the event loop repainting only what changed."""
    n = len(window.state.steps)
    order = [*range(1, n), 0] * 2
    if loop:
        return [timed(lambda k=k: (window.state.set_step(k), QApplication.processEvents()))
                for k in order]
    return [timed_frame(window, lambda k=k: window.state.set_step(k)) for k in order]


def _clicks(window) -> list[float]:
    """Clicks on visible nodes (not boxes) of the unzoomed view, each selecting it."""
    view, paint = window.graph_view, window.graph_view.paint_data
    nodes = [i for i in range(len(paint.names)) if i not in paint.boxes][:6] or [0]
    out = []
    for i in nodes * 2:
        view.resetTransform()
        view.centerOn(float(paint.x[i]), float(paint.y[i]))
        QApplication.processEvents()
        pos = view.mapFromScene(float(paint.x[i]), float(paint.y[i]))
        out.append(timed_frame(window, lambda pos=pos: QTest.mouseClick(
            view.viewport(), Qt.MouseButton.LeftButton, pos=pos)))
        assert window.state.selected_nodes, "the click selected nothing"
    return out


def _pair(graph) -> tuple[str, str]:
    """A pair the scheduler refused to fuse (else the first two nodes)."""
    for r in graph.rounds:
        for v in r.verdicts:
            if not v.ok and v.a and v.b:
                return v.a[0], v.b[0]
    return graph.nodes[0].name, graph.nodes[1].name


def _why_not(window) -> list[float]:
    window.state.select_nodes(_pair(window.state.graph))
    out, dialogs = [], []
    for _ in range(REPEATS):
        out.append(timed_frame(window, lambda: dialogs.append(window.why_not_fused())))
        assert dialogs[-1] is not None, window.errors
        dialogs[-1].close()
        QApplication.processEvents()
    return out


def _sorts(window) -> list[float]:
    window.docks["kernels"].show()
    window.docks["kernels"].raise_()
    table = window.kernel_table.table
    QApplication.processEvents()
    orders = (Qt.SortOrder.AscendingOrder, Qt.SortOrder.DescendingOrder)
    return [timed_frame(window, lambda c=c, o=o: table.sortByColumn(c, o))
            for c in (0, 4, 1) for o in orders]


def _graph_ops(window, tag: str, out: dict[str, float]) -> None:
    """Steps, expand all and fold back, pan, clicks, why-not, sort on the shown graph."""
    steps = _steps(window)
    out[f"step {tag}"], out[f"step max {tag}"] = ms(steps), 1000 * max(steps)
    loop = _steps(window, loop=True)
    out[f"step {tag} (loop)"], out[f"step max {tag} (loop)"] = ms(loop), 1000 * max(loop)
    view = window.graph_view
    for when in ("first", "again"):
        out[f"expand all {tag} ({when})"] = 1000 * timed_frame(window, view.expand_all_modules)
        if when == "first":
            out[f"step {tag} (all expanded)"] = ms(_steps(window))
        out[f"fold back {tag} ({when})"] = 1000 * timed_frame(window, view.fold_repeated_blocks)
    out[f"pan {tag}"] = ms(window_pans(window, window.state.graph.nodes[0].name))
    out[f"click node {tag}"] = ms(_clicks(window))
    out[f"why-not {tag}"] = ms(_why_not(window))
    out[f"sort kernels {tag}"] = ms(_sorts(window))


def bench(path: Path, folder: Path) -> dict[str, float]:
    out: dict[str, float] = {}
    window, times = _opens(path, folder, 0)
    graphs = window.state.trace.graphs
    out["nodes"] = float(sum(len(g.nodes) for g in graphs))
    back = next((i for i, g in enumerate(graphs) if g.kind == "backward"), None)
    first = "bwd" if back == 0 else "fwd"
    out[f"open+first ({first})"], out[f"rest ({first})"] = times["open+first"], times["rest"]
    _graph_ops(window, first, out)
    if back not in (None, 0):
        for when in ("first", "second"):
            for a, b, index in (("fwd", "bwd", back), ("bwd", "fwd", 0)):
                out[f"switch {a}→{b} ({when})"] = 1000 * timed_frame(
                    window, lambda index=index: window.state.set_graph(index))
                settle(window)
        window.state.set_graph(back)
        settle(window)
        _graph_ops(window, "bwd", out)
        window.close()
        window, times = _opens(path, folder, back)
        out["open+first (bwd)"], out["rest (bwd)"] = times["open+first"], times["rest"]
    window.close()
    window.deleteLater()
    QApplication.processEvents()
    return out


def main(paths: list[str]) -> None:
    QApplication.instance() or QApplication([])
    with tempfile.TemporaryDirectory() as folder:
        rows = {p: bench(ROOT / p if not Path(p).is_absolute() else Path(p), Path(folder))
                for p in paths}
    names = [Path(p).name.removesuffix(".json.gz") for p in paths]
    keys = list(dict.fromkeys(k for r in rows.values() for k in r))
    print("whole window on real traces (ms; each operation with the events and the full "
          f"window repaint after it; opens: medians of {REPEATS} fresh windows)")
    width = max(len(k) for k in keys) + 1
    print(f"{'':<{width}}" + "".join(f"{n:>26}" for n in names))
    for k in keys:
        cells = (f"{rows[p][k]:>26.1f}" if k in rows[p] else f"{'-':>26}" for p in paths)
        print(f"{k:<{width}}" + "".join(cells), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:] or TRACES)
