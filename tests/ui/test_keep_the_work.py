"""Keeping the work: captures from the window land in the per-user data folder under
names from the script and the time and are listed under Recent Captures; Save Trace As
copies the open trace; a source line opens in the user's editor (a stub editor records
the arguments it was started with)."""

from __future__ import annotations

import gzip
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

from fusionviz.model.tracefile.io import load_trace
from fusionviz.ui import storage
from fusionviz.ui.run.controller import CAPTURE, EXPERIMENT

DATA = Path(__file__).resolve().parents[1] / "data"
TRACE = DATA / "cpu_mlp_block.json.gz"


def test_captures_are_named_from_the_script_and_time_in_the_data_folder():
    first = Path(CAPTURE.default_out("/somewhere/train_gpt.py"))
    assert first.parent == Path(os.environ["FUSIONVIZ_DATA_DIR"]) / "captures"
    assert re.fullmatch(r"train_gpt-\d{8}-\d{6}\.json\.gz", first.name)
    first.write_bytes(b"")  # the same second again: a new name, never an overwrite
    assert Path(CAPTURE.default_out("/somewhere/train_gpt.py")).name != first.name
    folder = Path(EXPERIMENT.default_out("/somewhere/train_gpt.py"))
    assert folder.is_dir() and folder.name.startswith("train_gpt-experiment-")


def test_recent_captures_lists_traces_and_experiments_newest_first(window):
    folder = storage.captures_folder()
    old, new = folder / "a-1.json.gz", folder / "b-2.json.gz"
    old.write_bytes(TRACE.read_bytes())
    new.write_bytes(TRACE.read_bytes())
    os.utime(old, (time.time() - 100, time.time() - 100))
    exp = folder / "c-experiment-3"
    exp.mkdir()
    (exp / "experiment.json").write_text("{}")
    (folder / "notes.txt").write_text("not a capture")
    assert [p.name for p in storage.recent_captures()] == [exp.name, new.name, old.name]
    file_menu = next(a.menu() for a in window.menuBar().actions() if a.text() == "&File")
    file_menu.aboutToShow.emit()
    menu = next(a.menu() for a in file_menu.actions() if a.text() == "Recent &Captures")
    assert menu.isEnabled()
    entry = next(a for a in menu.actions() if a.text() == new.name)
    entry.trigger()
    assert window.state.path == str(new)


def test_save_trace_as_copies_the_open_trace(window, tmp_path):
    assert window.open_trace(str(TRACE))
    assert window.save_trace_as(str(tmp_path / "kept.json.gz"))
    assert (tmp_path / "kept.json.gz").read_bytes() == TRACE.read_bytes()
    assert window.save_trace_as(str(tmp_path / "kept.json"))  # plain JSON Lines
    plain = (tmp_path / "kept.json").read_bytes()
    assert plain == gzip.decompress(TRACE.read_bytes())
    assert json.loads(plain.splitlines()[0])["format"]
    assert load_trace(tmp_path / "kept.json").graphs == load_trace(TRACE).graphs
    assert "saved as" in window.statusBar().currentMessage()
    assert not window.save_trace_as(str(tmp_path / "no" / "such" / "dir.json.gz"))
    assert "Cannot save the trace" in window.errors[-1]
    assert not list(tmp_path.glob(".kept*"))  # no half-written file left


@pytest.fixture
def stub_editor(tmp_path):
    """An 'editor' that writes the arguments it got to a file, whole or not at all
    (written beside it, then renamed: the test waits for the file to exist, and an
    open file not yet written read as empty JSON on a loaded machine)."""
    log = tmp_path / "editor-args.json"
    stub = tmp_path / "stub_editor.py"
    stub.write_text(f"import json, os, sys\nopen({str(log) + '.part'!r}, 'w').write("
                    f"json.dumps(sys.argv[1:]))\nos.replace({str(log) + '.part'!r}, "
                    f"{str(log)!r})\n")
    return log, f"{sys.executable} {stub}"


def _source_link(window) -> tuple[str, int]:
    graph = window.state.graph
    node = next(n for n in graph.nodes if any(o.file for o in n.origins))
    window.state.select_nodes((node.name,))
    html = window.details_pane.browser.toHtml()
    href = re.search(r'href="(source:[^"]+)"', html).group(1)
    origin = next(o for o in node.origins if o.file)
    return href, origin


def test_a_source_line_opens_in_the_configured_editor(window, stub_editor, qtbot, tmp_path):
    log, command = stub_editor
    script = tmp_path / "model.py"
    script.write_text("x = 1\n" * 40)
    from fusionviz.ui import editor

    editor.set_editor_command(f"{command} --goto {{file}}:{{line}}", window.settings)
    assert window.open_trace(str(TRACE))
    href, origin = _source_link(window)
    from PySide6.QtCore import QUrl

    # The link in Details: the recorded file, found relative to the script or here
    # (here: a checkout elsewhere than the capture's, as in CI, asks first).
    asked = []
    window.confirm_outside = lambda path: asked.append(path) or True
    found = editor.resolve(origin.file, window.state.trace.script.path)
    window.details_pane.browser.anchorClicked.emit(QUrl(href))
    if found is None:
        assert "not on this machine" in window.errors[-1]
    else:
        qtbot.waitUntil(log.exists, timeout=10000)
        assert json.loads(log.read_text()) == ["--goto", f"{found}:{origin.line}"]
        log.unlink()
    asked.clear()  # the script below lies outside the trace's script folder
    assert window.open_source(str(script), 7)
    assert asked == [str(script.resolve())]
    qtbot.waitUntil(log.exists, timeout=10000)
    assert json.loads(log.read_text()) == ["--goto", f"{script}:7"]
    log.unlink()
    editor.set_editor_command(command, window.settings)  # no {file}: the file is appended
    assert window.open_source(str(script), 3)
    qtbot.waitUntil(log.exists, timeout=10000)
    assert json.loads(log.read_text()) == [str(script)]
    assert not window.open_source(str(tmp_path / "gone.py"), 1)
    assert "not on this machine" in window.errors[-1]
    assert origin.line > 0 and href.startswith(f"source:{origin.line}%3A")


def test_a_source_link_from_a_trace_opens_only_source_files_where_allowed(
        window, stub_editor, tmp_path, qtbot):
    """The file name comes from the trace: a URL, a folder, a device, a launcher, a
    binary are never opened; a file outside the script's folder only if the user says
    so in a dialog naming its real path (a symbolic link is followed to it)."""
    from fusionviz.ui import editor

    log, command = stub_editor
    editor.set_editor_command(command, window.settings)
    project = tmp_path / "project"
    project.mkdir()
    script = project / "train.py"
    script.write_text("x = 1\n")
    (project / "evil.desktop").write_text("[Desktop Entry]\nExec=rm -rf ~\n")
    (project / "blob.py").write_bytes(b"\x7fELF\0\0\0")
    outside = tmp_path / "elsewhere.py"
    outside.write_text("y = 2\n")
    (project / "link.py").symlink_to(outside)
    for file in ("file:///etc/passwd", "https://example.com/x.py", str(project),
                 "/dev/zero", str(project / "evil.desktop"), str(project / "blob.py")):
        assert editor.refusal(file, editor.resolve(file, str(script))), file
        assert editor.open_source(file, 1, str(script), window.settings,
                                  confirm=lambda p: True), file
    assert not log.exists()
    asked: list[str] = []
    for file in (str(outside), str(project / "link.py")):
        problem = editor.open_source(file, 1, str(script), window.settings,
                                     confirm=lambda p: asked.append(p) or False)
        assert problem.startswith("Not opened: ") and str(outside) in problem
    assert asked == [str(outside), str(outside)] and not log.exists()
    assert editor.open_source("train.py", 1, str(script), window.settings,
                              confirm=lambda p: asked.append(p) or False) == ""
    qtbot.waitUntil(log.exists, timeout=10000)
    assert json.loads(log.read_text()) == [str(script)] and len(asked) == 2
