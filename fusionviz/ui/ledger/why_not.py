"""The "why not fused?" report on two selected nodes: every recorded decision between
their groups (``queries.why_not_fused``), in a non-modal dialog."""

from __future__ import annotations

from html import escape

from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout

from fusionviz.model.names import Names
from fusionviz.model.queries import why_not_fused
from fusionviz.model.report.formatting import cell


def why_not_html(why, names: Names | None = None) -> str:
    """The ``why_not_fused`` report as HTML: the two nodes by readable name (main ops and
    module), the summary, then one line per recorded decision."""
    names = names or Names(None)
    parts = [f"<h3>{escape(names.label(why.node_a))}<br>× {escape(names.label(why.node_b))}</h3>",
             f"<p>{escape(why.summary)}</p>"]
    if why.entries:
        head = ("round", "phase", "rank", "pair", "outcome", "reasons", "benchmark")
        parts.append("<table cellspacing=6><tr>" + "".join(f"<th align=left>{h}</th>" for h in head)
                     + "</tr>")
        for e in why.entries:
            cells = (e.round, e.phase, "" if e.rank is None else e.rank,
                     f"{cell(e.a)}  ×  {cell(e.b)}", e.outcome,
                     "; ".join(_reason(r) for r in e.reasons), _benchmark(e.benchmark))
            parts.append("<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in cells) + "</tr>")
        parts.append("</table>")
    return "".join(parts)


def _reason(r) -> str:
    return f"{r.text} ({r.check})" if r.check else r.text


def _benchmark(b) -> str:
    if b is None:
        return ""
    if b.spill:
        return f"vetoed: {b.spill} kernel spills registers"
    timed = [f"{name} {ms:.4g} ms" for name, ms in (("a", b.ms_a), ("b", b.ms_b),
                                                   ("fused", b.ms_fused)) if ms is not None]
    speed = f", speedup {b.speedup:.2f}×" if b.speedup is not None else ""
    return ", ".join(timed) + speed


class WhyNotDialog(QDialog):
    """Non-modal report on why two selected nodes did (not) end up in one kernel."""

    def __init__(self, graph, a: str, b: str, parent=None) -> None:
        super().__init__(parent)
        self.why = why_not_fused(graph, a, b)
        self.setWindowTitle(f"Why not fused? {a} × {b}")
        self.text = QTextBrowser()
        self.text.setHtml(why_not_html(self.why, Names(graph)))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.close)
        box = QVBoxLayout(self)
        box.addWidget(self.text)
        box.addWidget(buttons)
        self.resize(720, 420)
