"""A trace from a stranger, every kind of payload at once (#19): markup, terminal
escapes, links, absurd counts, special files, deep nesting, broken references and a
decompression bomb, each opened in the real window (offscreen) and through every
command line command, each in a child process of its own (``open_hostile.py``).

Every one ends within 10 s and under 1 GB of peak memory, with no exception escaping
into Qt's event loop or out of a command; a refused file is named in the message; a
trace that opens but does not hold together says so in the window's Notices; a
terminal gets no raw escape byte. (How each payload is shown as text, widget by
widget, is ``test_hostile_trace_text.py``; which source links open, ``test_keep_the_work``.)
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data"
BASE = DATA / "gpu_mlp_block.json.gz"  # a core line and 16 part lines; rounds, kernels
CHILD = Path(__file__).with_name("open_hostile.py")
SECONDS, PEAK_MB = 10, 1024
MARKUP = "<img src='file:///etc/hosts.png'><a href='file:///bin/sh'>op0</a>"
ESCAPE = "\x1b]52;c;aGk=\x07\x1b]0;pwned\x07\x9b31mop1"
RAW = ("\x1b", "\x07", "\x9b")


def _text() -> str:
    return gzip.decompress(BASE.read_bytes()).decode()


def _renamed(old: str, new: str):
    def build(path: Path) -> None:  # every quoted use of the name: references stay whole
        path.write_bytes(gzip.compress(_text().replace(f'"{old}"', json.dumps(new)).encode()))
    return build


def _core(change, nest: int = 0):
    """The file with its core line changed; ``nest``: the string "NEST" in it becomes
    a list nested that deep (json.dumps would recurse)."""
    def build(path: Path) -> None:
        lines = _text().split("\n")
        core = json.loads(lines[0])
        change(core)
        text = json.dumps(core).replace('"NEST"', "[" * nest + "1" + "]" * nest)
        path.write_bytes(gzip.compress("\n".join([text, *lines[1:]]).encode()))
    return build


def _part(index: int, text: str):
    def build(path: Path) -> None:
        lines = _text().split("\n")
        lines[index] = text
        path.write_bytes(gzip.compress("\n".join(lines).encode()))
    return build


def _links(path: Path) -> None:
    text = _text()
    assert '"file":"' in text
    text = text.replace('"file":"', '"file":"https://evil.example/')
    path.write_bytes(gzip.compress(text.replace('"path":"', '"path":"file:///etc/').encode()))


def _set(key_path: tuple, value):
    def change(core: dict) -> None:
        node = core
        for k in key_path[:-1]:
            node = node[k]
        node[key_path[-1]] = value
    return change


def _edge_to_nowhere(core: dict) -> None:
    edges = core["graphs"][0]["edges"]
    assert edges, "the base trace's graph has edges in its core line"
    edges[0]["dst"] = "op_nowhere"


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _bomb(path: Path) -> None:  # 100 MB of "[]," in about 100 KB of gzip
    import zlib

    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = b"[]," * (1024 * 1024 // 3)
    path.write_bytes(b"".join([deflate.compress(b"["), *(deflate.compress(block)
                                                         for _ in range(100)),
                               deflate.compress(b"[]]"), deflate.flush()]))


# name: (build the file, what the window does, what the command line does)
# window: "opens", "refused", or "notice:TEXT" (opens, and Notices holds TEXT)
# command line: "answers", "refused", or "said:TEXT" (each command refuses naming the
# file or answers saying TEXT; ``why`` may answer without it: it reads only the rounds
# of the graph it is asked about)
PAYLOADS = {
    "markup": (_renamed("op0", MARKUP), "opens", "answers"),
    "escapes": (_renamed("op1", ESCAPE), "opens", "answers"),
    "links": (_links, "opens", "answers"),
    "1e12_part_lines": (_core(_set(("parts", "lines"), 10**12)), "refused", "refused"),
    "round_1e30": (_core(_set(("graphs", 0, "rounds", -1, "index"), 10**30)),
                   "notice:numbers that cannot be", "said:numbers that cannot be"),
    "fifo": (_fifo, "refused", "refused"),
    "config_1000_deep": (_core(_set(("config", "deep"), "NEST"), nest=1000), "refused",
                         "refused"),
    "part_100000_deep": (_part(3, "[" * 100_000 + "]" * 100_000),
                         "notice:nested too deeply", "said:nested too deeply"),
    "edge_to_nowhere": (_core(_edge_to_nowhere),
                        "notice:edges naming nodes that are not in the graph",
                        "said:edges naming nodes that are not in the graph"),
    "gzip_bomb": (_bomb, "refused", "refused"),
}


def _child(tmp_path: Path, *argv: str) -> dict:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen",
           "FUSIONVIZ_DATA_DIR": str(tmp_path / "data"), "NO_COLOR": "1"}
    try:
        done = subprocess.run([sys.executable, str(CHILD), *argv], capture_output=True,
                              text=True, errors="replace", timeout=SECONDS, env=env)
    except subprocess.TimeoutExpired as e:
        raise AssertionError(f"{argv[0]} took over {SECONDS} s on {argv[1]}") from e
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert not report["escaped"], report["escaped"]
    assert report["peak_mb"] < PEAK_MB, report["peak_mb"]
    return report


@pytest.fixture(params=sorted(PAYLOADS))
def payload(request, tmp_path) -> tuple[str, Path]:
    name = request.param
    if name == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    path = tmp_path / f"{name}.json.gz"
    PAYLOADS[name][0](path)
    return name, path


def test_every_command_answers_or_refuses_naming_the_file(payload, tmp_path):
    name, path = payload
    a, b = ("op0", "op2") if name != "markup" else (MARKUP, "op2")
    report = _child(tmp_path, "cli", str(path), a, b)
    for run in report["runs"]:
        where = f"{name}: {' '.join(run['argv'])}"
        out = run["output"]
        assert "Traceback" not in out, where
        assert not [c for c in RAW if c in out], (where, out[:300])
        expect = PAYLOADS[name][2]
        if expect == "refused" or (expect.startswith("said:") and run["code"] == 2):
            assert run["code"] == 2 and path.name in out, (where, out[:300])
            continue
        assert run["code"] in (0, 1), (where, run["code"], out[:300])
        assert out.strip(), where
        if expect.startswith("said:") and run["argv"][0] != "why":
            assert expect.split(":", 1)[1] in out, (where, out[-1500:])


def test_the_window_opens_it_or_says_why_not_naming_the_file(payload, tmp_path):
    name, path = payload
    report = _child(tmp_path, "window", str(path))
    expect = PAYLOADS[name][1]
    if expect == "refused":
        assert not report["opened"] and path.name in report["errors"][-1], report["errors"]
        return
    assert report["opened"], report["errors"]
    assert not report["completer_running"], "the idle reader did not finish in 5 s"
    if expect.startswith("notice:"):
        said = "\n".join(report["notices"] + report["errors"])
        assert expect.split(":", 1)[1] in said, said[:2000]
