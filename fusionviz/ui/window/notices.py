"""The window's Notices: the pane's lines (checked once per trace and graph shown), the
count in the status bar, the problem strips above the views, malformed parts met."""

from __future__ import annotations

from html import escape

from fusionviz.model.report.notices import notice_lines
from fusionviz.model.validate import (
    Problems,
    detail_problems,
    graph_problems,
    trace_problems,
)

GRAPHS_KEPT = 8  # graphs whose checks are kept (going back to one costs nothing)


class WindowNotices:
    """``MainWindow``'s part that shows its Notices (a mixin: it uses the window's
    state, notices, notice_label, strips, docks, completer and statusBar)."""

    def notice_lines(self, details: bool = False) -> list[str]:
        """Everything the user should know the trace lacks or hit, one line each. The
        rounds and node details are checked on the idle path (``details``: now), once
        the rest of the trace is read, before the graph's steps are prepared."""
        trace = self.state.trace
        if trace is None:
            return []
        if self._trace_checked[0] is not trace:
            self._trace_checked = (trace, trace_problems(trace))
            self._checks.clear()  # the last trace's graphs go
        graph = self.state.graph
        if graph is not None:
            if self._checked[0] is not graph:  # once per graph shown: kept per graph
                seen = self._checks.get(id(graph))
                self._checked = seen if seen is not None and seen[0] is graph else (
                    graph, graph_problems(graph), False)
            if not self._checked[2] and not self.completer.running and not self._opening \
                    and (details or not self.warmer.running):
                more = detail_problems(graph, quiet_if_unreadable=True)
                self._checked = (graph, Problems(self._checked[1], more), True)
            self._checks.pop(id(graph), None)
            self._checks[id(graph)] = self._checked
            while len(self._checks) > GRAPHS_KEPT:
                self._checks.pop(next(iter(self._checks)))
        return notice_lines(trace, graph, self._trace_checked[1],
                            self._checked[1] if graph is not None else None,
                            self._unreadable)

    def _show_notices(self, details: bool = False) -> None:
        lines = self.notice_lines(details)
        trace = self.state.trace
        html = "".join(f"<p>⚠ {escape(line)}</p>".replace("\n", "<br>")  # a line's own lines
                       for line in lines) or "<p>No notices.</p>"
        if trace is not None and trace.script.traceback:
            html += f"<pre>{escape(trace.script.traceback)}</pre>"
        self.notices.setHtml(html)
        views = {**(self._checked[1].views if self._checked[0] is self.state.graph
                    and self.state.graph is not None else {}),
                 **(self._trace_checked[1].views if self._trace_checked[0] is trace
                    and trace is not None else {})}
        for view, strip in self.strips.items():
            strip.set_problems(views.get(view, []))
        self.notice_label.setText(f"⚠ {len(lines)} notice{'s' if len(lines) != 1 else ''}"
                                  if lines else "")
        if lines:
            self.docks["notices"].show()

    def _check_ahead(self, graph) -> None:
        """Check ``graph`` (not shown) ahead of a switch to it, on the idle path."""
        seen = self._checks.get(id(graph))
        if seen is None or seen[0] is not graph:
            self._checks[id(graph)] = (graph, graph_problems(graph), False)

    def _check_details(self, graph) -> None:
        """The idle path's check of ``graph``'s rounds and node details (once a graph)."""
        if self.state.graph is graph and not self._checked[2]:
            self._show_notices(details=True)

    def _front_notices(self) -> None:
        self.docks["notices"].show()
        self.docks["notices"].raise_()

    def _on_unreadable(self, message: str) -> None:
        """The first bad part of a trace in a dialog; any further one in Notices and the
        status bar (a click that meets another bad part does not stop the user again)."""
        path = self.state.path
        where = message if path and message.startswith(path) else f"{path}: {message}"
        self._unreadable.append(where)
        if len(self._unreadable) == 1:
            self.show_error("Part of the trace is malformed; what could be read is shown."
                            f"\n\n{where}\n\nAny further malformed part is listed under "
                            "Notices.")
        else:
            self.errors.append(where)
            self.statusBar().showMessage(f"Another malformed part (see Notices): {where}",
                                         10000)
            self._show_notices()
