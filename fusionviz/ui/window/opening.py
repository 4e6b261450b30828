"""Opening a trace in the window: read it lazily, read the rest and prepare the fusion
steps in idle time, and show it with kernels only (Ctrl+K)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from fusionviz.model import lazy
from fusionviz.model.errors import TraceError
from fusionviz.model.fusion_steps import fusion_steps
from fusionviz.model.gc_pause import gc_paused
from fusionviz.model.kernel_graph import kernel_graph
from fusionviz.model.report.eager_map import graph_map
from fusionviz.model.report.extern_facts import extern_facts
from fusionviz.model.tracefile.io import load_trace

_COMPLETING = "Reading the rest of the trace (node details, ledgers)…"
GRAPHS_AHEAD = 3  # graphs beside the shown one prepared in idle time for a switch


class TraceOpening:
    """``MainWindow``'s part that opens traces (a mixin: it uses the window's state,
    views, completer, warmer, runner, output, graph_view, ledger, experiments and
    actions_by_name)."""

    def open_path(self, path: str, capture_options: dict | None = None,
                  graph: int = 0) -> bool:
        """A ``.py`` file is captured, an experiment folder compared, anything else is
        opened as a trace (on its graph ``graph``)."""
        if path.endswith(".py"):
            return self.run_script(path, **(capture_options or {}))
        if os.path.isdir(path):
            return self.experiments.open_experiment(path) is not None
        return self.open_trace(path, graph)

    def open_trace(self, path: str, graph: int = 0) -> bool:
        """Open the trace at ``path`` on its graph ``graph`` (a deep model's backward
        graph opens without the forward one built first); a graph it lacks is said,
        and the first graph shown."""
        self.views.setCurrentIndex(0)  # the explorer's tab, also from a comparison
        self.completer.stop()
        self.warmer.stop()
        self.set_kernels_only(False)
        self._unreadable = []
        self.state.forget_unreadable()
        self._opening = True  # the steps are prepared after the rest is read
        try:
            # No GC while a trace is built and laid out, then frozen (see gc_pause).
            # The bulk (node details, ledgers) is built on first read and by the
            # completer in idle time: a 20k-node trace is on screen in half the time.
            with gc_paused(freeze=True):
                trace = load_trace(path, lazy=True)
                self.state.set_trace(trace, path, graph)
        except TraceError as e:
            self.show_error(f"Cannot open the trace: {e}")
            return False
        finally:
            self._opening = False
        self.add_recent(path)
        self._output_of(path)
        if graph and self.state.graph_index != graph:  # (a box: progress takes the bar)
            has = f"graphs 0 to {len(trace.graphs) - 1}" if trace.graphs else "no graphs"
            self.show_error(f"{Path(path).name} has no graph {graph} ({has})"
                            + (f": showing graph {self.state.graph_index}." if trace.graphs
                               else "."))
        self.completer.start(lazy.complete(trace))
        return True

    def _output_of(self, path: str) -> None:
        """The Script output pane keeps the output of the run that wrote ``path`` (or of
        a run still going); another trace's script output is not known: it says so."""
        ran = self.runner.out_path
        if self.runner.running or (ran and Path(ran).resolve() in (
                Path(path).resolve(), *Path(path).resolve().parents)):
            return
        self.output.setPlainText(
            f"No script output for {Path(path).name}: a trace does not keep its script's "
            "output. It shows here while fusionviz runs a script (File > Open and Capture "
            "Script).")

    @property
    def kernels_only(self) -> bool:
        return self._full_trace is not None

    def toggle_kernels_only(self) -> None:
        self.set_kernels_only(not self.kernels_only)

    def set_kernels_only(self, on: bool) -> None:
        """Show every graph collapsed to its final kernels (or the pre-fusion nodes)."""
        if on != self.kernels_only and self.state.trace is not None:
            index, path = self.state.graph_index, self.state.path
            if on:  # the step and the folds of the full graph, for the way back
                self._full_view = (index, self.state.step, self.state.selected_nodes,
                                   self.graph_view.folding.snapshot())
                self._full_trace = self.state.trace
                shown = replace(self._full_trace, graphs=tuple(
                    kernel_graph(g) for g in self._full_trace.graphs))
            else:
                shown, self._full_trace = self._full_trace, None
            self.state.set_trace(shown, path)
            self.state.set_graph(index)
            if not on and self._full_view[0] == index:
                _index, step, selected, folds = self._full_view
                self.graph_view.restore_folding(folds)
                self.state.set_step(step)
                self.state.select_nodes(selected)
        self.actions_by_name["kernels_only"].setChecked(self.kernels_only)

    def _on_completer_progress(self, done: int, total: int) -> None:
        self.statusBar().showMessage(f"{_COMPLETING} {100 * done // max(total, 1)}%")

    def _on_completer_done(self) -> None:
        if self.statusBar().currentMessage().startswith(_COMPLETING):
            self.statusBar().clearMessage()
        self._show_notices()  # the rounds, all read now, are checked too
        self._prepare_steps()

    def _prepare_steps(self) -> None:
        graph = self.state.graph
        if graph is not None and not self.completer.running and not self._opening:
            self.warmer.start(self._steps_to_prepare(graph), delay_ms=0)

    def _steps_to_prepare(self, graph):
        self._check_details(graph)  # a graph shown again was checked: nothing to do
        yield None
        steps = fusion_steps(graph)
        for k in range(len(steps)):
            if self.state.graph is not graph:
                return
            steps[k]
            yield None
            self.graph_view.prepare_step(k)
            yield None
            self.ledger.prepare_step(k)
            yield None
        if self.state.graph is graph:
            self.graph_view.prepare_expanded()  # Expand All's layout
        graphs = list(self.state.trace.graphs) if self.state.trace is not None else []
        here = next((i for i, g in enumerate(graphs) if g is graph), 0)
        near = sorted(range(len(graphs)), key=lambda i: abs(i - here))[1:GRAPHS_AHEAD + 1]
        for other in (graphs[i] for i in near):
            yield None
            if self.state.graph is not graph:
                return
            try:  # the nearest graphs' tints, checks, modules and extern kernels' facts
                graph_map(self.state.trace, other)  # (the kernel table's): a switch gets them
                extern_facts(other, self.state.trace.env)
                self._check_ahead(other)
                self.graph_view.folding.prepare(other)
            except TraceError:
                pass  # a malformed part: said when that graph shows
