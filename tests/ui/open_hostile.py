"""Child process of tests/ui/test_hostile_traces.py: opens one trace file the way a
user would and prints, as the last line of its output, a JSON report: what was said,
any exception that escaped (into Qt's event loop or out of a command), and the
process's peak memory.

    python open_hostile.py cli PATH A B   every command line command on PATH
    python open_hostile.py window PATH    the real window, offscreen: open, wait for
                                          the idle reader, step every fusion step,
                                          select each node, show every dock
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import resource
import sys
import time
import traceback

ESCAPED: list[str] = []


def _hook(kind, value, tb) -> None:
    ESCAPED.append("".join(traceback.format_exception(kind, value, tb))[-2000:])


def peak_mb() -> float:
    """This process's peak resident memory. Linux keeps ru_maxrss across exec, so a
    child of a big process (pytest after many tests) would report its parent's; the
    peak of this process's own memory map (VmHWM) starts afresh at exec."""
    try:
        with open("/proc/self/status") as f:
            line = next(x for x in f if x.startswith("VmHWM:"))
        return int(line.split()[1]) / 1024
    except (OSError, StopIteration, ValueError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cli(path: str, a: str, b: str) -> dict:
    from fusionviz.cli.main import main

    runs = []
    for argv in (["summary", path], ["summary", path, "--rounds"], ["query", path],
                 ["query", path, "--json"], ["query", path, "--what", "all"],
                 ["why", path, a, b], ["why", path, a, b, "--json"]):
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                code = main(argv)
        except SystemExit as e:
            code = e.code
        except BaseException:  # noqa: BLE001 (what the test asserts is empty)
            _hook(*sys.exc_info())
            code = None
        runs.append({"argv": argv[0:1] + argv[2:], "code": code, "output": out.getvalue()})
    return {"runs": runs}


def window(path: str) -> dict:
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QSettings
    from PySide6.QtWidgets import QApplication

    from fusionviz.ui.main_window import MainWindow

    app = QApplication([])
    folder = os.environ["FUSIONVIZ_DATA_DIR"]
    w = MainWindow(settings=QSettings(os.path.join(folder, "w.ini"),
                                      QSettings.Format.IniFormat))
    w.resize(1400, 900)
    w.show()
    opened = w.open_trace(path)
    deadline = time.monotonic() + 5
    while w.completer.running and time.monotonic() < deadline:
        app.processEvents()
    state = w.state
    for dock in w.docks.values():
        dock.show()
        dock.raise_()
        app.processEvents()
    for i in range(len(state.steps)):
        state.set_step(i)
        app.processEvents()
    graph = state.graph
    for node in (graph.nodes[:50] if graph is not None else ()):
        state.select_nodes((node.name,))
        app.processEvents()
    return {"opened": opened, "errors": w.errors, "notices": w.notice_lines(),
            "completer_running": w.completer.running}


if __name__ == "__main__":
    sys.excepthook = _hook
    mode, path, *rest = sys.argv[1:]
    report = cli(path, *rest) if mode == "cli" else window(path)
    report["escaped"] = ESCAPED
    report["peak_mb"] = peak_mb()
    sys.stdout.write("\n" + json.dumps(report) + "\n")
    sys.stdout.flush()
    os._exit(0)  # no teardown of the window to wait for
