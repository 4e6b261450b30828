"""Where the main window and its docks go: a first-run size from the screen, a saved
layout restored only on the screen size it was saved for, Reset Layout, Wide Code.

A layout saved on a 1920×1080 screen and restored on a 1280×800 one gives docks of a
few dozen pixels and a window off the screen; such a layout is set aside and the
window laid out afresh for the screen it is on (the saved one comes back on a screen
of its own size)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QMainWindow

SHARE_OF_SCREEN = 0.85  # first-run window: this share of the screen's free area
LEFT, RIGHT, BOTTOM = (Qt.DockWidgetArea.LeftDockWidgetArea,
                       Qt.DockWidgetArea.RightDockWidgetArea,
                       Qt.DockWidgetArea.BottomDockWidgetArea)
# dock name -> its area; each area's docks after the first are tabbed behind the first
AREAS = {"graphs": LEFT, "modules": LEFT, "notices": LEFT,
         "kernel": RIGHT, "details": RIGHT,
         "ledger": BOTTOM, "kernels": BOTTOM, "charts": BOTTOM, "eager": BOTTOM,
         "advisor": BOTTOM, "output": BOTTOM}
TABBED = (("kernel", "details"), ("ledger", "kernels", "charts", "eager", "advisor", "output"))
SIDE_DOCKS = ("graphs", "modules", "notices")  # hidden while the code is wide


def _clamp(value: float, low: int, high: int) -> int:
    return int(max(low, min(high, value)))


def dock_sizes(width: int, height: int) -> dict[str, int]:
    """The first-run widths of the side docks and height of the bottom ones, for a
    window of ``width``×``height``: shares of it, within sizes that stay usable."""
    return {"left": _clamp(0.18 * width, 200, 380), "right": _clamp(0.30 * width, 300, 720),
            "bottom": _clamp(0.32 * height, 200, 460)}


def screen_key(rect: QRect) -> str:
    return f"{rect.x()},{rect.y()},{rect.width()},{rect.height()}"


class WindowLayout:
    """The window's geometry and dock arrangement, saved in ``settings``."""

    def __init__(self, window: QMainWindow, docks: dict[str, QDockWidget],
                 settings: QSettings) -> None:
        self.window, self.docks, self.settings = window, docks, settings
        # Until the first show tabs them, docks side by side would ask for the sum of
        # their minimum widths (wider than a 1280-px screen): only each group's first
        # is shown before (restore_docks shows the others, or the saved state does).
        for _first, *others in TABBED:
            for name in others:
                docks[name].hide()
        self._wide_state = None  # the docks' state before Wide Code
        self.restored = False  # the saved layout was for this screen and came back

    def free_area(self) -> QRect:
        screen = self.window.screen() or QGuiApplication.primaryScreen()
        return screen.availableGeometry() if screen is not None else QRect(0, 0, 1500, 950)

    def _saved_here(self) -> bool:
        """A layout was saved, and on a screen with the free area of this one."""
        return (self.settings.value("geometry") is not None
                and self.settings.value("layout_screen") == screen_key(self.free_area()))

    def restore_geometry(self) -> None:
        """Before the first show: the saved geometry on its own screen size, else a
        share of this screen, centred."""
        if self._saved_here() and self.window.restoreGeometry(self.settings.value("geometry")):
            if self.free_area().contains(self.window.frameGeometry().topLeft()):
                return
        self.fit_to_screen()

    def fit_to_screen(self) -> None:
        free = self.free_area()
        hint = self.window.minimumSizeHint()
        width = max(int(free.width() * SHARE_OF_SCREEN), min(hint.width(), free.width()))
        height = max(int(free.height() * SHARE_OF_SCREEN), min(hint.height(), free.height()))
        self.window.resize(width, height)
        self.window.move(free.x() + (free.width() - width) // 2,
                         free.y() + (free.height() - height) // 2)

    def restore_docks(self) -> None:
        """At the first show: the saved dock state where it was saved for this screen
        size and every dock it floats is on the screen, else the first-run one."""
        saved = self.settings.value("window_state")
        self.restored = bool(self._saved_here() and saved is not None
                             and self.window.restoreState(saved) and self._floating_fit())
        if not self.restored:
            self.arrange()

    def _refit(self) -> None:
        self.window.layout().activate()  # the tabbed docks' (smaller) minimum, now
        if not self.window.isMaximized() and \
                not self.free_area().contains(self.window.frameGeometry()):
            self.fit_to_screen()
            self._size_docks()

    def _floating_fit(self) -> bool:
        free = self.free_area()
        return all(free.contains(d.frameGeometry()) for d in self.docks.values()
                   if d.isFloating() and d.isVisible())

    def arrange(self) -> None:
        """The first-run layout, sized for the window as it is now: graphs left,
        kernel and details right, ledger, kernels, charts, … below."""
        for name, dock in self.docks.items():
            dock.setFloating(False)
            self.window.addDockWidget(AREAS[name], dock)
            dock.show()
        for first, *others in TABBED:
            for name in others:
                self.window.tabifyDockWidget(self.docks[first], self.docks[name])
            self.docks[first].raise_()
        self._size_docks()
        self._wide_state = None

    def _size_docks(self) -> None:
        sizes = dock_sizes(self.window.width(), self.window.height())
        self.window.resizeDocks([self.docks["graphs"], self.docks["kernel"]],
                                [sizes["left"], sizes["right"]], Qt.Orientation.Horizontal)
        self.window.resizeDocks([self.docks["ledger"]], [sizes["bottom"]],
                                Qt.Orientation.Vertical)

    def reset(self) -> None:
        """View ▸ Reset Layout: back on the screen, the first-run docks, nothing saved."""
        for key in ("geometry", "window_state", "layout_screen"):
            self.settings.remove(key)
        self.arrange()
        self._refit()

    def save(self, state) -> None:
        self.settings.setValue("geometry", self.window.saveGeometry())
        self.settings.setValue("window_state", state)
        self.settings.setValue("layout_screen", screen_key(self.free_area()))
        self.settings.sync()

    @property
    def wide(self) -> bool:
        return self._wide_state is not None

    def toggle_wide_code(self) -> None:
        """The kernel pane takes the width the side docks and most of the graph had (two
        kernels side by side get readable columns); again: the docks as they were."""
        if self._wide_state is not None:
            self.window.restoreState(self._wide_state)
            self._wide_state = None
            return
        self._wide_state = self.window.saveState()
        kernel = self.docks["kernel"]
        kernel.setFloating(False)
        kernel.show()
        kernel.raise_()
        for name in SIDE_DOCKS:
            if not self.docks[name].isFloating():
                self.docks[name].hide()
        graph_keeps = self.window.centralWidget().minimumSizeHint().width()
        self.window.resizeDocks([kernel], [max(300, self.window.width() - graph_keeps - 40)],
                                Qt.Orientation.Horizontal)
