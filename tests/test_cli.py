"""The command line: summary of a real trace, capture argument parsing, no-display error."""

import os
import subprocess
import sys
from pathlib import Path

from fusionviz.cli.main import _split_dashes, main, parser

ROOT = Path(__file__).parents[1]
DATA = ROOT / "tests" / "data"


def test_summary_of_a_real_trace(capsys):
    assert main(["summary", str(DATA / "gpu_hub_branches_bench.json.gz"), "--rounds"]) == 0
    out = capsys.readouterr().out
    assert "torch    2.11.0+cu130" in out and "benchmark_fusion=True" in out
    assert "graph 0 [inference" in out and "round 1:" in out and "speedup" in out


def test_summary_of_a_broken_file_is_an_error(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert main(["summary", str(bad)]) == 2
    assert "bad.json: not a fusionviz trace" in capsys.readouterr().err


def test_capture_options_may_follow_the_script_arguments():
    argv, extra = _split_dashes(["s.py", "a1", "-o", "t.gz", "--benchmark-fusion", "--", "--x"])
    opts = parser("capture").parse_intermixed_args(argv)
    assert (opts.script, opts.script_args, opts.out) == ("s.py", ["a1"], "t.gz")
    assert opts.benchmark_fusion and extra == ["--x"]


def test_gui_without_a_display_says_what_to_do():
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    result = subprocess.run([sys.executable, "-m", "fusionviz", "trace.json.gz"],
                            capture_output=True, text=True, env=env, cwd=ROOT)
    assert result.returncode == 2
    assert "no display" in result.stderr and "QT_QPA_PLATFORM=offscreen" in result.stderr


def test_capture_to_an_unwritable_place_stops_before_running_the_script(tmp_path, capsys):
    marker = tmp_path / "ran"
    script = tmp_path / "s.py"
    script.write_text(f"open({str(marker)!r}, 'w').close()\n")
    a_file = tmp_path / "plain.txt"
    a_file.write_text("x")
    assert main(["capture", str(script), "-o", str(a_file / "t.json.gz")]) == 2
    err = capsys.readouterr().err
    assert "cannot write the trace" in err and "is not a folder" in err and "-o/--out" in err
    assert not marker.exists()  # the script never ran


def test_a_script_option_before_the_dashes_is_refused_with_the_fixed_command(capsys):
    import pytest

    with pytest.raises(SystemExit) as stop:
        main(["capture", "train.py", "-o", "t.json.gz", "--hidden", "48"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--hidden is not an option of fusionviz capture" in err
    assert "fusionviz capture train.py -o t.json.gz -- --hidden 48" in err
