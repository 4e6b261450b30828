"""``fusionviz summary``: print what a trace recorded."""

from __future__ import annotations

import argparse
from pathlib import Path

from fusionviz.cli.terminal import emit
from fusionviz.model.errors import TraceError
from fusionviz.model.experiment import compare, ranks
from fusionviz.model.experiment.runs import read_experiment
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace


def add_summary_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace", help="a trace, or the folder of a multi-rank capture or an experiment")
    ap.add_argument("--rounds", action="store_true", help="also list every round's ledger")


def summary_command(opts: argparse.Namespace) -> int:
    if Path(opts.trace).is_dir():
        return _folder_summary(Path(opts.trace), opts.rounds)
    try:
        emit(summary_text(load_trace(opts.trace), rounds=opts.rounds))
    except (TraceError, OSError) as e:
        emit(f"fusionviz: {e}", err=True)
        return 2
    return 0


def _folder_summary(folder: Path, rounds: bool) -> int:
    """A multi-rank capture (or an experiment) folder: each capture, then whether the
    ranks agree (the comparison, recomputed from the traces)."""
    try:
        experiment = read_experiment(folder)
    except ValueError as e:
        emit(f"fusionviz: {e}", err=True)
        return 2
    for v in experiment.variants:
        emit(f"# {v.label} ({v.file})\n{summary_text(v.trace, rounds=rounds)}")
    traces = [v.trace for v in experiment.variants]
    emit(ranks.report_markdown(experiment.script, traces) if experiment.kind == ranks.KIND
          else experiment.report + _entries_missing(experiment))
    return 0


def _entries_missing(experiment) -> str:
    """The compiled callables of the report's two captures, eager vs compiled, where
    its report.md was written before comparisons had them ("" otherwise)."""
    if compare.ENTRIES_TITLE in experiment.report:
        return ""
    a, b = experiment.variants[:2]
    text = compare.entries_markdown(compare.compare(a.trace, b.trace, a.label, b.label))
    return f"\n{text}\n" if text else ""
