"""``fusionviz replay TRACE --graph N -o OUT``: compile one recorded graph again on its
own, without the user's script (the fusion advisor's first step, #20), optionally with
a what-if; without one, say whether the replay took the captured decisions."""

from __future__ import annotations

import argparse

from fusionviz.cli.capture import Progress
from fusionviz.cli.terminal import emit
from fusionviz.model.errors import TraceError
from fusionviz.model.replay.compare import decision_counts, decision_differences, time_line
from fusionviz.model.replay.run import replay
from fusionviz.model.replay.script import replay_problems
from fusionviz.model.run.runner import output_problem
from fusionviz.model.run.settings import parse_config
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.whatif import WhatIf, parse_pair

DIFFERENT = 4  # exit status: the replay took other decisions than the capture


def add_replay_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace", help="a trace recorded by fusionviz capture")
    ap.add_argument("--graph", type=int, required=True, metavar="N", help="the graph's index")
    ap.add_argument("-o", "--out", default="replay.json.gz", help="trace of the replay")
    ap.add_argument("--mode", default=None, help="torch.compile mode's Inductor options")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE",
                    help="any torch._inductor.config setting (repeatable)")
    ap.add_argument("--force", action="append", default=[], metavar="OP_A,OP_B",
                    help="fuse this pair whatever Inductor's heuristics say (repeatable)")
    ap.add_argument("--forbid", action="append", default=[], metavar="OP_A,OP_B",
                    help="never fuse this pair (repeatable)")
    ap.add_argument("--stop-after", type=int, default=None, metavar="K",
                    help="stop fusing after round K")
    ap.add_argument("--keep-spills", action="store_true",
                    help="keep fusions benchmark_fusion vetoes for register spills")
    ap.add_argument("--timeout", type=float, default=None, help="stop after SECONDS")
    ap.add_argument("--no-timing", action="store_true",
                    help="compile only: do not time the replayed graph")


def replay_command(opts: argparse.Namespace) -> int:
    try:
        trace = load_trace(opts.trace)
        whatif = WhatIf(stop_after_round=opts.stop_after,
                        forbid=tuple(parse_pair(p) for p in opts.forbid),
                        force=tuple(parse_pair(p) for p in opts.force),
                        keep_spills=opts.keep_spills)
        config = parse_config(opts.config)
    except (TraceError, OSError, ValueError) as e:
        return _fail(str(e), 2)
    graph = next((g for g in trace.graphs if g.index == opts.graph), None)
    if graph is None:
        known = ", ".join(str(g.index) for g in trace.graphs) or "none"
        return _fail(f"no graph {opts.graph} in {opts.trace} (graphs: {known})", 3)
    problems = replay_problems(graph)
    if problems:
        return _fail(f"graph {graph.index} of {opts.trace} cannot be replayed: "
                     + "; ".join(problems) + " (re-run the script: fusionviz capture)", 2)
    problem = output_problem(opts.out)
    if problem:
        return _fail(f"cannot write the replay's trace: {problem} (-o/--out)", 2)
    changed = bool(whatif.forbid or whatif.force or whatif.keep_spills or config or opts.mode
                   or whatif.stop_after_round is not None)
    again, failed = replay(trace, opts.trace, graph, opts.out, whatif=whatif, config=config,
                           mode=opts.mode, timing=not opts.no_timing, timeout=opts.timeout,
                           on_progress=Progress(), on_output=print)
    if again is None:
        return _fail(f"the replay of graph {graph.index} failed ({failed})", 1)
    differences = decision_differences(graph, again)
    emit(f"graph {graph.index} ({graph.kind}) replayed: {decision_counts(again)}")
    said = time_line(graph, again)
    if said:
        emit(said)
    if changed:
        emit(f"with the change, against the capture: {len(differences)} kind(s) of decision "
             "differ" + "".join(f"\n  {d}" for d in differences))
    elif differences:
        emit("the replay took other decisions than the capture:"
             + "".join(f"\n  {d}" for d in differences))
    else:
        emit("the same decisions as the capture: nodes, candidates, verdicts, fusions, "
             "kernels")
    print(f"trace written to {opts.out}")
    return DIFFERENT if differences and not changed else 0


def _fail(message: str, code: int) -> int:
    emit(f"fusionviz replay: {message}", err=True)
    return code
