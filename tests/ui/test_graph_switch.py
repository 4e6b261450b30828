"""Switching graphs on a real GPU train step (HF Llama, H100): what idle time prepares
ahead of a switch (the other graphs' checks, module tint, modules and extern kernels'
facts, Expand All's layout) shows the same as a window that builds it all at the switch."""

from __future__ import annotations

from pathlib import Path

from fusionviz.model.report import extern_facts
from fusionviz.ui.main_window import MainWindow

TRACE = str(Path(__file__).resolve().parents[1] / "data" / "gpu_llama_hf_train.json.gz")


def _idle(window, qtbot) -> None:
    qtbot.waitUntil(lambda: not window.completer.running and not window.warmer.running,
                    timeout=20000)


def _placed(window) -> list:
    paint = window.graph_view.paint_data
    return list(zip(paint.names, paint.x.tolist(), paint.y.tolist(), strict=True))


def _shown(window) -> dict:
    view = window.graph_view
    outline = window.module_outline
    return {"notices": window.notice_lines(), "names": list(view.paint_data.names),
            "tint": sorted(view.tint.marks), "legend": view.tint.legend.text(),
            "outline": sorted((item.text(0), item.text(3))
                              for item in outline.items.values()),
            "strips": {k: s.text() for k, s in window.strips.items()}}


def test_a_switch_after_idle_time_shows_what_a_switch_at_once_shows(window, qtbot, settings):
    assert window.open_trace(TRACE), window.errors
    _idle(window, qtbot)  # the forward graph's steps, then the backward one prepared
    backward = window.state.trace.graphs[1]
    assert extern_facts._kept.get(backward) is not None  # the kernel table's facts too
    window.state.set_graph(1)
    prepared = _shown(window)
    _idle(window, qtbot)
    prepared_later = _shown(window)
    window.graph_view.expand_all_modules()  # laid out ahead, in idle time
    expanded = _placed(window)

    fresh = MainWindow(settings=settings)
    qtbot.addWidget(fresh)
    fresh.resize(1400, 900)
    fresh.show()
    qtbot.waitExposed(fresh)
    assert fresh.open_trace(TRACE), fresh.errors
    fresh.state.set_graph(1)  # at once: nothing prepared
    _idle(fresh, qtbot)
    assert prepared_later == _shown(fresh)
    assert prepared["names"] == prepared_later["names"] and prepared["tint"]
    fresh.graph_view._layouts.clear()  # laid out at the click
    fresh.graph_view.expand_all_modules()
    assert expanded == _placed(fresh)
    window.state.set_graph(0)
    window.state.set_graph(1)  # a graph shown again: its checks and modules kept
    assert _shown(window)["notices"] == prepared_later["notices"]
