"""The details pane: everything the trace knows about the selected scheduler node(s).

Shown as rich text: type and category, sizes, ops, reads and writes, FX origins with
the user's source line, producers/consumers, and the kernel the node ends up in.
Kernel and node names are links that write the choice back to the view state.
The per-node indexes of a graph are built when a node is first shown, not on load.
"""

from __future__ import annotations

from html import escape
from urllib.parse import quote, unquote

from PySide6.QtCore import Qt, QUrl, Signal
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QVBoxLayout, QWidget

from fusionviz.model.comms.collective_times import CollectiveTime, collective_times
from fusionviz.model.errors import TraceError
from fusionviz.model.names import Names
from fusionviz.model.palette import kernel_colors
from fusionviz.model.queries import kernel_of_node, node_index
from fusionviz.model.report.formatting import (
    byte_size,
    clip,
    collective_text,
    collective_time_text,
    digits,
)
from fusionviz.model.trace import Access, Graph, Node, Origin
from fusionviz.ui.plain import SafeBrowser
from fusionviz.ui.view_state import ViewState

MAX_NODES = 25  # more selected nodes than this are listed by name only
_GRAY = "style='color:gray'"


MAX_TEXT = 2_000  # characters of one name, op list or line shown (a hostile trace: 100 MB)
_LONG = "~"  # a link to a name over MAX_TEXT: ~length:first characters
MAX_DEBUG = 20_000  # characters of Inductor's debug string shown


def _esc(text: object) -> str:
    """``text`` escaped for the pane, cut past MAX_TEXT characters (and saying so):
    laying out a name of megabytes holds the window for minutes."""
    return escape(clip(str(text), MAX_TEXT, "right-click: Copy Selected Node Names"))


def _link(kind: str, name: str, text: str | None = None) -> str:
    long = len(name) > MAX_TEXT and kind in ("node", "kernel")  # a source path stays whole
    target = f"{_LONG}{len(name)}:{name[:64]}" if long else name
    return f"<a href='{kind}:{quote(target, safe='')}'>{_esc(text or name)}</a>"


def _resolve(target: str, names) -> str:
    """The full name a link stands for (``~length:prefix`` for a long one)."""
    if not target.startswith(_LONG):
        return target
    length, _, prefix = target[1:].partition(":")
    return next((n for n in names if len(n) == int(length or -1) and n.startswith(prefix)),
                target)


def _row(label: str, value_html: str) -> str:
    return f"<tr><td {_GRAY}>{_esc(label)}</td><td>{value_html}</td></tr>"


def _accesses_html(title: str, accesses: tuple[Access, ...]) -> str:
    if not accesses:
        return ""
    rows = "".join(
        f"<tr><td><code>{_esc(a.buffer)}</code></td><td align='right'>"
        f"{byte_size(a.bytes)}</td><td {_GRAY}>{_esc(a.dep)}</td></tr>"
        for a in accesses
    )
    return f"<p><b>{title}</b> ({len(accesses)})</p><table cellspacing='4'>{rows}</table>"


def _origin_html(origin: Origin) -> str:
    if origin.file:  # a link: opens the line in the user's editor
        where = _link("source", f"{origin.line}:{origin.file}", f"{origin.file}:{origin.line}")
    else:
        where = f"<span {_GRAY}>(no source location)</span>"
    code = f"<pre>{_esc(origin.code.strip())}</pre>" if origin.code.strip() else ""
    return (f"<li><code>{_esc(origin.name)}</code> <span {_GRAY}>←</span> "
            f"<code>{_esc(origin.target)}</code><br>{where}{code}</li>")


def _module_html(node: Node) -> str:
    """Where in the model the node comes from (``h.3.attn (CausalSelfAttention)``)."""
    if not node.module and not node.module_class:
        return f"<span {_GRAY}>not recorded</span>"
    path = _esc(node.module) if node.module else "(the compiled module itself)"
    return f"<code>{path}</code>" + (f" ({_esc(node.module_class)})"
                                     if node.module_class else "")


class DetailsPane(QWidget):
    """Rich-text details of ``state.selected_nodes`` in the current graph."""

    sig_open_source = Signal(str, int)
    """The user clicked a source location: (file as recorded, line)."""

    def __init__(self, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._state = state
        self._indexed: Graph | None = None  # the graph the indexes below describe
        self._nodes: dict[str, Node] = {}
        self._names = Names(None)
        self._node_kernel = {}
        self._colors: dict[str, str] = {}
        self._producers: dict[str, list[str]] = {}
        self._consumers: dict[str, list[str]] = {}
        self._comm_times: dict[str, CollectiveTime] = {}  # collective or wait → its time
        self.browser = SafeBrowser(self)  # its links are handled in _on_anchor_clicked
        self.browser.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.browser.customContextMenuRequested.connect(self._context_menu)
        self.browser.anchorClicked.connect(self._on_anchor_clicked)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.browser)
        state.sig_graph_changed.connect(self._on_graph_changed)
        state.sig_selection_changed.connect(self._on_selection_changed)
        self._on_graph_changed()

    def _context_menu(self, pos) -> None:
        menu = self.browser.createStandardContextMenu(pos)
        menu.addSeparator()
        copy = menu.addAction("Copy Selected Node Names (whole)", self.copy_names)
        copy.setEnabled(bool(self._state.selected_nodes))
        menu.exec(self.browser.viewport().mapToGlobal(pos))
        menu.deleteLater()

    def copy_names(self) -> None:
        QGuiApplication.clipboard().setText("\n".join(self._state.selected_nodes))

    def text(self) -> str:
        """The pane's content as plain text (what the user reads)."""
        return self.browser.toPlainText()

    def _on_graph_changed(self, _index: int = -1) -> None:
        if self._indexed is not self._state.graph:  # let the old trace go
            self._indexed, self._nodes, self._node_kernel = None, {}, {}
            self._producers, self._consumers, self._comm_times = {}, {}, {}
        self._on_selection_changed()

    def _index(self, graph: Graph) -> None:
        """Node, kernel, color and edge lookups of ``graph``, built once per graph shown."""
        if self._indexed is graph:
            return
        self._nodes = node_index(graph)
        self._names = Names(graph)
        self._node_kernel = kernel_of_node(graph)
        self._colors = kernel_colors(graph.kernels)
        self._comm_times = {name: t for t in collective_times(graph)
                            for name in (t.node, *t.waits)}
        self._producers, self._consumers = {}, {}
        for edge in graph.edges:
            self._producers.setdefault(edge.dst, []).append(edge.src)
            self._consumers.setdefault(edge.src, []).append(edge.dst)
        self._indexed = graph

    def _on_selection_changed(self) -> None:
        names, graph = self._state.selected_nodes, self._state.graph
        if graph is None:
            body = "<p>No trace loaded.</p>"
        elif not names:
            body = "<p>Select a node in the graph to see its details.</p>"
        else:
            self._index(graph)
            body = "<hr>".join(self._safe_node_html(n) for n in names[:MAX_NODES])
            if len(names) > MAX_NODES:
                rest = ", ".join(_link("node", n) for n in names[MAX_NODES:])
                body += f"<hr><p>… and {len(names) - MAX_NODES} more: {rest}</p>"
        self.browser.setHtml(body)

    def _safe_node_html(self, name: str) -> str:
        try:
            return self._node_html(name)
        except TraceError as e:  # its part of the file is malformed
            self._state.report_unreadable(str(e))
            return (f"<h3>{_esc(name)}</h3><p>The details of this node cannot be read: "
                    f"{_esc(str(e))}</p>")

    def _node_html(self, name: str) -> str:
        node = self._nodes.get(name)
        if node is None:
            return f"<p>No node named <code>{_esc(name)}</code> in this graph.</p>"
        about = self._names.about(name)
        head = (f"<h3>{_esc(node.name)} <span {_GRAY}>{_esc(node.type)} · "
                f"{_esc(node.category)}</span></h3>"
                + (f"<p>{_esc(about)}</p>" if about else ""))
        parts = [head, self._facts_table(node),
                 _accesses_html("Reads", node.reads), _accesses_html("Writes", node.writes)]
        if node.origins:
            items = "".join(_origin_html(o) for o in node.origins)
            parts.append(f"<p><b>FX origins</b> ({len(node.origins)})</p><ul>{items}</ul>")
        if node.debug and len(self._state.selected_nodes) == 1:
            parts.append(f"<p><b>Inductor debug</b></p><pre>{escape(node.debug[:MAX_DEBUG])}</pre>")
        return "".join(parts)

    def _facts_table(self, node: Node) -> str:
        rows = [_row("kernel", self._kernel_html(node.name)),
                _row("module", _module_html(node))]
        if node.extern_kernel:
            rows.append(_row("extern kernel", f"<code>{_esc(node.extern_kernel)}</code>"))
        if node.collective is not None:
            rows += [_row("collective", _esc(collective_text(node.collective))),
                     *self._comm_time_rows(node.name)]
        for label, value in (("numel", digits(node.numel)), ("rnumel", digits(node.rnumel)),
                             ("ops", ", ".join(node.ops))):
            if value:
                rows.append(_row(label, _esc(value)))
        rows.append(_row("est. bytes", byte_size(node.bytes)))
        for label, names in (("members", node.members),
                             ("producers", self._producers.get(node.name, ())),
                             ("consumers", self._consumers.get(node.name, ()))):
            if names:
                rows.append(_row(label, ", ".join(_link("node", n) for n in dict.fromkeys(names))))
        return f"<table cellspacing='3'>{''.join(rows)}</table>"

    def _comm_time_rows(self, name: str) -> list[str]:
        """What the collective (of a wait: the one it waits for) took on this rank."""
        t = self._comm_times.get(name)
        if t is None:
            return []
        rows = [] if t.node == name else [
            _row("waits for", f"{_link('node', t.node)} ({_esc(t.collective.kind)})")]
        return [*rows, _row("time", _esc(collective_time_text(t)))]

    def _kernel_html(self, node_name: str) -> str:
        kernel = self._node_kernel.get(node_name)
        if kernel is None:
            return "<i>none (emits no kernel)</i>"
        color = self._colors.get(kernel.name, "#888888")
        return f"<span style='color:{color}'>■</span> {_link('kernel', kernel.name)}"

    def _on_anchor_clicked(self, url: QUrl) -> None:
        kind, _, name = url.toString().partition(":")
        kernels = (k.name for k in self._state.graph.kernels) if self._state.graph else ()
        name = unquote(name)
        if kind in ("node", "kernel"):
            name = _resolve(name, self._nodes if kind == "node" else kernels)
        if kind == "kernel":
            self._state.select_kernel(name)
        elif kind == "node":
            self._state.select_nodes((name,))
        elif kind == "source":
            line, _, file = name.partition(":")
            self.sig_open_source.emit(file, int(line) if line.isdecimal() else 0)
