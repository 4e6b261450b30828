"""The kept kernel cache (``FUSIONVIZ_KERNEL_CACHE``): real CPU captures of one script, fresh and with kept kernels, record the same graphs,
rounds and kernels; the scheduler runs in each."""

from pathlib import Path

import pytest

from fusionviz.model.run.kernel_cache import CACHES_ON, KEPT, KERNEL_CACHE_ENV
from fusionviz.model.run.runner import run_capture

SCRIPT = str(Path(__file__).parents[1] / "data" / "scripts" / "whatif_ops.py")


def _decisions(trace):
    """What the scheduler decided, graph by graph: nodes, every round's candidates and
    fusions, the final groups and the kernels."""
    return [(g.kind, [(n.name, n.ops) for n in g.nodes],
             [([(c.a, c.b, c.outcome) for c in r.candidates],
               [(f.a, f.b) for f in r.fusions]) for r in g.rounds],
             g.final_groups, [(k.name, k.nodes) for k in g.kernels]) for g in trace.graphs]


def _binaries(folder: Path) -> set[Path]:
    return set(folder.rglob("*.so"))


@pytest.fixture(scope="module")
def captures(tmp_path_factory):
    """(fresh, kept, kept again: every kernel compiled before), and the compiled kernels
    in the kept folder before and after the last capture. The folder is this test's own:
    the session's gets other workers' kernels at any time. (Untimed: what the
    scheduler decided and what was compiled do not depend on it, and it is quicker.)"""
    out = tmp_path_factory.mktemp("kc")
    folder = out / "kernels"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KERNEL_CACHE_ENV, str(folder))
        kept = run_capture(SCRIPT, str(out / "kept.json.gz"), device="cpu", timing=False)
        compiled = _binaries(folder)
        again = run_capture(SCRIPT, str(out / "again.json.gz"), device="cpu",
                            timing=False)
        after = _binaries(folder)
        mp.delenv(KERNEL_CACHE_ENV)
        fresh = run_capture(SCRIPT, str(out / "fresh.json.gz"), device="cpu",
                            timing=False)
    return fresh, kept, again, compiled, after


def test_kept_kernels_give_the_same_graphs_rounds_and_kernels(captures):
    fresh, kept, again, compiled, after = captures
    assert [t.script.status for t in (fresh, kept, again)] == ["ok"] * 3
    assert fresh.graphs and all(g.rounds and any(r.fusions for r in g.rounds)
                                for g in fresh.graphs)  # the scheduler ran
    assert _decisions(kept) == _decisions(fresh)
    assert _decisions(again) == _decisions(fresh)  # it ran again, to the same result
    assert compiled and after == compiled  # with no kernel compiled anew


def test_the_trace_says_which_caches_ran(captures):
    fresh, kept, again, _compiled, _after = captures
    assert fresh.config["force_disable_caches"] is True and fresh.config[KEPT] is False
    for trace in (fresh, kept, again):  # FX graph, AOTAutograd, autotuning, PGO: all off
        assert trace.config["fx_graph_cache"] is False and trace.config[CACHES_ON] == ""
    for trace in (kept, again):
        assert trace.config["force_disable_caches"] is False and trace.config[KEPT] is True
