"""File dialogs start where the user was (#22, item 6): in the folder fusionviz was
started from, then in the folder last used in any dialog, never in fusionviz's own."""

from __future__ import annotations

import shutil
from pathlib import Path

from PySide6.QtWidgets import QFileDialog

DATA = Path(__file__).resolve().parents[1] / "data"


def test_dialogs_start_in_the_users_folder_then_the_last_one_used(window, tmp_path,
                                                                  monkeypatch):
    mine = tmp_path / "my traces"
    mine.mkdir()
    trace = mine / "step.json.gz"
    shutil.copy(DATA / "cpu_replay_block.json.gz", trace)
    asked = []

    def open_file(_parent, _title, folder, _filters):
        asked.append(folder)
        return str(trace), ""

    def save_file(_parent, _title, suggested, _filters):
        asked.append(suggested)
        return "", ""

    monkeypatch.setattr(QFileDialog, "getOpenFileName", open_file)
    monkeypatch.setattr(QFileDialog, "getSaveFileName", save_file)
    monkeypatch.chdir(tmp_path)  # where the user started fusionviz
    window.open_trace_dialog()
    assert asked == [str(tmp_path)]
    assert window.state.path == str(trace)
    window.export_ledger_dialog()  # cancelled: nothing written
    assert asked[-1] == str(mine / "ledger.csv")
    window.open_advice_dialog()  # "opens" the trace as advice: refused, said
    assert asked[-1] == str(mine)
    assert window.errors and "advice" in window.errors[-1].lower()
