"""``fusionviz advise TRACE``: what in each captured graph may be worth changing,
ranked by estimate (the fusion advisor's candidates, #20 item 2; nothing measured yet:
each line says how to try it with ``fusionviz replay``)."""

from __future__ import annotations

import argparse
import json

from fusionviz.cli.terminal import emit
from fusionviz.model.advisor.candidates import rank
from fusionviz.model.errors import TraceError
from fusionviz.model.report.formatting import number
from fusionviz.model.report.tables import plain_text
from fusionviz.model.tracefile.io import load_trace

SCHEMA = "fusionviz.advise/1"


def add_advise_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace", help="a trace recorded by fusionviz capture")
    ap.add_argument("--graph", type=int, default=None, metavar="N", help="this graph only")
    ap.add_argument("--top", type=int, default=10, metavar="K",
                    help="candidates shown per graph (default 10; --json lists all)")
    ap.add_argument("--json", action="store_true", help=f"the {SCHEMA} document")


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
