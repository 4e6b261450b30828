"""Module boxes and folding on big synthetic traces: open, fold/expand, step, pan.

    QT_QPA_PLATFORM=offscreen python benchmarks/bench_modules.py [sizes...]

Each size n is ``synthetic_trace(n, seed=1, rounds=3, blocks=n // 200)``: a module
hierarchy embed / layers.0 … layers.{n/200-1} (each with norm, attn.q, attn.o,
mlp.fc1, mlp.fc2) / head. The graph view (1200×800, offscreen) opens it (it folds
the repeated layers and collapses what is left to at most 60 items), then:
unfold the ×N box into its layers, open one layer, collapse it again (C on a node),
collapse to depth 2, fold again (R), focus on a node's 2-hop neighbourhood and back,
each timed with the frame that follows (ms, median of 3 rounds). Before those, round
steps and pans are timed on the first view, and on the graph with every module
expanded ("expand all" is timed too: it lays out every node, once).
Targets (#10): open + first frame <= 1 s, collapse/expand/fold <= 50 ms, round step
<= 16 ms at 5k nodes, pan <= 16 ms at 20k.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from PySide6.QtWidgets import QApplication

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.ui.graph.view import GraphView
from fusionviz.ui.view_state import ViewState

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ui import frame


def timed_frame(view, fn) -> float:
    t = time.perf_counter()
    fn()
    spent = time.perf_counter() - t
    return 1000 * (spent + frame(view))


def pan(view) -> float:
    pans = []
    for i in range(20):
        bar = view.horizontalScrollBar()
        bar.setValue(bar.value() + (60 if i % 2 else -60))
        pans.append(frame(view))
    return 1000 * statistics.median(pans)


def steps(view) -> float:
    return statistics.median(timed_frame(view, lambda k=k: view.state.set_step(k))
                             for k in [1, 2, 3, 0] * 3)


def bench(n: int) -> dict[str, float]:
    trace = synthetic_trace(n, seed=1, rounds=3, blocks=max(2, n // 200))
    state = ViewState()
    view = GraphView(state)
    view.resize(1200, 800)
    view.show()
    QApplication.processEvents()
    out = {"open+first": timed_frame(view, lambda: state.set_trace(trace, "synthetic")),
           "items": float(len(view.paint_data.names))}
    run = next(k for k, (b, _) in ((view.paint_data.names[i], v)
                                   for i, v in view.paint_data.boxes.items()) if b.run)
    node = next(n.name for n in trace.graphs[0].nodes if n.module == "layers.3.mlp.fc1")
    out["step (first view)"] = steps(view)
    out["pan (first view)"] = pan(view)
    # every node laid out the first time (cached afterwards, as in the app)
    out["expand all"] = timed_frame(view, view.expand_all_modules)
    view.resetTransform()
    out["step (all)"] = steps(view)
    out["pan (all)"] = pan(view)
    view.fold_repeated_blocks()
    rounds: dict[str, list[float]] = {}
    for _ in range(3):
        for name, fn in (
                ("unfold", lambda: view.expand_box(run)),
                ("open layer", lambda: view.expand_box("▣ layers.3")),
                ("collapse", lambda: (state.select_nodes((node,)), view.collapse_selected_module())),
                ("depth 2", lambda: view.collapse_to_depth(2)),
                ("fold", view.fold_repeated_blocks),
                ("focus", lambda: (state.select_nodes((node,)), view.expand_box(run),
                                   view.focus_selection())),
                ("unfocus", view.focus_selection)):
            rounds.setdefault(name, []).append(timed_frame(view, fn))
        view.fold_repeated_blocks()
        view.collapse_to_depth(0)
        view.folding.set_graph(trace.graphs[0])
        view._rebuild()
    out.update({k: statistics.median(v) for k, v in rounds.items()})
    view.close()
    return out


def main(sizes: list[int]) -> None:
    QApplication.instance() or QApplication([])
    rows = [(n, bench(n)) for n in sizes]
    cols = list(rows[0][1])
    print("module boxes (ms; items = what the first view shows)")
    print(f"{'nodes':>7} " + " ".join(f"{c:>17}" for c in cols))
    for n, r in rows:
        print(f"{n:>7} " + " ".join(f"{r[c]:>17.1f}" for c in cols), flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 5000, 20000])
