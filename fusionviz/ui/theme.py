"""Light and dark palettes for the app and the colors the graph view paints with.

Kernel colors come from ``fusionviz.model.palette`` (shared with the kernel pane and
the charts); this module only derives the tints and neutrals drawn around them, so a
kernel keeps its hue in both themes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


@dataclass(frozen=True)
class GraphColors:
    """Neutral colors of the graph scene for one theme."""

    dark: bool
    background: QColor
    node_fill: QColor
    node_border: QColor
    text: QColor
    subtext: QColor
    edge: QColor
    selection: QColor
    pair: QColor
    search: QColor
    changed: QColor
    collective: QColor  # the border of communication nodes (all-reduce, its wait, …)


_LIGHT = GraphColors(
    dark=False,
    background=QColor("#fbfbfa"),
    node_fill=QColor("#ffffff"),
    node_border=QColor("#6b6b6b"),
    text=QColor("#1d1d1d"),
    subtext=QColor("#5a5a5a"),
    edge=QColor("#9a9a9a"),
    selection=QColor("#1565c0"),
    pair=QColor("#d81b60"),
    search=QColor("#f9a825"),
    changed=QColor("#111111"),
    collective=QColor("#7b1fa2"),
)
_DARK = GraphColors(
    dark=True,
    background=QColor("#1e1f22"),
    node_fill=QColor("#2b2d31"),
    node_border=QColor("#a0a0a0"),
    text=QColor("#e8e8e8"),
    subtext=QColor("#b0b0b0"),
    edge=QColor("#6e6e6e"),
    selection=QColor("#64b5f6"),
    pair=QColor("#ff5c8d"),
    search=QColor("#ffd54f"),
    changed=QColor("#f5f5f5"),
    collective=QColor("#ce93d8"),
)


# Fusion outcomes, the same in the ledger, the charts and the comparison; readable on
# the light and the dark background. "undecided": a deferred decision never resolved.
OUTCOME_COLORS = {
    "fused": "#2e9e4f",
    "rejected": "#d9534f",
    "cycle": "#d9534f",
    "benchmark_slower": "#e08a1e",
    "spill": "#e08a1e",
    "undecided": "#8c8c8c",
}


def outcome_color(outcome: object) -> QColor | None:
    """The color of a ledger outcome; None (the default text color) for the others."""
    hex_color = OUTCOME_COLORS.get(outcome) if isinstance(outcome, str) else None
    return None if hex_color is None else qcolor(hex_color)


def graph_colors(dark: bool) -> GraphColors:
    return _DARK if dark else _LIGHT


@lru_cache(maxsize=4096)
def tint(hex_color: str, dark: bool, amount: float = 0.35) -> QColor:
    """``hex_color`` mixed into the scene background: an opaque region fill.

    Opaque (not alpha) so overlapping padded rectangles of one group do not darken
    where they overlap.
    """
    c, bg = QColor(hex_color), graph_colors(dark).background
    mix = (
        round(c.red() * amount + bg.red() * (1 - amount)),
        round(c.green() * amount + bg.green() * (1 - amount)),
        round(c.blue() * amount + bg.blue() * (1 - amount)),
    )
    return QColor(*mix)


@lru_cache(maxsize=4096)
def qcolor(hex_color: str) -> QColor:
    return QColor(hex_color)


def dark_palette() -> QPalette:
    p = QPalette()
    roles = {
        QPalette.ColorRole.Window: "#2b2d31",
        QPalette.ColorRole.WindowText: "#e8e8e8",
        QPalette.ColorRole.Base: "#1e1f22",
        QPalette.ColorRole.AlternateBase: "#26282c",
        QPalette.ColorRole.ToolTipBase: "#2b2d31",
        QPalette.ColorRole.ToolTipText: "#e8e8e8",
        QPalette.ColorRole.Text: "#e8e8e8",
        QPalette.ColorRole.Button: "#33353a",
        QPalette.ColorRole.ButtonText: "#e8e8e8",
        QPalette.ColorRole.BrightText: "#ff5c5c",
        QPalette.ColorRole.Highlight: "#3d6ea8",
        QPalette.ColorRole.HighlightedText: "#ffffff",
        QPalette.ColorRole.Link: "#64b5f6",
        QPalette.ColorRole.PlaceholderText: "#8a8a8a",
    }
    for role, color in roles.items():
        p.setColor(role, QColor(color))
    for role in (QPalette.ColorRole.Text, QPalette.ColorRole.ButtonText,
                 QPalette.ColorRole.WindowText):
        p.setColor(QPalette.ColorGroup.Disabled, role, QColor("#7a7a7a"))
    return p


def apply_theme(dark: bool) -> None:
    """Switch the whole application between the light and dark palettes."""
    app = QApplication.instance()
    if app is None:
        return
    # Fusion renders both palettes faithfully on every platform (native styles ignore
    # parts of a custom palette).
    app.setStyle("Fusion")
    app.setPalette(dark_palette() if dark else app.style().standardPalette())
    app.setProperty("fusionviz_dark", dark)


def is_dark() -> bool:
    app = QApplication.instance()
    return bool(app is not None and app.property("fusionviz_dark"))


# A module that lost (1) or won (-1) time under compile against eager: row tints of the
# Compiled vs eager pane and the Modules pane, the wash of a module's frame in the graph.
EAGER_TINTS = {1: QColor(220, 60, 60, 70), -1: QColor(60, 160, 90, 55)}
# The same two hues opaque: the graph view's ring around a module box and its badge.
EAGER_STROKES = {k: QColor(c.red(), c.green(), c.blue()) for k, c in EAGER_TINTS.items()}
