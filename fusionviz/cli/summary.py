"""``fusionviz summary``: print what a trace recorded."""

from __future__ import annotations

import argparse
import sys

from fusionviz.model.errors import TraceError
from fusionviz.model.report.summary import summary_text
from fusionviz.model.tracefile.io import load_trace


def add_summary_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace")
    ap.add_argument("--rounds", action="store_true", help="also list every round's ledger")


def summary_command(opts: argparse.Namespace) -> int:
    try:
        print(summary_text(load_trace(opts.trace), rounds=opts.rounds))
    except (TraceError, OSError) as e:
        print(f"fusionviz: {e}", file=sys.stderr)
        return 2
    return 0
