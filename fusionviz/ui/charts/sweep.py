"""The round-sweep chart: runtime, kernels, estimated bytes and compile time after round k.

Plots ``experiments.sweep_rows`` (one row per "fusion stopped after round k" variant,
k = 0 … L) as stacked panels sharing the x axis, with the full compile (the baseline)
as a dashed line; clicking a point asks the comparison to show that variant.
"""

from __future__ import annotations

import math

import numpy as np
from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QWidget

# isort: split
# pyqtgraph binds to the Qt already imported; PySide6 must come first.
import pyqtgraph as pg

from fusionviz.model.report.formatting import MIB
from fusionviz.ui.charts.page import ChartPage

_SERIES_COLOR, _BASELINE_COLOR, _MARK_COLOR = "#4e79a7", "#8c8c8c", "#d81b60"


class SweepChart(ChartPage):
    """Metrics of the round-sweep variants against k, one panel per metric."""

    # (row key, panel title with its unit, scale applied to the values)
    PANELS = (("compiled_ms", "compiled time (ms)", 1.0), ("kernels", "kernels", 1.0),
              ("est_bytes", "est. memory traffic (MiB)", 1 / MIB),
              ("compile_s", "compile time (s)", 1.0))

    sig_round_clicked = Signal(int)
    """A point was clicked; argument: k (its row in the sweep rows)."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(None, parent)
        self.rows: list[dict] = []
        self.curves: dict[str, pg.PlotDataItem] = {}
        self.spread_bars: pg.ErrorBarItem | None = None
        self._markers: list[pg.InfiniteLine] = []
        self._marked: int | None = None
        self.show_message("No round sweep in this experiment.")

    def set_rows(self, rows: list[dict], baseline: dict | None = None) -> None:
        """Plot ``rows`` (k = 0 … L in order) and ``baseline`` (all rounds) as reference."""
        self.rows, self.curves, self._markers = list(rows), {}, []
        self.spread_bars: pg.ErrorBarItem | None = None
        if not rows:
            self.show_message("The sweep recorded no variants.")
            return
        self.plot_widget.clear()
        ticks = [[(k, str(k)) for k in range(len(rows))]]
        first = None
        for i, (key, label, scale) in enumerate(self.PANELS):
            plot = self.new_panel(i, label)
            plot.getAxis("bottom").setTicks(ticks)
            last = i == len(self.PANELS) - 1
            plot.getAxis("bottom").setStyle(showValues=last)
            if last:
                plot.setLabel("bottom", "fusion stopped after round k")
            if first is None:
                first = plot
                plot.setXRange(-0.5, len(rows) - 0.5, padding=0)
            else:
                plot.setXLink(first)
            self._panel(plot, key, label, scale, baseline)
        self.mark(self._marked)

    def _panel(self, plot: pg.PlotItem, key: str, label: str, scale: float,
               baseline: dict | None) -> None:
        points = [(k, r[key] * scale) for k, r in enumerate(self.rows) if r.get(key) is not None]
        if not points:
            plot.addItem(pg.TextItem(f"{label}: not recorded", color=self.foreground()))
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        log = _wants_log(ys)
        if log:  # one noisy timing must not flatten every other point onto the axis
            plot.setLogMode(y=True)
            self.panel_title(plot, f"{label}, log scale")
        curve = plot.plot(xs, ys, pen=pg.mkPen(_SERIES_COLOR, width=2), symbol="o",
                          symbolSize=8, symbolBrush=_SERIES_COLOR, name=label)
        curve.setToolTip(label)
        curve.sigPointsClicked.connect(self._on_points_clicked)
        if key == "compiled_ms" and not log:
            self._spread_bars(plot, scale)
        self.curves[key] = curve
        ref = baseline.get(key) if baseline is not None else None
        if ref is not None and not (log and ref <= 0):
            y = math.log10(ref * scale) if log else ref * scale
            dashed = pg.mkPen(_BASELINE_COLOR, width=1, style=Qt.PenStyle.DashLine)
            plot.addItem(pg.InfiniteLine(pos=y, angle=0, pen=dashed, label="all rounds",
                                         labelOpts={"position": 1.0, "color": _BASELINE_COLOR,
                                                    "anchors": [(1, 1), (1, 1)]}))
        marker = pg.InfiniteLine(angle=90, pen=pg.mkPen(_MARK_COLOR, width=2))
        marker.hide()
        plot.addItem(marker)
        self._markers.append(marker)

    def _spread_bars(self, plot: pg.PlotItem, scale: float) -> None:
        """(min, max) of each variant's runtime samples: where two variants' bars
        overlap, their difference is within noise."""
        spans = [(k, r["compiled_ms"], r.get("compiled_min_ms"), r.get("compiled_max_ms"))
                 for k, r in enumerate(self.rows) if r.get("compiled_ms") is not None]
        spans = [s for s in spans if s[2] is not None and s[3] is not None]
        if not spans:
            return
        self.spread_bars = pg.ErrorBarItem(
            x=np.array([s[0] for s in spans], dtype=float),
            y=np.array([s[1] * scale for s in spans]),
            top=np.array([(s[3] - s[1]) * scale for s in spans]),
            bottom=np.array([(s[1] - s[2]) * scale for s in spans]),
            beam=0.2, pen=pg.mkPen(_SERIES_COLOR, width=1))
        self.spread_bars.setToolTip("min-max of the timing samples: overlapping bars are "
                                    "within noise")
        plot.addItem(self.spread_bars)

    def mark(self, k: int | None) -> None:
        """Mark variant k (the one the comparison shows) in every panel."""
        self._marked = k
        for marker in self._markers:
            marker.setVisible(k is not None)
            if k is not None:
                marker.setValue(k)

    def marked(self) -> int | None:
        return self._marked

    def point_count(self, key: str) -> int:
        xs, _ = self.curves[key].getData()
        return 0 if xs is None else len(xs)

    def _on_points_clicked(self, _item, points, _ev) -> None:
        if len(points):
            self.sig_round_clicked.emit(round(points[0].pos().x()))


def _wants_log(values: list[float]) -> bool:
    """Log scale when values are positive and span more than 30×."""
    return len(values) > 1 and min(values) > 0 and max(values) / min(values) > 30
