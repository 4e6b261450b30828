"""``fusionviz capture``: run a script under capture with a progress line, then summarise."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from fusionviz.cli.job_signals import JobSignals, Stopped
from fusionviz.cli.terminal import emit
from fusionviz.model.experiment.ranks import finish_ranks
from fusionviz.model.report.summary import summary_text
from fusionviz.model.run.protocol import describe_progress
from fusionviz.model.run.runner import (
    output_problem,
    rank_paths,
    run_capture,
    run_ranks,
    settle_traces,
    write_failure,
)
from fusionviz.model.run.settings import parse_config
from fusionviz.model.whatif import WHAT_IFS


def add_capture_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("script", help="a Python script that calls torch.compile")
    ap.add_argument("script_args", nargs="*",
                    help="arguments for the script (put ones starting with '-' after --)")
    ap.add_argument("-o", "--out", default="trace.json.gz", help="trace file to write")
    ap.add_argument("--mode", default=None, help="torch.compile mode, e.g. max-autotune")
    ap.add_argument("--benchmark-fusion", action="store_true", help="config.benchmark_fusion=True")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                    help="any torch._inductor.config setting (repeatable)")
    ap.add_argument("--timeout", type=float, default=None, help="stop the script after SECONDS")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--no-timing", action="store_true", help="skip runtime measurement")
    ap.add_argument("--what-if", action="append", default=[], choices=WHAT_IFS,
                    help="also measure each compiled callable compiled again with CUDA "
                    "graphs (mode reduce-overhead), beside eager and as compiled (GPU)")
    ap.add_argument("--nproc-per-node", type=int, default=1, metavar="N",
                    help="run SCRIPT as N ranks under torch.distributed.run (torchrun), "
                    "each captured; -o is then a folder: one trace per rank and the ranks' "
                    "comparison (open the folder in the window)")


class Progress:
    """One status line on stderr, rewritten in place on a terminal."""

    def __init__(self, stream=sys.stderr) -> None:
        self.stream, self.tty, self.t0 = stream, stream.isatty(), time.monotonic()
        self.open = False  # the last line was left to be rewritten

    def __call__(self, msg: dict) -> None:
        text = describe_progress(msg)
        stamp = f"[{time.monotonic() - self.t0:6.1f}s] "
        if self.tty:
            self.stream.write("\r\033[K" + stamp + text)
            self.open = msg["event"] not in ("graph_done", "done")
            if not self.open:
                self.stream.write("\n")
        else:
            self.stream.write(stamp + text + "\n")
        self.stream.flush()

    def end_line(self) -> None:
        """Start the next line clean: on a terminal, end the line left open, or clear
        what the terminal echoed on a fresh one (``^C``)."""
        if self.tty:
            self.stream.write(("\n" if self.open else "") + "\r\033[K")
            self.stream.flush()
            self.open = False


def capture_command(opts: argparse.Namespace) -> int:
    with JobSignals() as signals:  # Ctrl+C, SIGTERM: the whole job ends, traces kept
        if opts.nproc_per_node > 1:
            return _ranks_command(opts, signals)
        return _single_command(opts, signals)


def _single_command(opts: argparse.Namespace, signals: JobSignals) -> int:
    problem = output_problem(opts.out)
    if problem:
        print(f"fusionviz capture: cannot write the trace: {problem} (-o/--out)",
              file=sys.stderr)
        return 2
    args, progress = list(opts.script_args), Progress()
    try:
        trace = run_capture(
            opts.script, opts.out, timeout=opts.timeout, on_progress=progress,
            on_output=print, mode=opts.mode, benchmark_fusion=opts.benchmark_fusion,
            config=parse_config(opts.config), device=opts.device, script_args=args,
            timing=not opts.no_timing, what_if=tuple(opts.what_if), poll=signals.poll,
        )
        signals.poll()  # one that came as the script ended
    except Stopped as stop:
        return stopped(stop, progress, f"the trace so far is in {opts.out}")
    emit(summary_text(trace))
    problem = write_failure(trace.script)
    if problem:  # the script's status stands; the trace file is its last good state
        print(f"fusionviz capture: {problem} ({opts.out})", file=sys.stderr)
        return 1
    print(f"trace written to {opts.out}")
    return 0 if trace.script.status == "ok" else 1


def stopped(stop: Stopped, progress: Progress | None, where: str,
            command: str = "capture") -> int:
    """One line, no traceback; 130 for SIGINT, 143 for SIGTERM (128 + its number)."""
    if progress is not None:
        progress.end_line()
    print(f"fusionviz {command}: cancelled ({stop.name}); {where}", file=sys.stderr)
    return stop.exit_code


def _ranks_command(opts: argparse.Namespace, signals: JobSignals) -> int:
    """``--nproc-per-node N``: every rank captured into the folder ``-o``, compared."""
    folder = Path(opts.out if opts.out != "trace.json.gz" else "ranks")
    if folder.name.endswith((".json", ".json.gz")):
        print(f"fusionviz capture: with --nproc-per-node, -o names a folder (one trace per "
              f"rank), not {folder}", file=sys.stderr)
        return 2
    problem = "" if folder.is_dir() else output_problem(str(folder))
    if problem:
        print(f"fusionviz capture: cannot write the traces: {problem} (-o/--out)",
              file=sys.stderr)
        return 2
    paths, progress, stop = rank_paths(folder, opts.nproc_per_node), Progress(), None
    try:
        traces = run_ranks(
            opts.script, str(folder), timeout=opts.timeout, on_progress=progress,
            on_output=print, mode=opts.mode, benchmark_fusion=opts.benchmark_fusion,
            config=parse_config(opts.config), device=opts.device,
            script_args=list(opts.script_args), timing=not opts.no_timing,
            nproc=opts.nproc_per_node, what_if=tuple(opts.what_if), poll=signals.poll,
        )
        signals.poll()
    except Stopped as e:  # every rank's trace is settled: read them as they are
        stop, traces = e, settle_traces(paths, exit_code=None)
    experiment = finish_ranks(opts.script, folder, traces, [p.name for p in paths])
    if stop:  # the comparison is written, so the folder opens as a finished job's
        return stopped(stop, progress, f"each rank's trace so far is in {folder}/ "
                       f"(open it: fusionviz {folder})")
    for rank, trace in enumerate(traces):
        emit(f"rank {rank}: " + summary_text(trace).splitlines()[1])  # its status line
    emit(experiment.report)
    print(f"traces and their comparison written to {folder}/ (open it: fusionviz {folder})")
    return 0 if all(t.script.status == "ok" for t in traces) else 1
