"""Command line: ``fusionviz [TRACE|SCRIPT|DIR]``, ``capture``, ``experiment``, ``summary``,
``query``, ``why``.

Parses the command and hands it to its module; the window is imported only when
opened, so the other commands run where there is no Qt."""

from __future__ import annotations

import argparse
import sys

from fusionviz.cli.advise import add_advise_args, advise_command
from fusionviz.cli.capture import add_capture_args, capture_command
from fusionviz.cli.experiment import add_experiment_args, experiment_command
from fusionviz.cli.qt_platform import platform_problem
from fusionviz.cli.query import add_query_args, add_why_args, query_command, why_command
from fusionviz.cli.replay import add_replay_args, replay_command
from fusionviz.cli.summary import add_summary_args, summary_command

# command → (its description, what adds its arguments, what runs it, whether the user's
# script takes arguments of its own after ``--``)
COMMANDS = {
    "capture": ("Run SCRIPT under capture and write a trace.", add_capture_args,
                capture_command, True),
    "experiment": (
        "Measure what fusion decisions are worth: capture SCRIPT as a baseline and as "
        "variants, then compare them (traces + report.md in the output folder).",
        add_experiment_args, experiment_command, True),
    "summary": ("Print what a trace recorded.", add_summary_args, summary_command, False),
    "query": (
        "Print a trace's graphs, kernels, rounds and ledger as tables, or with --json as "
        "the fusionviz.query/1 document. Exit codes: 0 done, 2 unreadable trace or bad "
        "options, 3 no such graph.", add_query_args, query_command, False),
    "why": (
        "Say whether nodes A and B fused, in which round, and if not why (every recorded "
        "decision), as the window's 'Why Not Fused?' does; --json prints the "
        "fusionviz.why/1 document. Exit codes: 0 answered, 2 unreadable trace or bad "
        "options, 3 unknown node or graph, or names in several graphs (use --graph).",
        add_why_args, why_command, False),
    "replay": (
        "Compile graph N of TRACE again on its own, without the script (optionally with a "
        "what-if), record it to -o and say whether it took the captured decisions. Exit "
        "codes: 0 done, 1 the replay failed, 2 not replayable or bad options, 3 no such "
        "graph, 4 other decisions than the capture.", add_replay_args, replay_command, False),
    "advise": (
        "List what in each graph of TRACE may be worth changing (refused pairs, settings), "
        "ranked by estimate, with the replay command that tries each; nothing is measured. "
        "Exit codes: 0 done, 2 unreadable trace, 3 no such graph.", add_advise_args,
        advise_command, False),
}


def parser(command: str) -> argparse.ArgumentParser:
    """The argument parser of ``fusionviz COMMAND``."""
    description, add_args, _run, _script_args = COMMANDS[command]
    ap = argparse.ArgumentParser(prog=f"fusionviz {command}", description=description)
    add_args(ap)
    return ap


USAGE = """usage: fusionviz [TRACE [--graph N] | SCRIPT | EXPERIMENT_DIR] [--device D] [--mode M]
                 [--benchmark-fusion]
       fusionviz capture SCRIPT [SCRIPT_ARGS...] -o TRACE [options] [-- ARGS...]
       fusionviz capture SCRIPT --nproc-per-node N -o DIR [options] [-- ARGS...]
       fusionviz experiment SCRIPT (--sweep-rounds | --ab K=V | --forbid A,B | --force A,B
                            | --keep-spills) -o DIR [options]
       fusionviz summary TRACE|DIR [--rounds]
       fusionviz query TRACE|DIR [--json] [--graph N] [--what graphs,kernels,rounds,ledger|all]
       fusionviz why TRACE A B [--graph N] [--json]
       fusionviz replay TRACE --graph N -o OUT [--force A,B] [--forbid A,B] [--config K=V]
       fusionviz advise TRACE [--graph N] [--top K] [--json]

With no command, open the explorer window on TRACE, SCRIPT or an experiment folder
(or capture the bundled example when none is given). `fusionviz capture -h` lists its options."""


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] in (["-h"], ["--help"]):
        try:
            print(USAGE, flush=True)
        except BrokenPipeError:  # `fusionviz -h | head`
            sys.stdout = None
        return 0
    if argv and argv[0] in COMMANDS:
        _description, _add_args, run, script_args = COMMANDS[argv[0]]
        ap = parser(argv[0])
        return run(_with_script_args(ap, argv[1:]) if script_args else ap.parse_args(argv[1:]))
    return _open_gui(argv)


def _with_script_args(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    """Parse fusionviz's options; the script's own go after ``--``. An option fusionviz
    does not know is refused with the command line that passes it to the script."""
    ours, extra = _split_dashes(argv)
    opts, unknown = parser.parse_known_intermixed_args(ours)
    if unknown:
        stray = next((u for u in unknown if u.startswith("-")), unknown[0])
        kept = [a for a in ours if a not in unknown]
        fixed = " ".join(["fusionviz", parser.prog.split()[-1], *kept, "--", *unknown, *extra])
        parser.error(f"{stray} is not an option of {parser.prog}. If it is your script's, "
                     f"put it after --:\n  {fixed}")
    opts.script_args = [*opts.script_args, *extra]
    return opts


def _split_dashes(argv: list[str]) -> tuple[list[str], list[str]]:
    """Everything after ``--`` goes to the user's script untouched."""
    if "--" not in argv:
        return argv, []
    cut = argv.index("--")
    return argv[:cut], argv[cut + 1 :]


def _open_gui(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(prog="fusionviz")
    ap.add_argument("path", nargs="?",
                    help="a trace (.json/.json.gz), a script (.py) or an experiment folder")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--mode", default=None)
    ap.add_argument("--benchmark-fusion", action="store_true")
    ap.add_argument("--graph", type=int, default=0, metavar="N",
                    help="open a trace on its graph N (fusionviz summary lists them; a "
                         "train step's backward is usually 1)")
    opts = ap.parse_args(argv)
    problem = _no_display() or platform_problem()
    if problem:
        print(f"fusionviz: {problem}", file=sys.stderr)
        return 2
    from fusionviz.ui.app import run_app

    options = {"device": opts.device, "mode": opts.mode, "benchmark_fusion": opts.benchmark_fusion}
    return run_app(opts.path, capture_options=options, graph=opts.graph)


def _no_display() -> str:
    """Why the window cannot open here (Qt would abort with a terse message), or ""."""
    import os

    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return ""
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return ""
    return ("no display to open the window on (neither DISPLAY nor WAYLAND_DISPLAY is "
            "set). Run it in a desktop session, under Xvfb (xvfb-run fusionviz ...), or "
            "with QT_QPA_PLATFORM=offscreen; `fusionviz capture`, `summary`, `query` and "
            "`why` need no display.")

