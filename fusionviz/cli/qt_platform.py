"""Before the window opens: can Qt's X11 platform plugin load here?

Qt aborts when its xcb plugin misses a system library, and its message names only
the first one missing, so a user installs it and meets the same abort again. This
asks the dynamic loader (``ldd``) about the plugin PySide6 ships, without importing
Qt, and turns every missing library into one install command for the distribution.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

# Debian names a library package after its soname: libxcb-icccm.so.4 → libxcb-icccm4
# (a "-" before the number when the name ends in a digit). These do not follow it.
_DEBIAN_EXCEPTIONS = {"libglib-2.0.so.0": "libglib2.0-0"}
_NOT_FOUND = re.compile(r"^\s*(\S+)\s*=>\s*not found", re.MULTILINE)


def xcb_plugin() -> Path | None:
    """PySide6's X11 platform plugin, found without importing Qt (None if absent)."""
    spec = importlib.util.find_spec("PySide6")
    for root in (spec.submodule_search_locations or []) if spec else []:
        path = Path(root) / "Qt" / "plugins" / "platforms" / "libqxcb.so"
        if path.is_file():
            return path
    return None


def uses_xcb(env: dict[str, str] | None = None) -> bool:
    """Whether Qt will pick its X11 plugin for a window here."""
    env = os.environ if env is None else env
    if not sys.platform.startswith("linux"):
        return False
    chosen = env.get("QT_QPA_PLATFORM", "")
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return not env.get("WAYLAND_DISPLAY")  # Qt tries Wayland first in a Wayland session


def missing_libraries(plugin: Path) -> list[str]:
    """The sonames the loader cannot find for ``plugin`` (each once, in ldd's order)."""
    ldd = shutil.which("ldd")
    if ldd is None:
        return []
    try:
        out = subprocess.run([ldd, str(plugin)], capture_output=True, text=True,
                             timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return list(dict.fromkeys(_NOT_FOUND.findall(out)))


def debian_package(soname: str) -> str:
    if soname in _DEBIAN_EXCEPTIONS:
        return _DEBIAN_EXCEPTIONS[soname]
    name, _, version = soname.partition(".so.")
    version = version.split(".")[0]
    return f"{name}{'-' if name[-1:].isdigit() else ''}{version}".lower()


def install_commands(missing: list[str], distro: str = "") -> list[str]:
    """One install line per distribution family, ``distro``'s first."""
    debian = "sudo apt-get install " + " ".join(debian_package(s) for s in missing)
    # RPM packages provide their sonames, so dnf installs a library by soname.
    fedora = "sudo dnf install " + " ".join(f"'{s}()(64bit)'" for s in missing)
    lines = [f"{debian}    # Debian, Ubuntu", f"{fedora}    # Fedora, RHEL"]
    return lines[::-1] if distro == "fedora" else lines


def distro_family(os_release: str | None = None) -> str:
    """``debian`` or ``fedora`` from /etc/os-release (ID and ID_LIKE), else ""."""
    if os_release is None:
        try:
            os_release = Path("/etc/os-release").read_text()
        except OSError:
            return ""
    ids = " ".join(v.strip().strip('"') for k, _, v in
                   (line.partition("=") for line in os_release.splitlines())
                   if k in ("ID", "ID_LIKE"))
    for family, names in (("debian", ("debian", "ubuntu")), ("fedora", ("fedora", "rhel"))):
        if any(n in ids.split() for n in names):
            return family
    return ""


def explain(missing: list[str], distro: str = "") -> str:
    """The message printed instead of Qt's abort."""
    commands = "\n".join(f"  {c}" for c in install_commands(missing, distro))
    return (
        "the window cannot open: Qt's X11 platform plugin (xcb) needs system libraries "
        f"that are not installed: {', '.join(missing)}.\nInstall them with:\n{commands}\n"
        "Or run without a screen: QT_QPA_PLATFORM=offscreen fusionviz ... (draws nothing "
        "visible), or use `fusionviz capture` and `fusionviz summary`, which need no window."
    )


def platform_problem(env: dict[str, str] | None = None) -> str:
    """Why Qt's platform plugin would abort here, with what to install ("" when fine)."""
    if not uses_xcb(env):
        return ""
    plugin = xcb_plugin()
    missing = missing_libraries(plugin) if plugin else []
    return explain(missing, distro_family()) if missing else ""
