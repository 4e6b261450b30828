"""Open a source line of the user's script in their editor.

The command comes from ``FUSIONVIZ_EDITOR`` or the setting File ▸ Editor Command…
(``code -g {file}:{line}``, ``emacsclient -n +{line} {file}``, ``subl {file}:{line}``);
``{file}`` and ``{line}`` are filled in, and a command naming neither gets the file
as its last argument. With no command, the desktop's handler for the file opens it.

The file name comes from the trace, a file from anyone: only a regular text source file
that exists here is opened (never a URL, a folder, a device, a binary or a ``.desktop``
launcher), and one outside the captured script's folder only once the user confirms
(``confirm(path)``), its real path named (symbolic links followed).
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from pathlib import Path

from PySide6.QtCore import QProcess, QSettings, QUrl
from PySide6.QtGui import QDesktopServices

EXAMPLES = "code -g {file}:{line}   ·   emacsclient -n +{line} {file}   ·   subl {file}:{line}"


def editor_command(settings: QSettings | None = None) -> str:
    return os.environ.get("FUSIONVIZ_EDITOR") or str(
        (settings or QSettings()).value("editor", "") or "")


def set_editor_command(command: str, settings: QSettings | None = None) -> None:
    (settings or QSettings()).setValue("editor", command.strip())


def resolve(file: str, script: str = "") -> Path | None:
    """``file`` as recorded (absolute, or relative to the script's folder or to where
    the capture ran), if it is on this machine."""
    path = Path(file)
    if path.is_absolute():
        candidates = [path]
    else:
        candidates = ([Path(script).parent / path] if script else []) + [Path.cwd() / path]
    return next((p for p in candidates if p.is_file()), None)


def editor_argv(command: str, file: str, line: int) -> list[str]:
    values = {"{file}": file, "{line}": str(line)}
    # one pass: a file name holding "{line}" stays as it is
    argv = [_PLACEHOLDER.sub(lambda m: values[m.group(0)], w) for w in shlex.split(command)]
    return argv if "{file}" in command else [*argv, file]


_PLACEHOLDER = re.compile(r"\{file\}|\{line\}")


SOURCE_SUFFIXES = frozenset((".py", ".pyi", ".pyx", ".pxd", ".c", ".cc", ".cpp", ".cxx",
                             ".h", ".hh", ".hpp", ".cu", ".cuh", ".txt"))


def refusal(file: str, path: Path | None) -> str:
    """Why ``file`` (found at ``path``) is not opened as a source file ("" if it may be)."""
    if "://" in file or file.lower().startswith(("file:", "http:", "https:")):
        return f"{file} is a URL, not a source file: fusionviz opens only files."
    if path is None:
        return (f"{file} is not on this machine (the trace was captured elsewhere, or "
                "the file moved).")
    real = path.resolve()
    if not real.is_file() or real.suffix.lower() not in SOURCE_SUFFIXES:
        return (f"{real} is not a source file (fusionviz opens {', '.join(sorted(SOURCE_SUFFIXES))} "
                "files only).")
    try:
        with open(real, "rb") as f:
            if b"\0" in f.read(8192):
                return f"{real} is not a text file."
    except OSError as e:
        return f"{real} cannot be read: {e.strerror or e}."
    return ""


def inside(path: Path, script: str) -> bool:
    """Whether ``path`` (its real path) lies under the captured script's folder."""
    return bool(script) and path.resolve().is_relative_to(Path(script).resolve().parent)


def open_source(file: str, line: int, script: str = "",
                settings: QSettings | None = None, confirm=None) -> str:
    """Open ``file`` at ``line``; "" on success, else what went wrong and what to do.
    A file outside the script's folder opens only if ``confirm(real path)`` says so."""
    path = resolve(file, script) if "://" not in file else None
    problem = refusal(file, path)
    if problem:
        return problem
    path = path.resolve()
    if not inside(path, script) and not (confirm is not None and confirm(str(path))):
        return (f"Not opened: {path} lies outside the captured script's folder "
                f"({Path(script).parent if script else 'no script recorded'}).")
    command = editor_command(settings)
    if not command:
        if sys.platform == "win32":  # the default "open" of a .py there runs it
            return (f"Set an editor under File ▸ Editor Command… to open {path.name}:{line} "
                    f"({EXAMPLES}).")
        if QDesktopServices.openUrl(QUrl.fromLocalFile(str(path))):
            return ""
        return (f"No application opens {path.name}; set one under File ▸ Editor "
                f"Command… ({EXAMPLES}).")
    try:
        argv = editor_argv(command, str(path), line)
    except ValueError as e:
        return f"The editor command cannot be read ({e}): {command}"
    if not argv or not QProcess.startDetached(argv[0], argv[1:]):
        return (f"The editor command did not start: {command}. Change it under File ▸ "
                "Editor Command….")
    return ""
