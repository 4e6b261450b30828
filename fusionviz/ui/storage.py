"""Where captures and experiments started from the window are kept.

A per-user data folder (Qt's AppDataLocation, e.g. ``~/.local/share/fusionviz`` on
Linux; ``FUSIONVIZ_DATA_DIR`` overrides it), with names from the script and the time
(``mlp_block-20261125-114201.json.gz``), so a capture survives the session and can be
found again under File ▸ Recent Captures.
"""

from __future__ import annotations

import datetime
import os
from pathlib import Path

from PySide6.QtCore import QStandardPaths

RECENT_CAPTURES = 12  # entries of File ▸ Recent Captures


def data_folder() -> Path:
    chosen = os.environ.get("FUSIONVIZ_DATA_DIR")
    base = chosen or QStandardPaths.writableLocation(
        QStandardPaths.StandardLocation.AppLocalDataLocation)
    return Path(base or Path.home() / ".fusionviz")


def captures_folder() -> Path:
    folder = data_folder() / "captures"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _fresh(folder: Path, stem: str, suffix: str) -> Path:
    """``stem-YYYYmmdd-HHMMSS`` + suffix, with ``-2``, ``-3`` … if taken this second."""
    when = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = f"{stem}-{when}"
    path, k = folder / f"{base}{suffix}", 2
    while path.exists():
        path, k = folder / f"{base}-{k}{suffix}", k + 1
    return path


def _stem(script: str) -> str:
    return Path(script).stem or "capture"


def capture_path(script: str) -> str:
    """A new trace path for a capture of ``script`` (the child writes it atomically)."""
    return str(_fresh(captures_folder(), _stem(script), ".json.gz"))


def experiment_folder(script: str, kind: str = "experiment") -> str:
    """A new, created folder for an experiment (or the ranks of a capture) on ``script``
    (another window taking the same name in the same second gets the next one)."""
    while True:
        path = _fresh(captures_folder(), f"{_stem(script)}-{kind}", "")
        try:
            path.mkdir()
        except FileExistsError:
            continue
        return str(path)


def recent_captures(limit: int = RECENT_CAPTURES) -> list[Path]:
    """The newest traces and experiment folders of the captures folder, newest first."""
    folder = data_folder() / "captures"
    try:
        entries = [p for p in folder.iterdir()
                   if p.name.endswith(".json.gz") or (p / "experiment.json").is_file()]
    except OSError:
        return []
    entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    return entries[:limit]
