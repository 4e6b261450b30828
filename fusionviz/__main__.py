"""Command line: ``fusionviz [TRACE|SCRIPT]``, ``fusionviz capture``, ``fusionviz summary``."""

from __future__ import annotations

import argparse
import sys

from fusionviz.cli_capture import add_capture_args, capture_command
from fusionviz.model.summary import summary_text
from fusionviz.model.trace_io import TraceError, load_trace

COMMANDS = ("capture", "summary")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="fusionviz",
        description="Explore how PyTorch Inductor fuses a program into kernels.",
        epilog="With no command: open the explorer window on TRACE or SCRIPT "
        "(or capture the bundled example when neither is given).",
    )
    sub = ap.add_subparsers(dest="command")
    cap = sub.add_parser("capture", help="run SCRIPT under capture and write a trace")
    add_capture_args(cap)
    summ = sub.add_parser("summary", help="print what a trace recorded")
    summ.add_argument("trace")
    summ.add_argument("--rounds", action="store_true", help="also list every round's ledger")
    return ap


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in (*COMMANDS, "-h", "--help"):
        return _open_gui(argv)
    opts = _parser().parse_args(argv)
    if opts.command == "capture":
        return capture_command(opts)
    try:
        print(summary_text(load_trace(opts.trace), rounds=opts.rounds))
    except TraceError as e:
        print(f"fusionviz: {e}", file=sys.stderr)
        return 2
    return 0


def _open_gui(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fusionviz")
    ap.add_argument("path", nargs="?", help="a trace (.json/.json.gz) or a script (.py)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--mode", default=None)
    ap.add_argument("--benchmark-fusion", action="store_true")
    opts = ap.parse_args(argv)
    from fusionviz.ui.app import run_app

    options = {"device": opts.device, "mode": opts.mode, "benchmark_fusion": opts.benchmark_fusion}
    return run_app(opts.path, capture_options=options)


if __name__ == "__main__":
    sys.exit(main())
