"""Real CPU captures of the bundled examples, made once per test session."""

from pathlib import Path

import pytest

from fusionviz.model.run.runner import examples, run_capture

SCRIPTS = Path(__file__).parents[1] / "data" / "scripts"


@pytest.fixture(scope="session")
def capture(tmp_path_factory):
    """capture(name_or_path, **options) -> Trace, memoised per session."""
    done = {}

    def run(script: str, **options):
        key = (script, tuple(sorted(options.items())))
        if key not in done:
            path = examples().get(script) or str(SCRIPTS / script)
            out = tmp_path_factory.mktemp("cap") / "trace.json.gz"
            options.setdefault("device", "cpu")
            done[key] = run_capture(path, str(out), **options)
        return done[key]

    return run
