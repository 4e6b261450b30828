"""Every menu command is wired to a method that exists, and is reachable by its shortcut."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from PySide6.QtCore import SIGNAL
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMenu

from fusionviz.ui.menus import SEPARATOR, menu_entries


def _commands(window):
    return [entry for _menu, *entry in menu_entries(window) if entry != [SEPARATOR]]


def test_every_menu_action_resolves_to_a_bound_method_and_is_connected(window):
    bare = QAction("bare", window)
    QMenu(window).addAction(bare)
    menu_only = bare.receivers(SIGNAL("triggered(bool)"))  # the menu's own connection
    commands = _commands(window)
    assert {name for name, *_ in commands} == set(window.actions_by_name)
    for name, text, shortcut, slot in commands:
        bound = getattr(slot, "func", slot)  # functools.partial of a bound method
        assert callable(slot) and getattr(bound, "__self__", None) is not None, name
        action = window.actions_by_name[name]
        assert action.text() == text or name in ("force_pair", "forbid_pair"), name
        assert action.receivers(SIGNAL("triggered(bool)")) == menu_only + 1, name
        assert action in window.actions(), name  # its shortcut works wherever focus is
        assert action.shortcut().toString() == shortcut or not shortcut, name


def test_shortcuts_are_unique(window):
    shortcuts = [a.shortcut().toString() for a in window.actions() if not a.shortcut().isEmpty()]
    assert len(shortcuts) == len(set(shortcuts))


def test_a_slot_that_does_not_exist_fails_when_the_menus_are_built(window):
    parts = {k: getattr(window, k) for k in ("stepper", "graph_view", "experiments", "runner")}
    broken = SimpleNamespace(**parts)  # a window without its own commands
    with pytest.raises(AttributeError, match="open_trace_dialog"):
        menu_entries(broken)


def test_triggering_an_action_runs_its_command(window, synthetic_path, qtbot):
    window.open_trace(str(synthetic_path))
    window.actions_by_name["last"].trigger()
    assert window.state.step == len(window.state.steps) - 1
    window.actions_by_name["first"].trigger()
    assert window.state.step == 0
    window.actions_by_name["kernels_only"].trigger()
    assert window.kernels_only and window.actions_by_name["kernels_only"].isChecked()


def test_the_first_ten_panes_toggle_with_alt_and_a_digit(window):
    """Alt+1 … Alt+9, then Alt+0 (Alt+10 is no key: it used to leave the pane without
    one); every shortcut distinct, none clashing with a menu command's."""
    keys = [dock.toggleViewAction().shortcut().toString() for dock in window.docks.values()]
    assert keys[:10] == [f"Alt+{k % 10}" for k in range(1, 11)]
    commands = {a.shortcut().toString() for a in window.actions_by_name.values()} - {""}
    assert not set(keys[:10]) & commands
