"""Fixtures for every test folder."""

from __future__ import annotations

import os

import pytest


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
