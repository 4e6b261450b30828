"""Every key the window answers, read from the window when asked, so the list cannot
go stale: its actions (the menu commands, the pane toggles), the shortcuts and actions
its panes bind for themselves, and the keys panes read in their own key handlers
(``CODE_KEYS``, which tests/ui/test_help.py checks against those handlers)."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QObject, Qt
from PySide6.QtGui import QAction, QKeySequence, QShortcut
from PySide6.QtWidgets import QDialog, QMenu, QWidget

from fusionviz.ui.help.guides import GUIDES, pane_of

NATIVE = QKeySequence.SequenceFormat.NativeText
ARROW = " ▸ "


@dataclass(frozen=True)
class Shortcut:
    keys: str  # as the platform writes them ("Ctrl+O"); "" for a command without one
    command: str
    where: str  # the menu ("View ▸ Panes") or the pane(s)
    panes: tuple[str, ...] = ()  # GUIDES keys of the panes a local key works in


# Keys that panes read in keyPressEvent or an event filter rather than bind: the module
# whose handler reads them, the Qt keys it compares, the pane (a GUIDES key), what.
CODE_KEYS = (
    ("fusionviz.ui.graph.view", ("Key_Plus", "Key_Equal"), "graph", "Zoom in"),
    ("fusionviz.ui.graph.view", ("Key_Minus",), "graph", "Zoom out"),
    ("fusionviz.ui.graph.view", ("Key_F",), "graph", "Fit the graph"),
    ("fusionviz.ui.graph.outline", ("Key_Space",), "dock_modules",
     "Collapse or open the module"),
    ("fusionviz.ui.graph.outline", ("Key_Return", "Key_Enter"), "dock_modules",
     "Bring the module into view"),
    ("fusionviz.ui.main_window", ("Key_Return",), "find", "Find; again: the next match"),
    ("fusionviz.ui.main_window", ("Key_Escape",), "find", "Close the find bar"),
)

# What the shortcuts panes bind for themselves do, by the class (of fusionviz) that
# binds them and the key in portable text; one missing here still shows, as FALLBACK.
LOCAL_SHORTCUTS = {
    ("KernelPane", "Ctrl+F"): "Find in the kernel's source",
    ("KernelPane", "Ctrl+\\"): "Two kernels side by side (again: one)",
    ("FindBar", "Shift+Return"): "Previous match in the source",
    ("FindBar", "Esc"): "Close the source's find bar",
    ("AdvisorPane", "Ctrl+C"): "Copy the selected row's replay command",
}
FALLBACK = "(a key of this pane)"


def plain_text(text: str) -> str:
    """A menu text without its mnemonic marks: ``Open &Trace…`` → ``Open Trace…``."""
    return text.replace("&&", "\0").replace("&", "").replace("\0", "&")


def keys_text(action: QAction) -> str:
    return ", ".join(s.toString(NATIVE) for s in action.shortcuts())


def window_shortcuts(window) -> list[Shortcut]:
    """Every window action (in menu order, then the rest), then the panes' own keys."""
    paths = menu_paths(window)
    order = {a: k for k, a in enumerate(paths)}
    actions = sorted(window.actions(), key=lambda a: order.get(a, len(order)))
    rows = [Shortcut(keys_text(a), plain_text(a.text()), paths.get(a, "Window"))
            for a in actions]
    return rows + _local_shortcuts(window) + _local_actions(window, paths) + [
        Shortcut(", ".join(QKeySequence(getattr(Qt.Key, k)).toString(NATIVE) for k in keys),
                 what, GUIDES[pane].title, (pane,))
        for _module, keys, pane, what in CODE_KEYS]


def menu_paths(window) -> dict[QAction, str]:
    """Each action of the menu bar's menus and the menu it is in (``View ▸ Panes``)."""
    paths: dict[QAction, str] = {}

    def walk(menu: QMenu, path: str) -> None:
        for action in menu.actions():
            sub = action.menu()
            if sub is not None:
                walk(sub, path + ARROW + plain_text(sub.title()))
            elif not action.isSeparator():
                paths.setdefault(action, path)

    for action in window.menuBar().actions():
        if action.menu() is not None:
            walk(action.menu(), plain_text(action.menu().title()))
    return paths


def local_owner(obj: QObject) -> str:
    """The class name of the nearest fusionviz widget at or above ``obj``."""
    while obj is not None and not type(obj).__module__.startswith("fusionviz."):
        obj = obj.parent()
    return type(obj).__name__ if obj is not None else ""


def _pane(window, obj: QObject) -> str:
    return pane_of(window, obj if isinstance(obj, QWidget) else None)


def _in_dialog(obj: QObject) -> bool:
    """Inside a dialog of the window (this sheet, why-not, …): not the window's keys."""
    while obj is not None and not isinstance(obj, QDialog):
        obj = obj.parent()
    return obj is not None


def _local_shortcuts(window) -> list[Shortcut]:
    rows = []
    for shortcut in window.findChildren(QShortcut):
        if _in_dialog(shortcut):
            continue
        key = shortcut.key()
        what = LOCAL_SHORTCUTS.get((local_owner(shortcut.parent()), key.toString()), FALLBACK)
        pane = _pane(window, shortcut.parent())
        rows.append(Shortcut(key.toString(NATIVE), what, GUIDES[pane].title, (pane,)))
    return list(dict.fromkeys(rows))  # one line for a key bound alike in two places


def _local_actions(window, paths: dict) -> list[Shortcut]:
    """Actions with a key that panes add to themselves (Copy Selected Rows): one line
    per command and key, naming every pane that has it."""
    bound = set(window.actions()) | set(paths)
    panes: dict[tuple[str, str], set[str]] = {}
    for action in window.findChildren(QAction):
        if action not in bound and not action.shortcut().isEmpty() and not _in_dialog(action):
            pane = _pane(window, action.parent())
            panes.setdefault((keys_text(action), plain_text(action.text())), set()).add(pane)
    return [Shortcut(keys, command, ", ".join(sorted(GUIDES[p].title for p in where)),
                     tuple(sorted(where)))
            for (keys, command), where in panes.items()]
