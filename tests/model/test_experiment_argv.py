"""``experiment_argv`` builds command lines that the real ``fusionviz experiment`` parser reads
back as the experiment that was asked for."""

from __future__ import annotations

import sys

import pytest

from fusionviz.cli.main import _split_dashes, parser
from fusionviz.model.experiment.runs import experiment_argv
from fusionviz.model.run.settings import parse_config


def parsed(argv: list[str]):
    assert argv[:5] == [sys.executable, "-u", "-m", "fusionviz", "experiment"]
    args, extra = _split_dashes(argv[5:])
    opts = parser("experiment").parse_intermixed_args(args)
    opts.script_args = [*opts.script_args, *extra]
    return opts


def test_sweep():
    opts = parsed(experiment_argv("/s/model.py", "/tmp/out", "sweep", device="cpu"))
    assert opts.sweep_rounds and opts.json_progress
    assert (opts.script, opts.out, opts.device) == ("/s/model.py", "/tmp/out", "cpu")
    assert not (opts.ab or opts.forbid or opts.force or opts.keep_spills)


def test_force_and_forbid_pairs():
    opts = parsed(experiment_argv("m.py", "o", "force", pairs=[("op1", "op4"), ("op2", "op3")]))
    assert opts.force == ["op1,op4", "op2,op3"] and opts.forbid is None
    opts = parsed(experiment_argv("m.py", "o", "forbid", pairs=[("op7", "op9")]))
    assert opts.forbid == ["op7,op9"] and opts.force is None


def test_ab_settings_round_trip_through_parse_config():
    config = {"max_autotune": True, "cpp.simdlen": "avx2", "max_fusion_size": 8}
    opts = parsed(experiment_argv("m.py", "o", "ab", config=config,
                                  config_a={"benchmark_fusion": False}))
    assert parse_config(opts.ab) == config
    assert parse_config(opts.ab_base) == {"benchmark_fusion": False}


def test_keep_spills_and_common_options():
    opts = parsed(experiment_argv("m.py", "o", "keep_spills", mode="max-autotune",
                                  benchmark_fusion=True, timeout=30, script_args=["--n", "4"]))
    assert opts.keep_spills and opts.mode == "max-autotune" and opts.benchmark_fusion
    assert opts.timeout == 30 and opts.script_args == ["--n", "4"]


@pytest.mark.parametrize("kind, kwargs", [("ab", {}), ("force", {}), ("forbid", {"pairs": []}),
                                          ("nonsense", {})])
def test_incomplete_requests_are_refused(kind, kwargs):
    with pytest.raises(ValueError):
        experiment_argv("m.py", "o", kind, **kwargs)


def test_rules_can_be_limited_to_the_shown_graph():
    from fusionviz.model.experiment.runs import experiment_argv

    argv = experiment_argv("s.py", "out", "forbid", pairs=[("op1", "op2")], graph=1)
    assert argv[argv.index("--graph") + 1] == "1"
    assert "--graph" not in experiment_argv("s.py", "out", "forbid", pairs=[("op1", "op2")])

