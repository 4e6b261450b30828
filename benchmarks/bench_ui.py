"""Benchmark the explorer on synthetic traces: open, fusion step, pan and full frames.

Run: ``QT_QPA_PLATFORM=offscreen python benchmarks/bench_ui.py [sizes…]``. Two tables
from the same run: the graph view alone (``ViewState.set_trace`` on a trace in memory),
and the whole ``MainWindow`` opening the trace saved to a file (``load_trace``, layout,
every pane, queued events and the first frame of the window). A frame is a synchronous
``repaint()`` (see ``frame``). Targets (2-core CI machine): 20k open ≤ 1 s, step ≤ 16 ms
at 5k, pan ≤ 16 ms at 20k, for the whole window.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import save_trace
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.main_window import MainWindow
from fusionviz.ui.view_state import ViewState

VIEW_SIZE = (1200, 800)
WINDOW_SIZE = (1500, 950)  # the main window's first-run size
STEPS = [1, 2, 3, 0] * 3  # first visits compute a step's style, later ones reuse it


def frame(view: GraphView) -> float:
    """Seconds to repaint the whole viewport (synchronous, as the event loop would).

    ``repaint()`` on the offscreen platform paints into the backing store like a real
    frame, with Qt's exposed-region clipping (``QGraphicsView.render`` would paint every
    item in full). A pan is measured as a full repaint too, which overstates it: Qt
    scrolls the old pixels and paints only the newly exposed strip.
    """
    t = time.perf_counter()
    view.viewport().repaint()
    spent = time.perf_counter() - t
    QApplication.processEvents()  # let queued bookkeeping run outside the timing
    return spent


def timed(fn) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def median_ms(samples) -> float:
    return 1000 * statistics.median(samples)


def bench(n: int) -> dict[str, float]:
    trace = synthetic_trace(n, seed=1, rounds=3)
    state = ViewState()
    view = GraphView(state)
    view.resize(*VIEW_SIZE)
    view.show()
    QApplication.processEvents()  # exposed, so repaint() really paints
    opened = timed(lambda: state.set_trace(trace, "synthetic"))
    first = frame(view)
    full = [frame(view) for _ in range(5)]
    steps = []
    for k in STEPS:
        steps.append(timed(lambda k=k: state.set_step(k)) + frame(view))
    view.resetTransform()
    view.centerOn(view.node_scene_pos(trace.graphs[0].nodes[n // 2].name))
    pans = []
    for i in range(20):
        bar = view.horizontalScrollBar()
        bar.setValue(bar.value() + (60 if i % 2 else -60))
        pans.append(frame(view))
    view.close()
    return {"open": 1000 * opened, "first": 1000 * first, "open+first": 1000 * (opened + first),
            "full": median_ms(full), "step": median_ms(steps), "pan": median_ms(pans)}


def window_frame(window: MainWindow) -> float:
    """Seconds to flush queued events, then repaint every visible widget of the window.

    Work a pane defers to the event loop (a timer, a posted update) is counted here, and
    so is the event loop's own repaint of what changed: with the full ``repaint()`` after
    it, a window frame is an upper bound (the unchanged panes are painted once more).
    """
    t = time.perf_counter()
    QApplication.processEvents()
    window.repaint()
    return time.perf_counter() - t


def _time_calls(obj, name: str) -> list[float]:
    """Record the seconds of every call of ``obj.name`` from now on."""
    spent, method = [], getattr(obj, name)

    def timed_method(*args, **kwargs):
        t = time.perf_counter()
        method(*args, **kwargs)
        spent.append(time.perf_counter() - t)

    setattr(obj, name, timed_method)
    return spent


def settle(window: MainWindow) -> float:
    """Seconds until the window's idle-time work is done (events processed meanwhile)."""
    start = time.perf_counter()
    while window.completer.running or window.warmer.running:
        QApplication.processEvents()
    return time.perf_counter() - start


def _open_once(path: Path, folder: Path, n: int | str, k: int,
               graph: int = 0) -> tuple[MainWindow, dict[str, float]]:
    """A fresh window (first-run dock layout) opening ``path`` on graph ``graph`` (as
    ``fusionviz PATH --graph N``): load, panes, first frame, then the idle-time work:
    the lazily loaded rest, and every fusion step prepared."""
    settings = QSettings(str(folder / f"window_{n}_{k}.ini"), QSettings.Format.IniFormat)
    window = MainWindow(settings=settings)
    window.resize(*WINDOW_SIZE)
    window.show()
    QApplication.processEvents()
    shown = _time_calls(window.state, "set_trace")  # open_trace = load_trace + set_trace
    opened = timed(lambda: window.open_trace(str(path), graph))
    first = window_frame(window)
    assert window.state.graph is not None, window.errors
    rest = settle(window)  # the rest, between events
    return window, {"load": 1000 * (opened - shown[0]), "panes": 1000 * shown[0],
                    "open": 1000 * opened, "first": 1000 * first,
                    "open+first": 1000 * (opened + first), "w/o load": 1000 * (shown[0] + first),
                    "rest": 1000 * rest}


def bench_window(n: int, folder: Path, repeats: int = 3) -> dict[str, float]:
    """The whole window: open the trace file (``repeats`` times, medians), step rounds,
    pan the graph."""
    path = folder / f"synthetic_{n}.json.gz"
    save_trace(synthetic_trace(n, seed=1, rounds=3), path)
    opens = []
    for k in range(repeats):
        window, times = _open_once(path, folder, n, k)
        opens.append(times)
        if k < repeats - 1:
            window.close()
            window.deleteLater()
            QApplication.processEvents()
    result = {key: statistics.median(t[key] for t in opens) for key in opens[0]}
    result["open+first min"] = min(t["open+first"] for t in opens)
    steps = [timed(lambda k=k: window.state.set_step(k)) + window_frame(window) for k in STEPS]
    # The same steps as a user sees them: the event loop repaints only what changed.
    natural = [timed(lambda k=k: (window.state.set_step(k), QApplication.processEvents()))
               for k in STEPS]
    pans = window_pans(window, window.state.graph.nodes[n // 2].name)
    window.close()
    return {**result, "step": median_ms(steps), "step max": 1000 * max(steps),
            "step (loop)": median_ms(natural), "pan": median_ms(pans)}


def window_pans(window: MainWindow, name: str) -> list[float]:
    """Seconds of 20 pans of the window's graph view (unzoomed, around node ``name``),
    each a scroll, the view's repaint and the events after it."""
    view = window.graph_view
    view.resetTransform()
    view.centerOn(view.node_scene_pos(name))
    QApplication.processEvents()
    pans = []
    for i in range(20):
        bar = view.horizontalScrollBar()
        t = time.perf_counter()
        bar.setValue(bar.value() + (60 if i % 2 else -60))
        view.viewport().repaint()
        QApplication.processEvents()  # the minimap follows the scroll bars
        pans.append(time.perf_counter() - t)
    return pans


def _table(title: str, cols: tuple[str, ...], rows: list[tuple[int, dict]]) -> None:
    print(title)
    print(f"{'nodes':>7} " + " ".join(f"{c + ' ms':>13}" for c in cols))
    for n, r in rows:
        print(f"{n:>7} " + " ".join(f"{r[c]:>13.1f}" for c in cols), flush=True)


def main(sizes: list[int]) -> None:
    QApplication.instance() or QApplication([])
    view_rows = [(n, bench(n)) for n in sizes]
    _table("graph view alone (trace in memory)",
           ("open", "first", "open+first", "full", "step", "pan"), view_rows)
    with tempfile.TemporaryDirectory() as folder:
        window_rows = [(n, bench_window(n, Path(folder))) for n in sizes]
    _table("whole window (open = load + panes: load_trace(lazy=True), then ViewState.set_trace "
           "with the layout and every pane; first = events + frame; medians of 3 opens, and "
           "the fastest; rest = the lazily loaded rest and every step prepared, between events "
           "after the first frame; step = state change + events + full window repaint, step (loop) = without "
           "the full repaint)",
           ("load", "panes", "first", "open+first", "open+first min", "rest", "step",
            "step max", "step (loop)", "pan"),
           window_rows)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 5000, 20000])
