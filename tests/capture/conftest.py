"""Real CPU captures of the bundled examples, made once per test session."""

import fcntl
import hashlib
import json
import os
from pathlib import Path

import pytest

from fusionviz.model.run.runner import examples, run_capture
from fusionviz.model.tracefile.io import load_trace, save_trace

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"
SHARED_CAPTURES_ENV = "FUSIONVIZ_TEST_SHARED_CAPTURES"  # tests/conftest.py makes it


@pytest.fixture(scope="session")
def capture(tmp_path_factory):
    """capture(name_or_path, **options) -> Trace, one capture per test session.

    The first worker (xdist) to ask for a capture makes it, under a lock; the others
    wait for it and read what it returned from the session's shared folder. Also:
    ``capture.printed(name, **options)``: the lines the script printed under capture;
    ``capture.keep(name, trace, **options)``: a test's own capture, made with the
    same arguments (``run_capture(path, out, device="cpu", **options)``), for later
    tests to share (the lines it printed unknown)."""
    done = {}  # key -> (trace, printed lines or None)
    shared = Path(os.environ.get(SHARED_CAPTURES_ENV) or tmp_path_factory.mktemp("shared"))

    def key_of(script: str, options: dict) -> tuple:
        return script, tuple(sorted(options.items()))

    def stored(key) -> Path:
        return shared / hashlib.sha256(repr(key).encode()).hexdigest()[:32]

    def get(script: str, options: dict):
        key = key_of(script, options)
        if key not in done:
            path = stored(key)
            with open(path.with_suffix(".lock"), "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)  # another worker may be capturing it
                if path.exists():
                    done[key] = _read(path)
                else:
                    printed: list[str] = []
                    where = examples().get(script) or str(SCRIPTS / script)
                    out = tmp_path_factory.mktemp("cap") / "trace.json.gz"
                    trace = run_capture(where, str(out), on_output=printed.append,
                                        **{"device": "cpu", **options})
                    done[key] = trace, printed
                    _write(path, done[key])
        return done[key]

    def run(script: str, **options):
        return get(script, options)[0]

    def printed(script: str, **options) -> list[str]:
        lines = get(script, options)[1]
        assert lines is not None, f"{script}: kept without the lines it printed"
        return lines

    def keep(script: str, trace, **options) -> None:
        key = key_of(script, options)
        path = stored(key)
        with open(path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if key not in done and not path.exists():
                done[key] = trace, None
                _write(path, done[key])

    run.printed, run.keep = printed, keep
    return run


def _write(path: Path, value) -> None:
    """The trace file (the real format) and the printed lines (JSON) beside it; ``path``
    itself, the mark that both are whole, last."""
    trace, printed = value
    part = path.with_suffix(".part.json.gz")
    save_trace(trace, part)
    os.replace(part, path.with_suffix(".json.gz"))
    path.with_suffix(".lines.json").write_text(json.dumps(printed))
    path.touch()


def _read(path: Path):
    printed = json.loads(path.with_suffix(".lines.json").read_text())
    return load_trace(path.with_suffix(".json.gz")), printed
