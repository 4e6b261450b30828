"""A trace from a stranger is safe to open, the Qt side (#19): every name, path and
message from the trace reaches Qt as plain text.

A real committed trace gets markup in every kind of string it holds (node, kernel and
buffer names, module paths and classes, the environment, the script's path and
message, config, warnings, problems, entries, reasons, source lines): an ``<img>`` of
a local file, a ``file://`` link, ``<b>``, a literal ``&lt;`` and ``<script>``. It is
saved, opened in the real window offscreen and every view is filled (a kernel, a node
and a ledger row selected, every fusion step visited, the charts drawn and hovered,
the graph hovered, the eager pane, why-not, the "not on this machine" dialogs, the
recent files, the A/B dialog); an experiment folder's comparison gets the same (its
labels, traces and report.md). Then the whole widget tree is walked: labels, tooltips,
actions, item models (display, tooltip and header roles), graphics items, message
boxes, text documents. Text that Qt renders as rich text (``Qt::mightBeRichText`` decides for a
tooltip and an auto-format label) must hold no payload tag unescaped; text shown
plain must hold no escaped payload (the user would read ``&lt;``)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest
from PySide6 import QtGui
from PySide6.QtCore import QAbstractListModel, QEvent, QModelIndex, QPointF, Qt, QUrl
from PySide6.QtGui import QAction, QImage, QMouseEvent, QTextDocument
from PySide6.QtWidgets import (
    QAbstractItemView,
    QDialog,
    QGraphicsTextItem,
    QGraphicsView,
    QLabel,
    QMessageBox,
    QPlainTextEdit,
    QTabBar,
    QTextBrowser,
    QTextEdit,
    QWidget,
)

# isort: split
import pyqtgraph as pg

from fusionviz.model.experiment.runs import read_experiment
from fusionviz.model.trace import Kernel, Node, Problem, Trace
from fusionviz.model.tracefile.io import load_trace, save_trace
from fusionviz.ui import plain
from fusionviz.ui.graph import view as graph_view_module
from fusionviz.ui.run.ab_dialog import ABDialog

DATA = Path(__file__).resolve().parents[1] / "data"
IMAGE = "/tmp/fvpayload"  # a real image there, so a rendering that loads it would show
P_IMG = f'<img src="{IMAGE}">'
P_LINK = '<a href="file:///etc/passwd">x</a>'
P_BOLD = "<b>bold</b>"
P_LT = "&lt;i&gt;lt"  # a name that holds an entity: shown as these eleven characters
P_SCRIPT = "<script>alert(1)</script>"
PAYLOADS = (P_IMG, P_LINK, P_BOLD, P_LT, P_SCRIPT)  # no dots: module paths hold them too
FILE_TAG = "<img src=fvpayload> & co"  # a file name can hold no "/"

# In text Qt renders as rich text: a payload arrived as markup.
AS_MARKUP = ("<img", '<a href="file', "<b>bold", "<script", "&lt;i&gt;lt")
# In text Qt shows plain: a payload arrived escaped, the user reads entities.
AS_ENTITIES = ("&lt;img", "&lt;a href", "&lt;b&gt;bold", "&lt;script", "&amp;lt;i")
# Signs that a text carries trace text at all (raw or escaped).
CARRIED = ("fvpayload", "passwd", "alert(1)", "bold", "lt;i")

AUTO, RICH, PLAIN = Qt.TextFormat.AutoText, Qt.TextFormat.RichText, Qt.TextFormat.PlainText
_ROLES = (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
_ROWS = 300  # rows of one level of an item model walked
# Where the walk must meet the trace's text (each: words of one place's description):
# where #19 saw markup rendered, and the views around them.
PLACES = (("QLabel<QStatusBar", ".text"), ("KernelTable", "ToolTipRole"),
          ("LedgerModel ToolTipRole",), ("KernelView", ".toolTip"), ("QMessageBox",),
          ("GraphsList", "ToolTipRole"),
          ("DetailsPane", "document"), ("graph view tooltip",), ("QAction",),
          ("kernel time bar tooltip",), ("QLabel<ABDialog", ".text"))
MODULES = ("ModuleOutline", "ToolTipRole")  # where the trace has module paths


# ---- the hostile trace --------------------------------------------------------------------
class Hostile:
    """Rewrites a trace with a payload in every string a person can read; names keep
    pointing at what they named (every reference to a node, kernel or buffer is
    renamed alike, module paths component by component)."""

    APPEND = frozenset({"target", "code", "file", "reason", "function", "text", "check",
                        "note", "method", "eager_source", "diff_note", "message",
                        "traceback", "where", "debug", "cudagraphs_note", "op", "launcher",
                        "numel", "module_class", "error", "device", "missing"})
    RENAMED = (Node, Kernel)  # their names go through ``names``; other names get a payload

    def __init__(self, trace: Trace) -> None:
        self.names: dict[str, str] = {}
        for g in trace.graphs:
            for n in g.nodes:
                self.names.setdefault(n.name, self.payload(n.name) + n.name)
                for a in (*n.reads, *n.writes):
                    self.names.setdefault(a.buffer, a.buffer + self.payload(a.buffer))
            for k in g.kernels:
                self.names.setdefault(k.name, k.name + self.payload(k.name))
        self.components: dict[str, str] = {}

    def payload(self, text: str) -> str:
        return PAYLOADS[sum(map(ord, text)) % len(PAYLOADS)]

    def module(self, path: str) -> str:
        """``blocks.0.attn`` → ``blocks<b>bold</b>.0.attn<img …>``: numbers kept, so
        repeated blocks still fold."""
        return ".".join(c if not c or c.isdigit() else self.components.setdefault(
            c, c + self.payload(c)) for c in path.split("."))

    def __call__(self, value, field: str = "", owner: type | None = None):
        if isinstance(value, str):
            if value in self.names:
                return self.names[value]
            if field == "module":
                return self.module(value)
            if field in self.APPEND or (field == "name" and owner not in self.RENAMED):
                return value + self.payload(value) if value else value
            return value
        if isinstance(value, tuple):
            return tuple(self(v, field, owner) for v in value)
        if isinstance(value, list):
            return [self(v, field, owner) for v in value]
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            kind = type(value)
            return dataclasses.replace(value, **{
                f.name: self(getattr(value, f.name), f.name, kind)
                for f in dataclasses.fields(value) if f.init})
        return value


def hostile(trace: Trace) -> Trace:
    """``trace`` with payloads everywhere (``Hostile``), in its environment, config,
    script, warnings, problems and score fields too."""
    rewrite = Hostile(trace)
    graphs = tuple(dataclasses.replace(g, warnings=(*g.warnings, f"{P_BOLD} warning"),
                                       recompile_reasons=(*g.recompile_reasons, P_LT))
                   for g in trace.graphs)
    out = rewrite(dataclasses.replace(trace, graphs=graphs))
    env = dict(out.env)
    env.update(torch=f"{env.get('torch', '2.11.0')}{P_BOLD}",
               triton=f"{P_LT}{env.get('triton', '')}",
               device_name=f"{P_IMG} {env.get('device_name', 'H100')} {P_LINK}")
    score = {P_BOLD: 1}
    graphs = tuple(dataclasses.replace(g, rounds=tuple(
        dataclasses.replace(r, candidates=tuple(
            dataclasses.replace(c, score={**c.score, **score}) for c in r.candidates))
        for r in g.rounds), kernels=tuple(
        dataclasses.replace(k, launch={**k.launch, P_IMG: 1}) for k in g.kernels))
        for g in out.graphs)
    script = dataclasses.replace(out.script, path=f"/nowhere/{P_LINK}/train.py",
                                 message=f"{P_IMG} {out.script.message}",
                                 traceback=f"{out.script.traceback}\n{P_SCRIPT}")
    return dataclasses.replace(
        out, env=env, graphs=graphs, script=script,
        config={**out.config, P_BOLD: P_LINK},
        warnings=(*out.warnings, f"{P_SCRIPT} warning", P_LT),
        problems=(*out.problems, Problem(where=P_IMG, message=P_LINK, traceback=P_SCRIPT)))


def save_hostile(name: str, folder: Path) -> Path:
    path = folder / f"{FILE_TAG}.json.gz"
    save_trace(hostile(load_trace(DATA / name)), path)
    return path


@pytest.fixture(autouse=True)
def payload_image():
    """The image the ``<img>`` payloads name, for real: a view that loads it shows it."""
    image = QImage(16, 16, QImage.Format.Format_RGB32)
    image.fill(Qt.GlobalColor.red)
    image.save(IMAGE, "PNG")
    yield IMAGE


@pytest.fixture
def closes_dialogs(qapp):
    """The non-modal dialogs a test opens (message boxes, why-not) are closed after
    it: left up, they would take the mouse moves of later tests."""
    yield
    for w in qapp.topLevelWidgets():
        if isinstance(w, QDialog) and w.isVisible():
            w.close()


# ---- the walk ------------------------------------------------------------------------------
class Findings:
    """What the walk saw: texts shown wrongly (``bad``) and where trace text arrived."""

    def __init__(self) -> None:
        self.bad: list[str] = []
        self.reached: set[str] = set()

    def text(self, where: str, text, fmt=AUTO) -> None:
        if not isinstance(text, str) or not text:
            return
        low = text.lower()
        if any(c in low for c in CARRIED):
            self.reached.add(where)
        rich = fmt == RICH or (fmt == AUTO and QtGui.Qt.mightBeRichText(text))
        wrong = [m for m in (AS_MARKUP if rich else AS_ENTITIES) if m.lower() in low]
        if wrong:
            shown = "rendered as rich text" if rich else "shown plain but escaped"
            self.bad.append(f"{where}: {shown}, holds {wrong}: {text[:160]!r}")

    def document(self, where: str, edit: QTextEdit) -> None:
        """A rich-text document: no image in it, no link the browser itself follows,
        no image loaded from the disk."""
        html = edit.toHtml().lower()
        if any(c in html for c in CARRIED):
            self.reached.add(where)
        if "<img" in html or 'href="file:' in html:
            self.bad.append(f"{where}: the document holds an image or a file link")
        if isinstance(edit, QTextBrowser):
            if edit.openExternalLinks() or edit.openLinks():
                self.bad.append(f"{where}: the browser follows links by itself")
            kind = int(QTextDocument.ResourceType.ImageResource)
            if edit.loadResource(kind, QUrl.fromLocalFile(IMAGE)) is not None:
                self.bad.append(f"{where}: the browser loads images from the disk")


def where(widget: QWidget, what: str) -> str:
    chain, w = [], widget
    while w is not None and len(chain) < 3:
        chain.append(type(w).__name__ + (f"#{w.objectName()}" if w.objectName() else ""))
        w = w.parentWidget()
    return f"{'<'.join(chain)}.{what}"


def walk(root: QWidget, found: Findings) -> None:
    """Every text of ``root`` and the widgets, actions and scenes inside it."""
    for w in (root, *root.findChildren(QWidget)):
        found.text(where(w, "toolTip"), w.toolTip())
        if isinstance(w, QLabel):
            found.text(where(w, "text"), w.text(), w.textFormat())
            if w.openExternalLinks() and "<a " in w.text().lower():
                found.bad.append(f"{where(w, 'text')}: a clickable link: {w.text()[:160]!r}")
        if isinstance(w, QMessageBox):
            found.text(where(w, "text"), w.text(), w.textFormat())
            found.text(where(w, "informativeText"), w.informativeText(), w.textFormat())
        if isinstance(w, QTabBar):
            for i in range(w.count()):
                found.text(where(w, "tabToolTip"), w.tabToolTip(i))
                found.text(where(w, "tabText"), w.tabText(i), PLAIN)
        if isinstance(w, QTextEdit):
            found.document(where(w, "document"), w)
        if isinstance(w, QPlainTextEdit):
            found.text(where(w, "plainText"), w.toPlainText()[:100_000], PLAIN)
        if isinstance(w, QAbstractItemView) and w.model() is not None:
            walk_model(w.model(), found, where(w, type(w.model()).__name__))
        if isinstance(w, QGraphicsView) and w.scene() is not None:
            walk_scene(w, found)
    for action in root.findChildren(QAction):
        found.text(f"QAction {action.text()[:40]!r}.toolTip", action.toolTip())


def _columns(model, parent: QModelIndex) -> int:
    # a list model's columnCount is private to Python: it has one column
    return 1 if isinstance(model, QAbstractListModel) else model.columnCount(parent)


def walk_model(model, found: Findings, name: str) -> None:
    for orientation in (Qt.Orientation.Horizontal, Qt.Orientation.Vertical):
        count = _columns(model, QModelIndex()) if orientation == Qt.Orientation.Horizontal \
            else min(model.rowCount(QModelIndex()), _ROWS)
        for section in range(count):
            found.text(f"{name} header", model.headerData(
                section, orientation, Qt.ItemDataRole.DisplayRole), PLAIN)
            found.text(f"{name} header tooltip", model.headerData(
                section, orientation, Qt.ItemDataRole.ToolTipRole))
    parents, depth = [QModelIndex()], 0
    while parents and depth < 6:
        children = []
        for parent in parents:
            for row in range(min(model.rowCount(parent), _ROWS)):
                for col in range(_columns(model, parent)):
                    index = model.index(row, col, parent)
                    found.text(f"{name} DisplayRole", model.data(index, _ROLES[0]), PLAIN)
                    found.text(f"{name} ToolTipRole", model.data(index, _ROLES[1]))
                first = model.index(row, 0, parent)
                if model.rowCount(first) > 0:
                    children.append(first)
        parents, depth = children[:_ROWS], depth + 1


def walk_scene(view: QGraphicsView, found: Findings) -> None:
    for item in view.scene().items():
        found.text(where(view, f"{type(item).__name__}.toolTip"), item.toolTip())
        if isinstance(item, pg.LabelItem):  # a plot's title: HTML
            found.text(where(view, "LabelItem"), item.text, RICH)
        elif isinstance(item, pg.AxisItem):
            found.text(where(view, "AxisItem.label"), item.labelString(), RICH)
        elif isinstance(item, QGraphicsTextItem):
            found.text(where(view, "QGraphicsTextItem"), item.toPlainText(), PLAIN)


class _Hover:
    """What ``ClickableBars.hoverEvent`` reads of pyqtgraph's hover event."""

    def __init__(self, x: float, y: float) -> None:
        self._pos = QPointF(x, y)

    def isExit(self) -> bool:  # noqa: N802 (pyqtgraph's name)
        return False

    def pos(self) -> QPointF:
        return self._pos


def hover_bars(bars, found: Findings, name: str) -> None:
    """Hover each bar (at most 100) and read the tooltip it sets."""
    if bars is None:
        return
    o = bars.opts
    for i, y in enumerate(list(o["y"])[:100]):
        x0 = o["x0"][i] if hasattr(o["x0"], "__len__") else (o["x0"] or 0)
        x1 = o["x1"][i] if o.get("x1") is not None else x0 + o["width"][i]
        bars.hoverEvent(_Hover((x0 + x1) / 2, y))
        found.text(f"{name} bar tooltip", bars.toolTip())


def hover_graph(window, found: Findings, monkeypatch) -> None:
    """Move the mouse over every node and box of the graph view; read its tooltips."""
    shown: list[str] = []

    class Tips:
        @staticmethod
        def showText(_pos, text, *_args) -> None:  # noqa: N802 (QToolTip's name)
            shown.append(text)

        @staticmethod
        def hideText() -> None:  # noqa: N802 (QToolTip's name)
            pass

    view = window.graph_view
    paint = view.paint_data
    with monkeypatch.context() as patch:
        patch.setattr(graph_view_module, "QToolTip", Tips)
        for i in range(min(len(paint.names), 200)):
            scene = QPointF(float(paint.x[i]), float(paint.y[i]))
            view.centerOn(scene)
            pos = QPointF(view.mapFromScene(scene))
            view.mouseMoveEvent(QMouseEvent(
                QEvent.Type.MouseMove, pos, QPointF(view.viewport().mapToGlobal(pos)),
                Qt.MouseButton.NoButton, Qt.MouseButton.NoButton,
                Qt.KeyboardModifier.NoModifier))
    assert shown, "no tooltip was shown over the graph"
    for text in shown:
        found.text("graph view tooltip", text)


# ---- filling the views -----------------------------------------------------------------------
def visit_steps(window, found: Findings) -> None:
    """Every fusion step of the shown graph: the stepper's label and the ledger."""
    state = window.state
    for k in range(len(state.steps)):
        state.set_step(k)
        walk(window.stepper, found)
        walk(window.ledger, found)
    with_rows = [k for k, s in enumerate(state.steps) if s.round is not None
                 and s.round.candidates]
    if with_rows:
        state.set_step(with_rows[0])
        window.ledger.select_row(0)
        window.experiments.ledger_menu(window.ledger.shown_rows[0])


def to_front(window, dock: str) -> QWidget:
    """Bring a dock to the front (a pane draws what is seen); returns its pane."""
    window.docks[dock].show()
    window.docks[dock].raise_()
    widget = window.docks[dock].widget()
    return getattr(widget, "pane", widget)  # a pane with its problem strip: the pane


def fill_charts(window, found: Findings) -> None:
    pane = to_front(window, "charts")
    for i in range(pane.tabs.count()):
        pane.tabs.setCurrentIndex(i)
        pane.tabs.currentWidget().refresh()
        walk(pane, found)
    hover_bars(pane.kernel_chart.bars, found, "kernel time")
    hover_bars(pane.timeline_chart.bars, found, "timeline")
    scatter = pane.benchmark_chart.scatter
    for i in range(len(pane.benchmark_chart.points)):
        found.text("benchmark tooltip", scatter.opts["tip"](x=0, y=0, data=i))


def fill_eager(window, found: Findings) -> None:
    pane = to_front(window, "eager")
    for i in range(pane.entry_box.count()):
        pane.entry_box.setCurrentIndex(i)
        for side in range(pane.side_box.count()):
            pane.side_box.setCurrentIndex(side)
            walk(pane, found)
            root = pane.tree.topLevelItem(0)
            for j in range(min(root.childCount(), 5) if root is not None else 0):
                pane.tree.setCurrentItem(root.child(j))
                walk(pane, found)


def fill(window, qtbot, found: Findings, monkeypatch) -> None:
    """Every view of the window with the open trace's text in it."""
    state, trace = window.state, window.state.trace
    for g in range(min(len(trace.graphs), 3)):
        state.set_graph(g)
        visit_steps(window, found)
        graph = state.graph
        if graph.kernels:
            state.select_kernel(graph.kernels[0].name)
        window.docks["kernels"].raise_()  # the table lists a graph's kernels when shown
        walk(window.kernel_table, found)
        hover_graph(window, found, monkeypatch)
    state.set_graph(next(g.index for g in trace.graphs if g.kernels))
    names = [n.name for n in state.graph.nodes]
    state.select_nodes((names[0],))
    window.kernel_pane.set_side_by_side(True)
    state.select_nodes((names[0], names[-1]))
    assert window.why_not_fused() is not None
    window.experiments.graph_menu(names[0])
    fill_charts(window, found)
    fill_eager(window, found)
    # the "… is not on this machine" dialogs: a source line and the script
    assert not window.open_source(f"/nowhere/{P_IMG}/model.py", 3)
    assert not window.experiments.sweep_rounds()
    for action in window.menuBar().actions():  # the recent files, as on opening File
        if action.menu() is not None:
            action.menu().aboutToShow.emit()
    window.progress.started(f"/nowhere/{FILE_TAG}.py")
    ab = ABDialog(trace.config, window)  # its presets hold the trace's config
    ab.side_b.setPlainText(P_BOLD)  # not key=value: the error quotes it
    ab.run()
    assert P_BOLD in ab.error.text()
    qtbot.wait(10)


# ---- the tests -------------------------------------------------------------------------------
def test_a_tooltip_shows_its_text_literally_newlines_and_spaces_kept():
    for text in (*PAYLOADS, f"{P_BOLD}\n  two  spaces", "a & b"):
        shown = plain.tip(text)
        assert QtGui.Qt.mightBeRichText(shown)
        doc = QTextDocument()
        doc.setHtml(shown)
        assert doc.toPlainText() == text
        assert "<img" not in doc.toHtml()
    assert plain.tip("op3 — pointwise\nkernel: k0") == "op3 — pointwise\nkernel: k0"
    assert plain.tip("") == ""


@pytest.mark.parametrize(("name", "also"), [
    # benchmark fusion's decisions, a graph without kernels, a script that failed
    ("gpu_mlp_block_bench.json.gz", (("benchmark tooltip",), MODULES)),
    # 198 nodes folded into module boxes, the eager program's kernels, a timeline
    ("gpu_bert_fp16_infer.json.gz", (MODULES, ("timeline bar tooltip",),
                                     ("EagerPane", "ToolTipRole"), ("QLabel<EagerPane", ".text"))),
    # collectives, and Inductor's passes that reordered the nodes after fusion (steps)
    ("ranks/cpu_comm_overlap/rank0.json.gz", (("QLabel<FusionStepper", ".text"),)),
    # extern calls' ops, tensors and notes (the kernel facts)
    ("cpu_extern_ops.json.gz", ())])
def test_every_text_of_a_hostile_trace_reaches_qt_as_text(window, qtbot, tmp_path, monkeypatch,
                                                          closes_dialogs, name, also):
    path = save_hostile(name, tmp_path)
    assert window.open_trace(str(path))
    found = Findings()
    fill(window, qtbot, found, monkeypatch)
    walk(window, found)
    window.progress.stop()
    assert not found.bad, f"{len(found.bad)} texts from the trace shown as markup:\n" + \
        "\n".join(found.bad[:25])
    # the walk did meet the trace's text where the issue saw markup rendered
    for place in (*PLACES, *also):
        assert any(all(p in r for p in place) for r in found.reached), \
            f"{place} never showed trace text:\n" + "\n".join(sorted(found.reached))
    boxes = [b for b in window.findChildren(QMessageBox) if b.isVisible()]
    assert any("not on this machine" in b.text() and any(p in b.text() for p in PAYLOADS)
               for b in boxes)
    assert all(b.textFormat() == PLAIN for b in boxes)
    assert window.env_label.text().startswith("torch ") and P_IMG in window.env_label.text()


def test_a_hostile_experiment_folder_is_shown_as_text(qtbot, tmp_path):
    from fusionviz.ui.compare.window import CompareWindow

    source = DATA / "experiments" / "cpu_forbid_whatif_ops"
    folder = tmp_path / "exp"
    folder.mkdir()
    meta = json.loads((source / "experiment.json").read_text())
    for i, v in enumerate(meta["variants"]):
        save_trace(hostile(load_trace(source / v["trace"])), folder / v["trace"])
        v["label"] = f"{PAYLOADS[i]} {v['label']}"
    meta["script"] = f"{FILE_TAG}.py"
    (folder / "experiment.json").write_text(json.dumps(meta))
    shutil.copy(source / "report.md", folder / "report.md")
    with (folder / "report.md").open("a") as report:
        report.write(f"\n{P_IMG}\n\n[passwd](file:///etc/passwd) {P_BOLD}\n")
    window = CompareWindow(read_experiment(folder), str(folder))
    qtbot.addWidget(window)
    window.show()
    found = Findings()
    walk(window, found)
    window.swap()
    walk(window, found)
    assert not found.bad, "\n".join(found.bad[:25])
    assert P_IMG in window.report.toPlainText()  # raw HTML in report.md: shown as text
    for place in (("QLabel<ComparePane", ".text"), ("QTableWidget", "ToolTipRole"),
                  ("document",)):
        assert any(all(p in r for p in place) for r in found.reached), \
            f"{place} never showed trace text:\n" + "\n".join(sorted(found.reached))
