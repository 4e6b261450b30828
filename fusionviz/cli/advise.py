"""``fusionviz advise TRACE``: what in each captured graph may be worth changing,
ranked by estimate (the fusion advisor's candidates, #20 item 2; nothing measured yet:
each line says how to try it with ``fusionviz replay``)."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from fusionviz.cli.terminal import emit
from fusionviz.model.advisor.candidates import rank
from fusionviz.model.advisor.measure import Measured, judge
from fusionviz.model.errors import TraceError
from fusionviz.model.replay.compare import decision_differences
from fusionviz.model.replay.run import replay
from fusionviz.model.replay.script import replay_problems
from fusionviz.model.report.formatting import number
from fusionviz.model.report.tables import plain_text
from fusionviz.model.run.settings import parse_config
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.whatif import WhatIf, parse_pair

SCHEMA = "fusionviz.advise/1"


def add_advise_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace", help="a trace recorded by fusionviz capture")
    ap.add_argument("--graph", type=int, default=None, metavar="N", help="this graph only")
    ap.add_argument("--top", type=int, default=10, metavar="K",
                    help="candidates shown per graph (default 10; --json lists all)")
    ap.add_argument("--json", action="store_true", help=f"the {SCHEMA} document")
    ap.add_argument("--measure", type=int, default=0, metavar="K",
                    help="replay and time the best K candidates of --graph N, each between "
                    "two baseline replays; a win counts only beyond the noise")
    ap.add_argument("--budget", type=float, default=600, metavar="SECONDS",
                    help="stop measuring after this long (default 600)")
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
        if opts.graph is None:
            emit("fusionviz: --measure needs --graph N (each candidate costs a replay)",
                 err=True)
            return 2
        return _measure(opts, trace, *ranked[0])
    if opts.json:
        doc = {"schema": SCHEMA, "trace": opts.trace, "measured": False, "graphs": [
            {"index": g.index, "kind": g.kind, "candidates": [
                {"kind": c.kind, "what": c.what, "why": c.why, "bytes_saved": c.bytes_saved,
                 "estimate_ms": c.ms, "try": ["fusionviz", "replay", opts.trace, "--graph",
                                              str(g.index), *c.try_args],
                 "apply": c.apply} for c in cands]} for g, cands in ranked]}
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


def _measure(opts: argparse.Namespace, trace, graph, candidates) -> int:
    problems = replay_problems(graph)
    if problems:
        emit(f"fusionviz: graph {graph.index} cannot be replayed: {'; '.join(problems)}",
             err=True)
        return 2
    folder = Path(opts.out) if opts.out else Path(tempfile.mkdtemp(prefix="fusionviz-advise-"))
    folder.mkdir(parents=True, exist_ok=True)
    start, runs = time.monotonic(), [0]

    def run(label: str, args: tuple[str, ...]):
        runs[0] += 1
        whatif, config, mode = _change(args)
        emit(f"[{time.monotonic() - start:5.0f}s] replay {runs[0]}: {label}", err=True)
        return replay(trace, opts.trace, graph, str(folder / f"replay_{runs[0]}.json.gz"),
                      whatif=whatif, config=config, mode=mode)

    base, failed = run("baseline", ())
    if base is None or base.timing is None or not base.timing.compiled_ms:
        emit(f"fusionviz: the baseline replay failed or was not timed ({failed})", err=True)
        return 1
    baselines, results = [base], []
    # a pair whose fusion would save no bytes has nothing to gain: not worth a replay
    worth = [c for c in candidates if c.bytes_saved != 0][:opts.measure]
    for c in worth:
        if time.monotonic() - start > opts.budget:
            results.append(Measured(c, "not measured", detail="over the time budget"))
            continue
        again, failed = run(c.what, c.try_args)
        after, _ = run("baseline", ())
        if after is not None and after.timing is not None and after.timing.compiled_ms:
            baselines.append(after)
        if again is None or again.timing is None or not again.timing.compiled_ms:
            results.append(Measured(c, "failed", detail=failed or "not timed"))
            continue
        changed = decision_differences(base, again)
        if not changed:
            results.append(Measured(c, "no change", detail="Inductor took the same decisions"))
            continue
        verdict, base_ms, gain, threshold = judge([b.timing for b in baselines[-2:]],
                                                  again.timing)
        results.append(Measured(c, verdict, base_ms, again.timing.compiled_ms, gain,
                                threshold, f"{len(changed)} kind(s) of decision changed"))
    clock = "device" if base.timing.compiled_device_ms else "wall, CPU: noisy"
    emit(f"{opts.trace}, graph {graph.index}: the best {len(results)} candidate(s) replayed "
         f"and timed ({clock}), each between two baseline replays; a win counts beyond "
         f"max(3 x noise, 1%). Replays kept in {folder}")
    emit(plain_text(
        ("#", "candidate", "baseline", "replayed", "gain", "counts beyond", "verdict", "detail"),
        ((i, m.candidate.what[:50], f"{m.baseline_ms:.3f} ms" if m.baseline_ms else "",
          f"{m.ms:.3f} ms" if m.ms else "",
          f"{m.gain_ms:+.3f} ms ({100 * m.gain_ms / m.baseline_ms:+.1f}%)"
          if m.gain_ms is not None and m.baseline_ms else "",
          f"{100 * m.threshold:.1f}%" if m.threshold else "", m.verdict, m.detail[:60])
         for i, m in enumerate(results, 1))))
    return 0


def _change(args: tuple[str, ...]):
    """(WhatIf, config, mode) of a candidate's replay arguments."""
    force, config, mode = [], {}, None
    for flag, value in zip(args[::2], args[1::2], strict=True):
        if flag == "--force":
            force.append(parse_pair(value))
        elif flag == "--config":
            config.update(parse_config([value]))
        elif flag == "--mode":
            mode = value
    return WhatIf(force=tuple(force)), config, mode
