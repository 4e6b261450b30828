"""A trace whose part lines are malformed opens, and every pane that meets a bad part
says so in place and reports it once, naming the file; nothing raises (#11)."""

from __future__ import annotations

import json

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile.io import save_trace

TRACE = synthetic_trace(120, seed=2, rounds=3)


def _damaged(tmp_path):
    path = tmp_path / "damaged.json"
    save_trace(TRACE, path)
    lines = path.read_bytes().splitlines()
    details = json.loads(lines[1])  # reads, writes, origins: a column each (format 3)
    reads = details[0]
    assert reads["n"][5]
    reads["v"]["bytes"][sum(reads["n"][:5])] = "many"  # op5's first read: wrong type
    lines[1] = json.dumps(details).encode()
    # round 1's candidates: not candidates (a column of values kept as they are)
    lines[3] = b'{"n": [1], "v": {"plain": [{"rank": "first"}]}}'
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_panes_say_what_cannot_be_read_and_the_window_reports_it_once(window, tmp_path, qtbot):
    path = _damaged(tmp_path)
    assert window.open_trace(str(path))
    window.completer.stop()  # the panes meet the bad parts first, not the idle reader
    window.state.set_step(1)  # round 1: its ledger is the damaged part
    assert "its ledger cannot be read" in window.ledger.title.text()
    assert window.ledger.shown_rows == []
    window.state.select_nodes(("op5",))
    assert "The details of this node cannot be read" in window.details_pane.text()
    window.graph_view.find("op5")  # searching reads every node's details
    window.state.select_nodes(("op5", "op6"))
    assert window.why_not_fused() is None  # the ledger it needs is damaged
    reported = [e for e in window.errors if "malformed" in e]
    assert reported and all(str(path) in e for e in reported)
    assert len(reported) == len(set(reported))  # each problem once
    window.state.select_nodes(("op7",))  # a healthy node of the same part line
    assert "cannot be read" not in window.details_pane.text()


def test_one_dialog_per_trace_and_further_bad_parts_in_notices(window, tmp_path, qtbot):
    path = _damaged(tmp_path)
    dialogs = []
    window.show_error = dialogs.append  # what would open a message box
    assert window.open_trace(str(path))
    qtbot.waitUntil(lambda: not window.completer.running, timeout=10000)
    assert len(dialogs) == 1 and "Round #1" in dialogs[0]  # the idle reader met it first
    window.state.set_step(1)  # the ledger meets the same bad round: no second dialog
    window.graph_view.click_node("op5")  # a bad node's details: another part
    assert len(dialogs) == 1
    assert "malformed, not shown" in window.notices.toPlainText()
    assert "Node 'op5'" in window.notices.toPlainText()
    assert window.open_trace(str(path))  # opened again: news again
    qtbot.waitUntil(lambda: len(dialogs) == 2, timeout=10000)
