"""The window's Advisor commands: measure the best candidates, try a pair, open measured
advice, ask why two nodes were not fused."""

from __future__ import annotations

from PySide6.QtCore import Qt

from fusionviz.model.errors import TraceError
from fusionviz.ui import desktop
from fusionviz.ui.ledger.why_not import WhyNotDialog


class AdvisorCommands:
    """``MainWindow``'s part that drives the Advisor pane (a mixin: it uses the window's
    state, advisor, docks, experiments, settings and show_error)."""

    def _show_advisor(self) -> None:
        self.docks["advisor"].show()
        self.docks["advisor"].raise_()

    def advise_measure(self, every_graph: bool = False) -> None:
        """Measure the shown graph's best candidates in the Advisor pane (or every
        graph's, one after another)."""
        if self.state.graph is None:
            self.show_error("Open a trace first: the Advisor replays its graphs.")
            return
        self._show_advisor()
        if every_graph:
            self.advisor.measure_all()
        else:
            self.advisor.measure_best()

    def try_pair(self, pair: tuple[str, str] | None = None) -> None:
        """Replay the shown graph with ``pair`` (or the two selected nodes) fused, timed
        beside baseline replays, in the Advisor pane."""
        pair = pair or (tuple(self.state.selected_nodes)
                        if len(self.state.selected_nodes) == 2 else None)
        if self.state.graph is None or pair is None:
            self.show_error("Select two nodes first (click one, Ctrl+click the other), or "
                            "right-click a row of the fusion ledger.")
            return
        self._show_advisor()
        if not self.advisor.try_pair(*pair):
            self.show_error(self.advisor.status.text() or "The Advisor is measuring already: "
                            "wait for it or cancel it.")

    def open_advice_dialog(self) -> None:
        path = desktop.open_file(self, self.settings, "Open Measured Advice",
                                 "fusionviz advise --json (*.json);;All files (*)")
        if path:
            self.open_advice(path)

    def open_advice(self, path: str) -> bool:
        """Show a ``fusionviz advise --measure K --json`` document (``advice.json``)
        measured on the open trace, in the Advisor pane."""
        if self.state.trace is None:
            self.show_error("Open the trace the advice was measured on first.")
            return False
        try:
            shown = self.advisor.open_advice(path)
        except (TraceError, OSError, ValueError) as e:
            self.show_error(f"Cannot open the advice {path}: {e}")
            return False
        self._show_advisor()
        self.statusBar().showMessage(f"Measured advice for {shown} graph(s) opened from "
                                     f"{path}", 10000)
        return True

    def _compare_replays(self, folder: str, variant: int) -> None:
        view = self.experiments.open_experiment(folder)
        if view is not None:
            view.show_pair(0, variant)

    def why_not_fused(self) -> WhyNotDialog | None:
        sel = self.state.selected_nodes
        if self.state.graph is None or len(sel) != 2:
            self.show_error("Select two nodes first (click one, Ctrl+click the other).")
            return None
        try:
            dialog = WhyNotDialog(self.state.graph, sel[0], sel[1], self,
                                  on_try=lambda _checked=False, a=sel[0], b=sel[1]: self.try_pair((a, b)))
        except TraceError as e:  # a round's ledger is malformed
            self.state.report_unreadable(str(e))
            return None
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.show()
        return dialog
