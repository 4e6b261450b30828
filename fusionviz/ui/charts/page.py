"""A chart page that is drawn only when seen, and how to tell that a widget is seen.

``ChartPage`` is a plot or a message; it draws a graph when it is on screen or when its
data is read, so hidden charts cost nothing when a large trace is opened; ``Drawn``
declares such data. ``OnScreenWatcher`` reports when a widget may have come on screen.
``ClickableBars`` is a bar item that reports which bar was clicked and shows each bar's
tip on hover.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from PySide6.QtCore import QEvent, QObject, QPointF, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QGraphicsItem, QLabel, QStackedWidget, QWidget

# isort: split
# pyqtgraph binds to the Qt already imported; PySide6 must come first.
import pyqtgraph as pg

from fusionviz.model.trace import Graph
from fusionviz.ui.plain import plain, tip
from fusionviz.ui.view_state import ViewState

PANEL_TITLE_H = 16  # px: the title line of a stacked panel
T = TypeVar("T")


class SparseAxis(pg.AxisItem):
    """An axis that leaves out the tick labels that would overlap others (pyqtgraph
    always labels two major ticks, even where a short panel has no room for both)."""

    def generateDrawSpecs(self, p):  # noqa: N802 (pyqtgraph override)
        specs = super().generateDrawSpecs(p)
        if specs is None:
            return None
        axis, ticks, texts = specs
        kept = []
        for spec in texts:
            if not any(spec[0].intersects(k[0]) for k in kept):
                kept.append(spec)
        return axis, ticks, kept


class ClickableBars(pg.BarGraphItem):
    """Bars that report a left click on one (``bar_at``) and show its tip on hover."""

    sig_bar_clicked = Signal(int)
    """A bar was clicked; argument: its index."""

    def __init__(self, tips: list[str], **opts) -> None:
        super().__init__(**opts)
        self._tips = tips
        self.setAcceptHoverEvents(True)

    def bar_at(self, pos: QPointF) -> int | None:
        raise NotImplementedError

    def mouseClickEvent(self, ev) -> None:  # noqa: N802 (pyqtgraph override)
        i = self.bar_at(ev.pos())
        if ev.button() == Qt.MouseButton.LeftButton and i is not None:
            ev.accept()
            self.sig_bar_clicked.emit(i)

    def hoverEvent(self, ev) -> None:  # noqa: N802 (pyqtgraph override)
        i = None if ev.isExit() else self.bar_at(ev.pos())
        self.setToolTip(tip(self._tips[i]) if i is not None else "")  # names: as text


def on_screen(widget: QWidget) -> bool:
    """Whether some of ``widget`` can be seen.

    Qt 6 keeps a tabified dock that is not in front "visible" and moves it outside the
    window instead, so ``isVisible()`` alone would draw every chart behind the ledger.
    (``visibleRegion()`` will not do either: it leaves out what opaque children cover.)
    """
    if not widget.isVisible():
        return False
    rect, w = widget.rect(), widget
    while not w.isWindow() and w.parentWidget() is not None:
        rect = rect.translated(w.pos()).intersected(w.parentWidget().rect())
        w = w.parentWidget()
    return not rect.isEmpty()


class Drawn(Generic[T]):
    """What a ``ChartPage`` draws, read as ``page.name``: the page is drawn first if its
    graph changed since (``refresh``), then its ``_name`` field is the value. Read-only:
    ``draw`` sets ``_name``. Declared ``names: Drawn[list[str]] = Drawn("The doc.")``."""

    def __init__(self, doc: str = "") -> None:
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name, self._field = name, f"_{name}"

    def __get__(self, page: ChartPage | None, owner: type | None = None) -> T:
        if page is None:  # read on the class: the descriptor (its doc)
            return self  # type: ignore[return-value]
        page.refresh()
        return getattr(page, self._field)

    def __set__(self, page: ChartPage, value: T) -> None:
        raise AttributeError(f"{self._name} is drawn, not set (draw sets {self._field})")


class ChartPage(QStackedWidget):
    """A plot, or the message saying why there is nothing to plot.

    Subclasses draw a graph in ``draw``; ``set_graph`` draws at once when the page is
    on screen and otherwise on the next show or read of the page's data (``refresh``).
    """

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._graph: Graph | None = None
        self._stale = False  # set_graph was called since the last draw
        self.plot_widget = pg.GraphicsLayoutWidget(self)
        # plain: a message may quote the trace (a timing note)
        self._message = plain(QLabel(self, alignment=Qt.AlignmentFlag.AlignCenter,
                                     wordWrap=True))
        self._message.setStyleSheet("color: gray; padding: 12px;")
        self.addWidget(self.plot_widget)
        self.addWidget(self._message)
        self._apply_palette()

    def set_graph(self, graph: Graph | None) -> None:
        """Chart ``graph``: now if the page is visible, else when it is next needed."""
        self._graph, self._stale = graph, True
        if on_screen(self):
            self.refresh()

    def refresh(self) -> None:
        """Draw the graph given to ``set_graph`` if that has not happened yet."""
        if self._stale:
            self._stale = False
            self.draw(self._graph)

    def draw(self, graph: Graph | None) -> None:
        raise NotImplementedError

    @property
    def stale(self) -> bool:
        return self._stale

    message: Drawn[QLabel] = Drawn("The label shown instead of a plot.")

    def has_data(self) -> bool:
        self.refresh()
        return self.currentWidget() is self.plot_widget

    def show_message(self, text: str) -> None:
        self.plot_widget.clear()
        self._message.setText(text)
        self.setCurrentWidget(self._message)

    def new_plot(self, row: int = 0, grid: str = "y", **labels: str) -> pg.PlotItem:
        """Add a styled plot at ``row``; ``labels`` map axis side → label text."""
        self.setCurrentWidget(self.plot_widget)
        plot = self.plot_widget.addPlot(row=row, col=0, axisItems={
            side: SparseAxis(side) for side in ("left", "bottom")})
        plot.showGrid(x="x" in grid, y="y" in grid, alpha=0.15)
        plot.setMenuEnabled(False)
        for side, text in labels.items():
            plot.setLabel(side, text)
            # "ms (x0.001)" reads worse than small numbers in the unit the label names
            plot.getAxis(side).enableAutoSIPrefix(False)
        self._style_axes(plot)
        return plot

    def new_panel(self, row: int, title: str) -> pg.PlotItem:
        """One of stacked panels sharing an x axis, ``title`` (its quantity and unit) on
        a line above it: rotated axis labels of short panels run into each other."""
        plot = self.new_plot(row)
        self.panel_title(plot, title)
        plot.getAxis("left").setWidth(64)  # equal widths keep the stacked x axes aligned
        plot.getAxis("left").enableAutoSIPrefix(False)  # the title names the unit
        return plot

    def panel_title(self, plot: pg.PlotItem, title: str) -> None:
        plot.setTitle(title, color=self.foreground(), size="8pt", justify="left")
        plot.layout.setRowFixedHeight(0, PANEL_TITLE_H)
        plot.titleLabel.setMaximumHeight(PANEL_TITLE_H)

    def foreground(self) -> QColor:
        return self.palette().color(QPalette.ColorRole.Text)

    def _style_axes(self, plot: pg.PlotItem) -> None:
        for side in ("left", "bottom"):
            axis = plot.getAxis(side)
            axis.setPen(self.foreground())
            axis.setTextPen(self.foreground())
            # Axes repaint with every marker move (~7 ms each, mostly text); from a
            # pixmap they cost nothing until their ticks change (update() drops it).
            axis.setCacheMode(QGraphicsItem.CacheMode.DeviceCoordinateCache)

    def _apply_palette(self) -> None:
        self.plot_widget.setBackground(self.palette().color(QPalette.ColorRole.Base))
        for item in self.plot_widget.ci.items:
            if isinstance(item, pg.PlotItem):
                self._style_axes(item)

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802 (Qt override)
        super().changeEvent(event)
        if event.type() == QEvent.Type.PaletteChange:
            self._apply_palette()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        if on_screen(self):  # a tab brought to the front: draw before its first paint
            self.refresh()
        super().showEvent(event)


class OnScreenWatcher(QObject):
    """Calls ``callback`` whenever ``widget`` may have come on screen.

    That is when it is shown, and when one of its ancestors moves or resizes: bringing
    a tabified dock to the front moves it into the window, and no show event reaches
    the widgets inside it.
    """

    def __init__(self, widget: QWidget, callback: Callable[[], None]) -> None:
        super().__init__(widget)
        self._widget, self._callback = widget, callback
        self._watched: list[QWidget] = []
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        kind = event.type()
        if kind == QEvent.Type.Show and watched is self._widget:
            self._watch_ancestors()  # docked (reparented) since the last show, maybe
        if kind in (QEvent.Type.Move, QEvent.Type.Resize, QEvent.Type.Show):
            self._callback()
        return False

    def _watch_ancestors(self) -> None:
        ancestors, w = [], self._widget.parentWidget()
        while w is not None:
            ancestors.append(w)
            w = w.parentWidget()
        if ancestors != self._watched:
            for w in self._watched:
                w.removeEventFilter(self)
            for w in ancestors:
                w.installEventFilter(self)
            self._watched = ancestors
