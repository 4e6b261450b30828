"""``fusionviz experiment``: what-if runs of one script, compared with its baseline."""

from __future__ import annotations

import argparse
import sys

from fusionviz.cli.capture import Progress, stopped
from fusionviz.cli.job_signals import JobSignals, Stopped
from fusionviz.cli.terminal import emit
from fusionviz.model.experiment import runs as experiments
from fusionviz.model.run.protocol import encode_progress, progress_writer
from fusionviz.model.run.settings import parse_config
from fusionviz.model.whatif import WhatIf, parse_pair


def add_experiment_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("script", help="a Python script that calls torch.compile")
    ap.add_argument("script_args", nargs="*", help="arguments for the script (or after --)")
    what = ap.add_mutually_exclusive_group(required=True)
    what.add_argument("--sweep-rounds", action="store_true",
                      help="recompile with fusion stopped after round k, k = 0 .. the "
                           "last round that fused anything")
    what.add_argument("--ab", action="append", metavar="KEY=VALUE",
                      help="compare the default (or --ab-base) with these settings")
    what.add_argument("--forbid", action="append", metavar="OP_A,OP_B",
                      help="never fuse these two nodes (repeatable)")
    what.add_argument("--force", action="append", metavar="OP_A,OP_B",
                      help="fuse these two nodes if it is legal (repeatable)")
    what.add_argument("--keep-spills", action="store_true",
                      help="benchmark_fusion timing spilling kernels instead of vetoing them")
    ap.add_argument("--graph", type=int, default=None, metavar="N",
                    help="apply --forbid/--force only to graph N (compile order; default: all)")
    ap.add_argument("--ab-base", action="append", default=[], metavar="KEY=VALUE",
                    help="settings of side A for --ab (default: Inductor's defaults)")
    ap.add_argument("-o", "--out", default="experiment", help="folder for traces and the report")
    ap.add_argument("--mode", default=None)
    ap.add_argument("--benchmark-fusion", action="store_true")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--timeout", type=float, default=None, help="per capture, in seconds")
    ap.add_argument("--json-progress", action="store_true",
                    help="progress as protocol lines, on the pipe the GUI hands over "
                    "(else on stdout)")


def _progress(bar: Progress | None):
    """Progress on the terminal through ``bar``; with none, protocol lines for the GUI."""
    if bar is not None:

        def show(msg):
            if msg.get("event") == "variant":
                of = f"/{msg['of']}" if msg.get("of") else ""
                sys.stderr.write(f"== capture {msg['index'] + 1}{of}: {msg['label']}\n")
            else:
                bar(msg)

        return show

    write = progress_writer()  # the GUI's private pipe, else stdout

    def emit(msg):
        fields = {k: v for k, v in msg.items() if k != "event"}
        write(encode_progress(msg["event"], **fields))

    return emit


def experiment_command(opts: argparse.Namespace) -> int:
    with JobSignals() as signals:  # Ctrl+C, SIGTERM: the capture running ends, traces kept
        bar = None if opts.json_progress else Progress()
        try:
            return _run(opts, _progress(bar), signals)
        except Stopped as stop:
            return stopped(stop, bar, f"the captures so far are in {opts.out}/",
                           "experiment")


def _run(opts: argparse.Namespace, progress, signals: JobSignals) -> int:
    common = dict(progress=progress, mode=opts.mode, poll=signals.poll,
                  benchmark_fusion=opts.benchmark_fusion, device=opts.device,
                  timeout=opts.timeout, script_args=opts.script_args)
    try:
        if opts.sweep_rounds:
            result = experiments.sweep_rounds(opts.script, opts.out, **common)
        elif opts.ab:
            result = experiments.ab(opts.script, opts.out, parse_config(opts.ab),
                                    config_a=parse_config(opts.ab_base), **common)
        elif opts.keep_spills:
            result = experiments.keep_spills(opts.script, opts.out, **common)
        else:
            whatif = WhatIf(forbid=tuple(map(parse_pair, opts.forbid or ())),
                            force=tuple(map(parse_pair, opts.force or ())), graph=opts.graph)
            result = experiments.rules(opts.script, opts.out, whatif, **common)
    except ValueError as e:
        print(f"fusionviz: {e}", file=sys.stderr)
        return 2
    signals.poll()  # one that came as the last capture ended
    if not opts.json_progress:
        emit(result.report)
    print(f"traces and report written to {opts.out}/", file=sys.stderr)
    failed = [v.label for v in result.variants if v.trace.script.status != "ok"]
    if failed:
        print(f"fusionviz: these captures did not finish cleanly: {', '.join(failed)}",
              file=sys.stderr)
    return 1 if failed else 0
