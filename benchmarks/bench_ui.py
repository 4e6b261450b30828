"""Benchmark the graph view on synthetic traces: open, fusion step, pan and full frames.

Run: ``QT_QPA_PLATFORM=offscreen python benchmarks/bench_ui.py [sizes…]``. A frame is
the view rendered into an image of the viewport's size (what a repaint costs).
Targets (2-core CI machine): 20k open ≤ 1 s, step ≤ 16 ms at 5k, pan ≤ 16 ms at 20k.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtWidgets import QApplication  # noqa: E402

from fusionviz.model.synthetic import synthetic_trace  # noqa: E402
from fusionviz.ui.graph_view import GraphView  # noqa: E402
from fusionviz.ui.view_state import ViewState  # noqa: E402

VIEW_SIZE = (1200, 800)


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
    for k in [1, 2, 3, 0] * 3:  # first visits compute a step's style, later ones reuse it
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


def main(sizes: list[int]) -> None:
    QApplication.instance() or QApplication([])
    cols = ("open", "first", "open+first", "full", "step", "pan")
    print(f"{'nodes':>7} " + " ".join(f"{c + ' ms':>13}" for c in cols))
    for n in sizes:
        r = bench(n)
        print(f"{n:>7} " + " ".join(f"{r[c]:>13.1f}" for c in cols), flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 5000, 20000])
