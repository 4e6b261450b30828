"""A trace's text reaches the terminal shown, never obeyed: every command's output on a
trace (and an experiment folder) whose names, paths, messages and labels hold terminal
escape sequences, C1 controls and bidirectional overrides."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from fusionviz.cli.main import main
from fusionviz.cli.terminal import visible
from fusionviz.model.tracefile.io import load_trace, save_trace

DATA = Path(__file__).parent / "data"
# retitle, clear the screen, OSC 52 clipboard write, bell, CSI as one C1 byte, RLO
PAYLOAD = ("\x1b]0;pwned\x07\x1b[2J\x1b]52;c;ZWNobyBwd25lZA==\x07\r\x9b31m"
           "\u202eevil")
RAW = ("\x1b", "\x07", "\x9b", "\u202e", "\r")


def _hostile(trace):
    g = trace.graphs[0]
    k0 = replace(g.kernels[0], name=g.kernels[0].name + PAYLOAD)
    node = replace(g.nodes[0], module="blocks" + PAYLOAD, module_class="Evil" + PAYLOAD)
    g = replace(g, kernels=(k0, *g.kernels[1:]), nodes=(node, *g.nodes[1:]),
                warnings=(*g.warnings, "warn" + PAYLOAD))
    return replace(trace, graphs=(g, *trace.graphs[1:]),
                   env={**trace.env, "device_name": "cpu" + PAYLOAD},
                   script=replace(trace.script, path="/tmp/s" + PAYLOAD + ".py",
                                  message="boom" + PAYLOAD, status="error"),
                   warnings=(*trace.warnings, "w" + PAYLOAD))


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("hostile") / "t.json.gz"
    save_trace(_hostile(load_trace(str(DATA / "cpu_mlp_block.json.gz"))), str(path))
    return path


def _run(capsys, *argv) -> tuple[int, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out + err


def _shown_not_obeyed(text: str) -> None:
    assert not [c for c in RAW if c in text], repr(text[:300])
    assert "^[]0;pwned^G" in text and "<U+202E>evil" in text


@pytest.mark.parametrize("argv", [
    ["summary"], ["summary", "--rounds"], ["query"], ["query", "--what", "all"],
])
def test_summary_and_query_show_escapes_instead_of_sending_them(hostile, capsys, argv):
    code, text = _run(capsys, argv[0], hostile, *argv[1:])
    assert code == 0
    _shown_not_obeyed(text)


def test_why_shows_escapes_in_its_answer_and_its_errors(hostile, capsys):
    code, text = _run(capsys, "why", hostile, "op0", "op1", "--graph", 0)
    assert code == 0 and "blocks^[]0;pwned^G" in text
    _shown_not_obeyed(text)
    code, text = _run(capsys, "why", hostile, "op0", "no_such\x1b[2J", "--graph", 0)
    assert code != 0 and "\x1b" not in text and "no_such" in text  # (repr: \\x1b)


def test_json_output_keeps_the_text_as_data(hostile, capsys):
    code, out = _run(capsys, "query", hostile, "--json")
    assert code == 0 and not [c for c in RAW if c in out]
    doc = json.loads(out)
    assert doc["script"]["path"] == "/tmp/s" + PAYLOAD + ".py"


@pytest.mark.parametrize(("src", "commands"), [
    ("experiments/cpu_ab_whatif_ops", ("summary",)),
    ("ranks/cpu_comm_overlap", ("summary", "query")),
])
def test_a_folders_labels_and_script_are_shown(tmp_path, capsys, src, commands):
    folder = tmp_path / "folder"
    shutil.copytree(DATA / src, folder)
    meta = json.loads((folder / "experiment.json").read_text())
    meta["script"] = "/tmp/x" + PAYLOAD + ".py"
    for v in meta["variants"]:
        v["label"] = v["label"] + PAYLOAD
    (folder / "experiment.json").write_text(json.dumps(meta))
    for command in commands:
        code, text = _run(capsys, command, folder)
        assert code == 0, text
        _shown_not_obeyed(text)


def test_visible_keeps_tabs_newlines_and_ordinary_unicode():
    assert visible("a\tb\nc · é ✓ ×") == "a\tb\nc · é ✓ ×"
    assert visible("\x00\x7f\x85\u2066") == "^@^?<U+0085><U+2066>"
