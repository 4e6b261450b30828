"""The window's layout: saved and restored on the screen it was made for only, Reset
Layout, Wide Code, a fitted graph that stays fitted when the window grows, and a kernel
chosen in another pane brought into view without jumping away from what is shown."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QSettings

from fusionviz.ui.main_window import MainWindow
from fusionviz.ui.window.layout import SIDE_DOCKS, dock_sizes, screen_key

GPT2 = Path(__file__).resolve().parents[1] / "data" / "gpu_gpt2_train.json.gz"


def shown(qtbot, settings: QSettings) -> MainWindow:
    w = MainWindow(settings=settings)
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    return w


def test_a_layout_comes_back_on_its_own_screen_size_only(qtbot, isolated_settings):
    path = str(isolated_settings / "layout.ini")
    w = shown(qtbot, QSettings(path, QSettings.Format.IniFormat))
    assert not w.window_layout.restored  # nothing saved yet
    w.docks["charts"].raise_()
    w.docks["graphs"].hide()
    w.close()
    again = shown(qtbot, QSettings(path, QSettings.Format.IniFormat))
    assert again.window_layout.restored
    assert not again.docks["graphs"].isVisible()
    again.close()
    other = QSettings(path, QSettings.Format.IniFormat)
    assert other.value("layout_screen") == screen_key(again.window_layout.free_area())
    other.setValue("layout_screen", "0,0,1920,1080")  # saved on another screen
    other.sync()
    moved = shown(qtbot, QSettings(path, QSettings.Format.IniFormat))
    assert not moved.window_layout.restored
    assert moved.docks["graphs"].isVisible()  # the first-run layout for this screen


def test_reset_layout_docks_every_pane_again_and_forgets_the_saved_one(qtbot, settings):
    w = shown(qtbot, settings)
    w.docks["kernel"].setFloating(True)
    w.docks["kernel"].move(-5000, -5000)
    w.docks["modules"].hide()
    w.save_layout()
    assert settings.value("window_state") is not None
    w.actions_by_name["reset_layout"].trigger()
    qtbot.wait(20)
    assert not w.docks["kernel"].isFloating() and w.docks["modules"].isVisible()
    assert settings.value("window_state") is None
    assert w.docks["kernel"].x() >= 0


def test_wide_code_gives_the_kernel_pane_the_width_and_gives_it_back(qtbot, settings):
    w = shown(qtbot, settings)
    w.resize(1600, 900)
    qtbot.wait(20)
    before = w.docks["kernel"].width()
    w.actions_by_name["wide_code"].trigger()
    qtbot.wait(20)
    assert w.window_layout.wide
    assert w.docks["kernel"].width() > 2 * before
    assert not any(w.docks[name].isVisible() for name in SIDE_DOCKS)
    w.actions_by_name["wide_code"].trigger()
    qtbot.wait(20)
    assert abs(w.docks["kernel"].width() - before) <= 8
    assert w.docks["graphs"].isVisible()


def test_dock_sizes_are_shares_of_the_window_within_usable_bounds():
    assert dock_sizes(1152, 680) == {"left": 207, "right": 345, "bottom": 217}
    assert dock_sizes(4000, 2000)["right"] == 720  # not a 1200-px code pane
    assert dock_sizes(800, 500)["left"] == 200


def test_a_fitted_graph_is_fitted_again_when_the_window_grows(qtbot, window):
    assert window.open_trace(str(GPT2)), window.errors
    view = window.graph_view
    view.fit()
    scale = view.transform().m11()
    window.resize(window.width(), window.height() + 300)
    qtbot.wait(20)
    assert view.transform().m11() > scale  # the whole graph, bigger: no F needed
    view.zoom_in()
    zoomed = view.transform().m11()
    window.resize(window.width(), window.height() - 200)
    qtbot.wait(20)
    assert view.transform().m11() == zoomed  # the user's zoom is theirs


def test_a_kernel_chosen_elsewhere_scrolls_to_it_and_k_shows_all_of_it(qtbot, window):
    assert window.open_trace(str(GPT2)), window.errors
    view, graph = window.graph_view, window.state.graph
    view.expand_all_modules()
    # a fused kernel of many nodes across the blocks (a layer norm fused 12 times)
    kernel = max(graph.kernels, key=lambda k: len(k.nodes))
    view.resetTransform()
    view.centerOn(view.scene().sceneRect().bottomRight())
    window.state.select_kernel(kernel.name)  # from the Kernels table, say
    port = view.mapToScene(view.viewport().rect()).boundingRect()
    ids = view._ids(kernel.nodes)
    assert any(port.intersects(view.paint_data.rects[i]) for i in ids)
    window.actions_by_name["whole_kernel"].trigger()
    port = view.mapToScene(view.viewport().rect()).boundingRect()
    assert all(port.contains(view.paint_data.rects[i]) for i in ids)
