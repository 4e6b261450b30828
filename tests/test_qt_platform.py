"""The start-up check: Qt's X11 plugin missing system libraries is said, with the
install command, instead of Qt's abort naming only the first library."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from fusionviz.cli.qt_platform import (
    debian_package,
    distro_family,
    install_commands,
    missing_libraries,
    uses_xcb,
    xcb_plugin,
)

ROOT = Path(__file__).parents[1]
UBUNTU = 'NAME="Ubuntu"\nID=ubuntu\nID_LIKE=debian\nVERSION_ID="24.04"\n'
FEDORA = 'NAME="Fedora Linux"\nID=fedora\nVERSION_ID=41\n'


def test_debian_packages_are_named_from_the_sonames():
    # The three Qt 6 needs beyond a minimal Debian, and the naming rule's corners.
    assert [debian_package(s) for s in (
        "libxcb-cursor.so.0", "libxcb-icccm.so.4", "libxcb-keysyms.so.1",
        "libxkbcommon-x11.so.0", "libX11-xcb.so.1", "libglib-2.0.so.0",
    )] == ["libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libxkbcommon-x11-0",
           "libx11-xcb1", "libglib2.0-0"]


def test_one_command_installs_every_missing_library_first_for_this_distribution():
    missing = ["libxcb-cursor.so.0", "libxcb-icccm.so.4"]
    debian, fedora = install_commands(missing, "debian")
    assert debian.startswith("sudo apt-get install libxcb-cursor0 libxcb-icccm4 ")
    assert fedora.startswith("sudo dnf install 'libxcb-cursor.so.0()(64bit)' ")
    assert install_commands(missing, "fedora")[0] == fedora
    assert (distro_family(UBUNTU), distro_family(FEDORA), distro_family("ID=arch")) == (
        "debian", "fedora", "")


def test_the_platform_qt_will_pick():
    if not sys.platform.startswith("linux"):
        pytest.skip("the X11 plugin is Linux's")
    assert uses_xcb({"DISPLAY": ":0"})
    assert uses_xcb({"QT_QPA_PLATFORM": "xcb"})
    assert not uses_xcb({"QT_QPA_PLATFORM": "offscreen", "DISPLAY": ":0"})
    assert not uses_xcb({"WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0"})


def test_the_loader_is_asked_about_the_plugin_pyside6_ships():
    plugin = xcb_plugin()
    if plugin is None or shutil.which("ldd") is None:
        pytest.skip("no X11 plugin or no ldd here")
    ldd = subprocess.run(["ldd", str(plugin)], capture_output=True, text=True).stdout
    missing = missing_libraries(plugin)
    assert len(missing) == len(set(missing))
    assert all(f"{s} => not found" in ldd for s in missing)
    assert ldd.count("not found") >= len(missing)


def test_the_app_says_what_to_install_instead_of_aborting(tmp_path):
    """A missing library simulated by an ``ldd`` that adds one "not found" line to the
    real loader's answer: the real command line says so and names every library."""
    if xcb_plugin() is None or shutil.which("ldd") is None:
        pytest.skip("no X11 plugin or no ldd here")
    fake = tmp_path / "ldd"
    fake.write_text(f'#!/bin/sh\n{shutil.which("ldd")} "$@"\n'
                    'echo "\tlibxcb-cursor.so.0 => not found"\n')
    fake.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env.update(DISPLAY=":97", PATH=f"{tmp_path}{os.pathsep}{env.get('PATH', '')}")
    result = subprocess.run([sys.executable, "-m", "fusionviz", "t.json.gz"],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "libxcb-cursor.so.0" in result.stderr and "libxcb-cursor0" in result.stderr
    assert "QT_QPA_PLATFORM=offscreen" in result.stderr


def test_an_editor_command_fills_file_and_line_once():
    from fusionviz.ui.editor import editor_argv

    assert editor_argv("code -g {file}:{line}", "/w/{line}.py", 7) == ["code", "-g",
                                                                       "/w/{line}.py:7"]
    assert editor_argv("vim", "/w/a.py", 3) == ["vim", "/w/a.py"]
