"""SIGTERM (``kill``, ``timeout``) and Ctrl+C (SIGINT) to ``fusionviz capture`` end every
process of the job (torchrun, every rank, what the ranks started) and leave each
rank's trace readable and ``cancelled``; the command says so in one line, no
traceback, and exits 128 + the signal's number. The same for ``fusionviz experiment``
and for the window (``fusionviz SCRIPT.py``); and a capture child whose parent was
killed (SIGKILL) stops its script and writes its trace ``cancelled``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from fusionviz.model.run.process_tree import RUN_ID_ENV
from fusionviz.model.tracefile.io import load_trace

pytestmark = pytest.mark.torch

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "tests" / "data" / "scripts" / "sleeps_after_compile.py"


def _capture_until_asleep(tmp_path: Path, out: Path, *options: str,
                          command: tuple[str, ...] = ("capture", "--no-timing")):
    """Start the command and wait until every rank has compiled and started its
    child: (the command, each rank's pids)."""
    nproc = int(options[options.index("--nproc-per-node") + 1]) if options else 1
    return _until_asleep(tmp_path, nproc, [
        command[0], str(SCRIPT), str(tmp_path), "-o", str(out), "--device", "cpu",
        *command[1:], *options])


def _until_asleep(tmp_path: Path, nproc: int, args: list[str], **env: str):
    """Start ``fusionviz ARGS`` (leading a process group, as in a terminal) and wait
    until every rank of its script sleeps: (the process, each rank's pids)."""
    with (tmp_path / "stdout").open("w") as stdout, (tmp_path / "stderr").open("w") as err:
        cli = subprocess.Popen(
            [sys.executable, "-m", "fusionviz", *args], stdout=stdout, stderr=err,
            env={**os.environ, "PYTHONPATH": str(ROOT), **env}, cwd=tmp_path,
            start_new_session=True)
    files = [tmp_path / f"pids{r}" for r in range(nproc)]
    deadline = time.monotonic() + 240
    while not all(f.exists() for f in files):
        if cli.poll() is not None or time.monotonic() > deadline:
            cli.kill()
            pytest.fail(f"the script did not get to sleep: {_stderr(tmp_path)}")
        time.sleep(0.2)
    return cli, [tuple(map(int, f.read_text().split())) for f in files]


def _stderr(tmp_path: Path) -> str:
    return (tmp_path / "stderr").read_text()


def _stat(pid: int) -> list[str]:
    """/proc/PID/stat's fields after the command name: state, ppid, pgrp, …"""
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rsplit(")", 1)[1].split()


def _members(groups: set[int], cookie: bytes) -> list[int]:
    """Live processes in one of ``groups`` or whose environment holds the run's cookie."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            state, _ppid, pgrp = _stat(int(proc.name))[:3]
            env = (proc / "environ").read_bytes()
        except (OSError, ValueError):
            continue
        if state != "Z" and (int(pgrp) in groups or cookie in env.split(b"\0")):
            found.append(int(proc.name))
    return found


def _job(cli: subprocess.Popen, pids: list[tuple[int, int, int]]) -> tuple[set[int], bytes]:
    """The job's process groups (the launcher's, every rank's, their children's) and
    its cookie (``FUSIONVIZ_RUN_ID`` in a rank's environment)."""
    job = {p for rank, parent, child in pids for p in (rank, parent, child) if p != cli.pid}
    groups = {int(_stat(p)[2]) for p in job} - {os.getpgid(0)}
    env = Path(f"/proc/{pids[0][0]}/environ").read_bytes().split(b"\0")
    cookie = next(v for v in env if v.startswith(f"{RUN_ID_ENV}=".encode()))
    assert set(_members(groups, cookie)) >= job
    return groups, cookie


def _ended(cli: subprocess.Popen, tmp_path: Path, groups: set[int], cookie: bytes) -> int:
    """The command's exit status, once no process of the job is left."""
    code = cli.wait(timeout=60)
    deadline = time.monotonic() + 5  # SIGKILL is sent; the kernel may take a moment
    while _members(groups, cookie) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = _members(groups, cookie)
    for pid in left:  # not to outlive a failed test
        os.kill(pid, signal.SIGKILL)
    assert not left, f"left running: {left}"
    err = _stderr(tmp_path)
    assert "Traceback" not in err, err
    return code


def _cancelled(path: Path) -> None:
    trace = load_trace(path)
    assert trace.script.status == "cancelled", trace.script
    assert len(trace.graphs) == 1  # compiled before the signal, kept


def test_sigterm_ends_every_process_of_a_two_rank_job(tmp_path):
    folder = tmp_path / "ranks"
    cli, pids = _capture_until_asleep(tmp_path, folder, "--nproc-per-node", "2")
    assert len({parent for _rank, parent, _child in pids}) == 1  # the launcher
    groups, cookie = _job(cli, pids)
    cli.send_signal(signal.SIGTERM)
    assert _ended(cli, tmp_path, groups, cookie) == 128 + signal.SIGTERM
    assert _stderr(tmp_path).splitlines()[-1].startswith(
        f"fusionviz capture: cancelled (SIGTERM); each rank's trace so far is in {folder}/")
    for rank in (0, 1):
        _cancelled(folder / f"rank{rank}.json.gz")
    meta = json.loads((folder / "experiment.json").read_text())  # the folder opens
    assert [v["status"] for v in meta["variants"]] == ["cancelled", "cancelled"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_ends_a_single_capture_and_its_child(tmp_path, sig):
    """SIGINT goes to the command's process group, as Ctrl+C in a terminal does."""
    out = tmp_path / "t.json.gz"
    cli, pids = _capture_until_asleep(tmp_path, out)
    groups, cookie = _job(cli, pids)
    if sig == signal.SIGINT:
        os.killpg(cli.pid, sig)
    else:
        cli.send_signal(sig)
    assert _ended(cli, tmp_path, groups, cookie) == 128 + sig
    assert _stderr(tmp_path).splitlines()[-1] == (
        f"fusionviz capture: cancelled ({sig.name}); the trace so far is in {out}")
    _cancelled(out)


def test_sigterm_ends_an_experiment_and_the_capture_it_runs(tmp_path):
    """The sweep's first capture (the baseline) is asleep when SIGTERM comes."""
    folder = tmp_path / "sweep"
    cli, pids = _capture_until_asleep(tmp_path, folder,
                                      command=("experiment", "--sweep-rounds"))
    groups, cookie = _job(cli, pids)
    cli.send_signal(signal.SIGTERM)
    assert _ended(cli, tmp_path, groups, cookie) == 128 + signal.SIGTERM
    assert _stderr(tmp_path).splitlines()[-1] == (
        f"fusionviz experiment: cancelled (SIGTERM); the captures so far are in {folder}/")
    _cancelled(folder / "baseline.json.gz")
    assert not (folder / "round_0.json.gz").exists()  # no capture started after it


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_closes_the_window_and_cancels_its_capture(tmp_path, sig):
    """``fusionviz SCRIPT.py`` (the real window, offscreen) capturing a sleeping script:
    the signal closes the window, which cancels the capture (RunController.cancel)."""
    pytest.importorskip("PySide6")
    data = tmp_path / "data"
    window, pids = _until_asleep(  # the script's pids go to $PIDS_DIR: no arguments
        tmp_path, 1, [str(SCRIPT)], QT_QPA_PLATFORM="offscreen", PIDS_DIR=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"), FUSIONVIZ_DATA_DIR=str(data))
    assert pids[0][1] == window.pid  # the window's capture child
    groups, cookie = _job(window, pids)
    if sig == signal.SIGINT:
        os.killpg(window.pid, sig)  # Ctrl+C in the terminal that started it
    else:
        window.send_signal(sig)
    assert _ended(window, tmp_path, groups, cookie) == 128 + sig
    (trace,) = data.glob("**/*.json.gz")  # where the window's captures go
    _cancelled(trace)


def test_a_capture_child_whose_parent_was_killed_stops_its_script_cancelled(tmp_path):
    """SIGKILL to ``fusionviz capture`` cannot be caught: its child sees the progress
    pipe close, stops the script and writes its trace ``cancelled`` (not the
    BrokenPipeError its first write to the dead parent would raise)."""
    out = tmp_path / "t.json.gz"
    cli, pids = _capture_until_asleep(tmp_path, out)
    groups, cookie = _job(cli, pids)
    child = pids[0][0]
    cli.kill()
    cli.wait()
    deadline = time.monotonic() + 30
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.1)
    ended = not _alive(child)
    for pid in _members(groups, cookie):  # the script's own child is left: end it
        os.kill(pid, signal.SIGKILL)
    assert ended, "the capture child ran on"
    _cancelled(out)
    assert load_trace(out).script.message.startswith(
        "fusionviz ended (its progress pipe closed)")


def _alive(pid: int) -> bool:
    try:
        return _stat(pid)[0] != "Z"
    except OSError:
        return False
