"""The first hour on three screens: the real window, a real H100 trace (GPT-2 train),
walked by ``walk/first_hour.py`` in a child whose offscreen screen has the size asked
(Qt fixes it at start). The walks run in the order a user's would: 1920×1080 first,
then the same settings on a 1280×800 laptop screen, then a fresh 2560×1440 one.
Their screenshots are committed as docs/walk-WxH*.png (``--keep-shots`` refreshes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
GPT2 = HERE.parents[0] / "data" / "gpu_gpt2_train.json.gz"
SIZES = ((1920, 1080), (1280, 800), (2560, 1440))


@pytest.fixture(scope="module")
def walks(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("walks")
    settings = {1920: root / "used.ini", 1280: root / "used.ini", 2560: root / "fresh.ini"}
    out = {}
    for width, height in SIZES:
        screen = root / f"screen-{width}.json"
        screen.write_text(json.dumps({"screens": [{
            "name": "walk", "x": 0, "y": 0, "width": width, "height": height,
            "logicalDpi": 96, "logicalBaseDpi": 96, "dpr": 1}]}))
        folder = root / f"{width}x{height}"
        env = {**os.environ, "QT_QPA_PLATFORM": f"offscreen:configfile={screen}"}
        done = subprocess.run(
            [sys.executable, str(HERE / "walk" / "first_hour.py"), str(GPT2),
             str(settings[width]), str(folder)],
            env=env, capture_output=True, text=True, timeout=180)
        assert done.returncode == 0, done.stderr[-3000:]
        out[width] = json.loads((folder / "walk.json").read_text())
        out[width]["folder"] = folder
    return out


def inside(outer: list[int], inner: list[int]) -> bool:
    x, y, w, h = outer
    a, b, c, d = inner
    return x <= a and y <= b and a + c <= x + w and b + d <= y + h


@pytest.mark.parametrize("width", [w for w, _h in SIZES])
def test_the_window_and_every_dock_are_on_the_screen(walks, width):
    walk = walks[width]
    assert not walk["restored"]  # 1280: the 1920 layout is set aside, not squeezed
    assert inside(walk["screen"], walk["window"]), walk
    for name, dock in walk["docks"].items():
        assert inside(walk["window"], dock), (name, dock, walk["window"])
    # readable panes, not "Gr…" slivers: side docks and the graph get real room
    assert walk["docks"]["graphs"][2] >= 200 and walk["docks"]["kernel"][2] >= 300
    assert walk["graph_view"][2] >= 0.35 * walk["window"][2]
    assert walk["docks"]["ledger"][3] >= 180


@pytest.mark.parametrize("width", [w for w, _h in SIZES])
def test_no_label_covers_another_in_the_graph_and_the_rounds_chart(walks, width):
    labels = walks[width]["labels"]
    assert labels["graph_texts"] > 15 and labels["chart_texts"] > 6
    assert labels["graph_overlaps"] == [] and labels["chart_overlaps"] == []


def test_the_slowest_extern_kernel_shows_its_rate_and_the_table_groups_by_op(walks):
    extern = walks[1920]["extern"]
    assert extern["kernel"].startswith("extern_kernels.mm")  # lm_head, 2048×768×50264
    assert "TFLOP/s" in extern["facts"] and "bf16" in extern["facts"]
    assert "% of" in extern["facts"]  # of the H100's bf16 peak
    assert 0 < extern["group_rows"] < 80  # 80 kernels, fewer rows: same work together


@pytest.mark.parametrize("width", [w for w, _h in SIZES])
def test_the_bottom_dock_grows_to_ten_rows_and_more(walks, width):
    assert walks[width]["bottom_rows_enlarged"] >= 10


@pytest.mark.parametrize("width", [w for w, _h in SIZES])
def test_why_not_by_click_and_ctrl_click_across_two_blocks(walks, width):
    why = walks[width]["why_not"]
    assert why["blocks"] == ["blocks.2", "blocks.3"]
    assert not why["view_moved_on_click"]  # the first click keeps the view where it is
    assert why["second_in_view"]
    assert why["selected"] == [why["a"], why["b"]]
    assert why["dialog"] and not why["errors"]
