"""The real entry point opens a trace, shows the charts, quits, and exits cleanly."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

TRACE = Path(__file__).parents[1] / "data" / "gpu_mlp_block.json.gz"

SCRIPT = textwrap.dedent("""
    import sys, time
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication, QDockWidget
    from fusionviz.ui.app import make_app, run_app

    app = make_app()
    deadline = time.monotonic() + 60

    def window():
        return next((w for w in QApplication.topLevelWidgets()
                     if w.metaObject().className() == "MainWindow"), None)

    def when_open():
        # polls until the trace is open (no fixed wait: a busy machine is slower)
        w = window()
        if w is None or w.state.trace is None:
            if time.monotonic() > deadline:
                print("never opened", flush=True)
                QApplication.exit(3)
            else:
                QTimer.singleShot(20, when_open)
            return
        assert len(w.state.trace.graphs) == 2
        for dock in w.findChildren(QDockWidget):
            dock.show()
            dock.raise_()
        QApplication.processEvents()  # lay out and paint every pane, charts included
        print("opened", flush=True)
        QTimer.singleShot(0, QApplication.quit)

    QTimer.singleShot(0, when_open)
    sys.exit(run_app(sys.argv[1]))
""")


def test_run_app_opens_and_exits_cleanly(tmp_path):
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "XDG_CONFIG_HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(TRACE)], capture_output=True,
                            text=True, env=env, timeout=120)
    assert "opened" in result.stdout, result.stderr
    assert result.returncode == 0, result.stderr[-2000:]
