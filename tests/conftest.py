"""Fixtures for every test folder, the session's kept kernel folder and the ``torch``
marker: every test that starts a capture carries it (``-m "not torch"`` is the fast loop)."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from fusionviz.model.run import runner
from fusionviz.model.run.kernel_cache import KERNEL_CACHE_ENV

CAPTURES = Path(__file__).resolve().parent / "capture"  # every test there captures
# The session's shared captures (tests/capture/conftest.py's ``capture``): one folder
# for every xdist worker of a session, made like the kernel folder, by the first process
SHARED_CAPTURES_ENV = "FUSIONVIZ_TEST_SHARED_CAPTURES"
_made: list[tuple[str, str]] = []  # (variable, folder) this session made (deleted at its end)


def pytest_configure(config):
    """One kept kernel folder per test session (unless the user named one): every
    capture of the same model reuses the kernels compiled before; the scheduler runs.
    And one folder where the session's workers share their captures. (xdist's workers
    inherit both from the process that starts them.)"""
    for name, prefix in ((KERNEL_CACHE_ENV, "fusionviz-test-kernels-"),
                         (SHARED_CAPTURES_ENV, "fusionviz-test-captures-")):
        if not os.environ.get(name):
            _made.append((name, tempfile.mkdtemp(prefix=prefix)))
            os.environ[name] = _made[-1][1]


def pytest_unconfigure(config):
    for name, folder in _made:
        shutil.rmtree(folder, ignore_errors=True)
        if os.environ.get(name) == folder:
            del os.environ[name]


def pytest_collection_modifyitems(config, items):
    for item in items:
        if CAPTURES in Path(item.path).parents:
            item.add_marker(pytest.mark.torch)


def _compiled_frames() -> int:
    utils = sys.modules.get("torch._dynamo.utils")
    return utils.counters["frames"]["ok"] if utils else 0


def _window_runner():
    """The window's run controller module (None without Qt: the model's own run)."""
    if importlib.util.find_spec("PySide6") is None:
        return None
    from fusionviz.ui.run import controller

    return controller


def _starts_capture(argv) -> bool:
    words = [str(a) for a in argv]
    return "fusionviz.model.capture" in words or ("fusionviz" in words
                                                  and "experiment" in words)


@pytest.fixture(autouse=True)
def marked_if_it_captures(request, monkeypatch):
    """A test not marked ``torch`` fails when it starts a capture (``run_capture``, a
    capture or experiment child from the window, ``torch.compile`` in this process)."""
    if request.node.get_closest_marker("torch"):
        yield
        return

    # also from a thread that swallows the failure (a measurement's)
    refused = request.node.capture_refusals = []

    def refuse(*_args, **_kwargs):
        refused.append(True)
        pytest.fail(f"{request.node.nodeid} starts a capture: mark it "
                    "@pytest.mark.torch", pytrace=False)

    monkeypatch.setattr(runner, "capture_argv", refuse)
    controller = _window_runner()
    if controller is not None:
        wrap = controller.in_own_session
        monkeypatch.setattr(controller, "in_own_session", lambda argv: refuse()
                            if _starts_capture(argv) else wrap(argv))
    frames = _compiled_frames()
    yield
    if refused or _compiled_frames() != frames:
        refuse()


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie is dead, awaiting its reaper)."""
    try:
        os.waitpid(pid, os.WNOHANG)  # reaps it when it is our child; else raises
    except ChildProcessError:
        pass
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.fixture
def alive():
    """alive(pid) -> bool: the process runs (Linux /proc)."""
    return _alive
