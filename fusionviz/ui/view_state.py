"""What the user is looking at: trace, graph, fusion step, selection. One signal per field.

Panels never call each other: they write here and react to these signals.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QObject, Signal

from fusionviz.model.fusion_steps import Step, fusion_steps
from fusionviz.model.trace import Graph, Group, Trace


class ViewState(QObject):
    """Observable view state shared by every panel of the main window."""

    sig_trace_changed = Signal()
    """A new trace was loaded (graph, step and selection were reset)."""
    sig_graph_changed = Signal(int)
    """The shown graph changed; argument: its index in ``trace.graphs``."""
    sig_step_changed = Signal(int)
    """The fusion step changed: 0 = before fusion, k = after round k, last = final."""
    sig_selection_changed = Signal()
    """The selected node names changed (``selected_nodes``)."""
    sig_kernel_changed = Signal(str)
    """The selected kernel changed; argument: its name ("" for none)."""
    sig_pair_changed = Signal()
    """The highlighted candidate pair changed (``pair``: two groups, or None)."""
    sig_unreadable = Signal(str)
    """A pane met a malformed part of the trace (a TraceError's message), once each."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.trace: Trace | None = None
        self.path: str = ""
        self.graph_index: int = -1
        self.step: int = 0
        self.selected_nodes: tuple[str, ...] = ()
        self.kernel: str = ""
        self.pair: tuple[Group, Group] | None = None
        self._unreadable: set[str] = set()

    def forget_unreadable(self) -> None:
        """A trace was opened (again): its bad parts are news once more."""
        self._unreadable.clear()

    def report_unreadable(self, message: str) -> None:
        """A part of the trace could not be read where a pane needed it: say so once."""
        if message not in self._unreadable:
            self._unreadable.add(message)
            self.sig_unreadable.emit(message)

    @property
    def graph(self) -> Graph | None:
        if self.trace is None or not (0 <= self.graph_index < len(self.trace.graphs)):
            return None
        return self.trace.graphs[self.graph_index]

    @property
    def steps(self) -> Sequence[Step]:
        """The fusion steps of the shown graph (the same object for every pane: each
        step is computed once, when first used); empty when no graph is shown."""
        graph = self.graph
        return () if graph is None else fusion_steps(graph)

    @property
    def current_step(self) -> Step | None:
        """The step shown (``step`` clamped to the graph's steps), or None."""
        steps = self.steps
        if not steps:
            return None
        return steps[max(0, min(self.step, len(steps) - 1))]

    def set_trace(self, trace: Trace | None, path: str = "", graph: int = 0) -> None:
        """Show ``trace`` on its graph ``graph`` (the first when it has no such graph):
        the panes build that graph only."""
        self.trace, self.path = trace, path
        count = len(trace.graphs) if trace is not None else 0
        self.graph_index = (graph if 0 <= graph < count else 0) if count else -1
        self.step, self.selected_nodes, self.kernel, self.pair = 0, (), "", None
        self.sig_trace_changed.emit()
        self.sig_graph_changed.emit(self.graph_index)

    def set_graph(self, index: int) -> None:
        if index == self.graph_index:
            return
        self.graph_index = index
        self.step, self.selected_nodes, self.kernel, self.pair = 0, (), "", None
        self.sig_graph_changed.emit(index)

    def set_step(self, step: int) -> None:
        if step != self.step:
            self.step = step
            self.sig_step_changed.emit(step)

    def select_nodes(self, names: tuple[str, ...]) -> None:
        names = tuple(names)
        if names != self.selected_nodes:
            self.selected_nodes = names
            self.sig_selection_changed.emit()

    def select_kernel(self, name: str) -> None:
        if name != self.kernel:
            self.kernel = name
            self.sig_kernel_changed.emit(name)

    def highlight_pair(self, pair: tuple[Group, Group] | None) -> None:
        if pair != self.pair:
            self.pair = pair
            self.sig_pair_changed.emit()
