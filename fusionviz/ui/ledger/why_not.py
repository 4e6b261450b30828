"""The "why not fused?" report on two selected nodes: every recorded decision between
their groups (``queries.why_not_fused``, written by ``report.why_report`` as
``fusionviz why`` writes it), in a non-modal dialog."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QVBoxLayout

from fusionviz.model.names import Names
from fusionviz.model.queries import why_not_fused
from fusionviz.model.report.formatting import clip
from fusionviz.model.report.why_report import COLUMNS, entry_cells
from fusionviz.ui.plain import SafeBrowser


def why_not_html(why, names: Names | None = None) -> str:
    """The ``why_not_fused`` report as HTML: the two nodes by readable name (main ops and
    module), the summary, then one line per recorded decision (``why_report``'s cells,
    which ``fusionviz why`` prints too)."""
    names = names or Names(None)
    a, b = (escape(clip(names.label(n))) for n in (why.node_a, why.node_b))
    parts = [f"<h3>{a}<br>× {b}</h3>", f"<p>{escape(clip(why.summary))}</p>"]
    if why.entries:
        parts.append("<table cellspacing=6><tr>"
                     + "".join(f"<th align=left>{h}</th>" for h in COLUMNS) + "</tr>")
        for e in why.entries:
            parts.append("<tr>" + "".join(f"<td>{escape(clip(c))}</td>" for c in entry_cells(e))
                         + "</tr>")
        parts.append("</table>")
    return "".join(parts)


class WhyNotDialog(QDialog):
    """Non-modal report on why two selected nodes did (not) end up in one kernel."""

    def __init__(self, graph, a: str, b: str, parent=None, on_try=None) -> None:
        super().__init__(parent)
        self.why = why_not_fused(graph, a, b)
        self.setWindowTitle(clip(f"Why not fused? {a} × {b}", 200))
        self.text = SafeBrowser()
        self.text.setHtml(why_not_html(self.why, Names(graph)))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        if on_try is not None:  # the window's Advisor: replay the graph with them fused
            self.try_button = buttons.addButton("&Try Fusing Them (Advisor)",
                                                QDialogButtonBox.ButtonRole.ActionRole)
            self.try_button.setToolTip("Compile this graph again with the pair fused, "
                                       "without your script, and time it beside baseline "
                                       "replays (the Advisor pane)")
            self.try_button.clicked.connect(on_try)
        box = QVBoxLayout(self)
        box.addWidget(self.text)
        box.addWidget(buttons)
        self.resize(720, 420)
