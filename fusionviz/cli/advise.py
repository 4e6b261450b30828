"""``fusionviz advise TRACE``: what in each captured graph may be worth changing,
ranked by estimate (the fusion advisor's candidates, #20 item 2; each line says how to
try it with ``fusionviz replay``); with ``--measure K``, the best K of each graph
replayed and timed, and only wins beyond the noise counted (item 3)."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from fusionviz.cli.terminal import emit
from fusionviz.model.advisor.candidates import rank
from fusionviz.model.advisor.document import (
    SCHEMA,
    candidate_doc,
    measured_document,
)
from fusionviz.model.advisor.measure import (
    NOTHING_TO_MEASURE,
    OVER_BUDGET,
    SCRIPT_NOTE,
    Measurement,
    gain_text,
    measure,
)
from fusionviz.model.advisor.step import step_line
from fusionviz.model.errors import TraceError
from fusionviz.model.report.formatting import number
from fusionviz.model.report.tables import plain_text
from fusionviz.model.tracefile.io import load_trace


def add_advise_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace", help="a trace recorded by fusionviz capture")
    ap.add_argument("--graph", type=int, default=None, metavar="N", help="this graph only")
    ap.add_argument("--top", type=int, default=10, metavar="K",
                    help="candidates shown per graph (default 10; --json lists all)")
    ap.add_argument("--json", action="store_true", help=f"the {SCHEMA} document")
    ap.add_argument("--measure", type=int, default=0, metavar="K",
                    help="replay and time the best K candidates of each graph (or of "
                    "--graph N) beside baseline replays; a win counts only beyond the noise")
    ap.add_argument("--budget", type=float, default=600, metavar="SECONDS",
                    help="start no replay after this long (default 600)")
    ap.add_argument("--jobs", type=int, default=None, metavar="J",
                    help="replays compiled at a time (default: half the cores up to 8 on "
                    "a GPU, taking turns to be timed; 1 on the CPU)")
    ap.add_argument("-o", "--out", default=None, metavar="DIR",
                    help="keep the replays' traces in DIR (--measure)")


def advise_command(opts: argparse.Namespace) -> int:
    try:
        trace = load_trace(opts.trace)
    except (TraceError, OSError) as e:
        emit(f"fusionviz: {e}", err=True)
        return 2
    graphs = [g for g in trace.graphs if opts.graph is None or g.index == opts.graph]
    if not graphs:
        emit(f"fusionviz: no graph {opts.graph} in {opts.trace}", err=True)
        return 3
    ranked = [(g, rank(trace, g)) for g in graphs]
    if opts.measure:
        return _measure(opts, trace, ranked)
    if opts.json:
        doc = {"schema": SCHEMA, "trace": opts.trace, "measured": False, "graphs": [
            {"index": g.index, "kind": g.kind,
             "candidates": [candidate_doc(opts.trace, g, c) for c in cands]}
            for g, cands in ranked]}
        emit(json.dumps(doc, indent=1, allow_nan=False))
        return 0
    parts = [f"{opts.trace}: candidates ranked by estimate, not measured (the estimate of "
             "a pair is the bytes fusing would save at the GPU's peak bandwidth: an upper "
             "bound; try one with the replay command shown)"]
    for g, cands in ranked:
        shown = cands[:opts.top]
        parts += ["", f"graph {g.index} ({g.kind}): {len(cands)} candidate(s)"
                  + (f", the first {len(shown)}" if len(shown) < len(cands) else "")]
        if shown:
            parts.append(plain_text(
                ("#", "estimate", "bytes", "candidate", "why", "try: fusionviz replay … "),
                ((i, f"{c.ms:.3f} ms" if c.ms is not None else "?",
                  number(c.bytes_saved) if c.bytes_saved is not None else "",
                  c.what[:60], c.why[:60], f"--graph {g.index} {' '.join(c.try_args)}"[:70])
                 for i, c in enumerate(shown, 1))))
    emit("\n".join(parts))
    return 0


def _measure(opts: argparse.Namespace, trace, ranked) -> int:
    folder = Path(opts.out) if opts.out else Path(tempfile.mkdtemp(prefix="fusionviz-advise-"))
    folder.mkdir(parents=True, exist_ok=True)
    start, runs = time.monotonic(), []
    for graph, candidates in ranked:
        left = opts.budget - (time.monotonic() - start)
        if left <= 0:
            runs.append((graph, candidates, Measurement(
                graph.index, "", halted=OVER_BUDGET, problem=f"not measured: the time "
                f"budget (--budget {opts.budget:g} s) ran out before this graph")))
            continue
        emit(f"graph {graph.index} ({graph.kind}): measuring the best {opts.measure} "
             f"candidate(s), {max(0, left):.0f} s of the budget left", err=True)
        runs.append((graph, candidates, measure(
            trace, opts.trace, graph, candidates, opts.measure, folder=str(folder),
            budget=left, jobs=opts.jobs, on_event=lambda line: emit(line, err=True))))
    document = json.dumps(measured_document(opts.trace, runs), indent=1, allow_nan=False)
    (folder / "advice.json").write_text(document, encoding="utf-8")  # for the window
    if opts.json:
        emit(document)
        return 1 if any(_failed(m) for _g, _c, m in runs) else 0
    for graph, _c, m in runs:
        emit(f"\n{opts.trace}, graph {graph.index} ({graph.kind}): " + (
            m.problem or f"{len(m.results)} candidate(s) replayed and timed ({m.clock}), "
            f"{m.jobs} replay(s) at a time, each beside baseline replays "
            f"({_ms_list(m.baselines)}); a win counts beyond max(3 x noise, 1%)"
            + (SCRIPT_NOTE if m.source == "script" else "")))
        if m.results:
            emit(plain_text(
                ("#", "candidate", "baseline", "replayed", "gain", "counts beyond",
                 "verdict", "detail"),
                ((i, r.candidate.what[:50], _ms(r.baseline_ms), _ms(r.ms), gain_text(r),
                  f"{100 * r.threshold:.1f}%" if r.threshold else "", r.verdict,
                  r.detail[:60]) for i, r in enumerate(m.results, 1))))
    emit(f"\nwhole step: {step_line({g.index: m for g, _c, m in runs})}.\n"
         f"Replays kept in {folder}; open "
         f"{folder / 'advice.json'} in the window (Experiments > Open Measured Advice) "
         "to see them beside the graph.")
    return 1 if any(_failed(m) for _g, _c, m in runs) else 0


def _failed(m: Measurement) -> bool:
    """Nothing measured where something should have been (a baseline that failed, a
    graph that cannot be replayed); not when the budget ran out or it was cancelled."""
    return not m.baselines and m.problem != NOTHING_TO_MEASURE and not m.halted


def _ms(value: float | None) -> str:
    return f"{value:.3f} ms" if value else ""


def _ms_list(values: list[float]) -> str:
    return ", ".join(f"{v:.3f}" for v in values) + " ms" if values else "none timed"
