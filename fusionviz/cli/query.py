"""``fusionviz query`` and ``fusionviz why``: answers from a trace on the command line,
as short tables or (``--json``) as the documented ``fusionviz.query/1`` and
``fusionviz.why/1`` documents (``docs/query.schema.json``).

Exit codes: 0 answered (whether or not the nodes fused); 2 the trace cannot be read,
or the command line is wrong; 3 a graph or node name fits nothing, or fits several
graphs (the message suggests close names, or says to choose with ``--graph``).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fusionviz.cli.terminal import emit
from fusionviz.model.errors import TraceError
from fusionviz.model.experiment import ranks
from fusionviz.model.experiment.runs import read_experiment
from fusionviz.model.names import Names
from fusionviz.model.node_lookup import NodeLookupError, find_pair
from fusionviz.model.queries import why_not_fused
from fusionviz.model.report.query import SECTIONS, query_document, query_text
from fusionviz.model.report.why_report import why_document, why_text
from fusionviz.model.tracefile.io import load_trace

NOT_FOUND = 3  # exit code: no such graph or node, or a name fits several graphs


def add_query_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace")
    ap.add_argument("--json", action="store_true",
                    help="print the fusionviz.query/1 JSON document")
    ap.add_argument("--graph", type=int, metavar="N", help="only graph N")
    ap.add_argument("--what", type=_sections, metavar="SECTIONS",
                    help="comma-separated: graphs, kernels, rounds, ledger or all (default: "
                    "all with --json, graphs,kernels without)")


def add_why_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("trace")
    ap.add_argument("a", help="a node: op3, a buffer it writes (buf3) or its readable name")
    ap.add_argument("b", help="the other node")
    ap.add_argument("--graph", type=int, metavar="N",
                    help="the graph of the two nodes (needed when both names are in several)")
    ap.add_argument("--json", action="store_true", help="print the fusionviz.why/1 JSON document")


def _sections(text: str) -> tuple[str, ...]:
    asked = [w.strip() for w in text.split(",") if w.strip()]
    wrong = [w for w in asked if w not in (*SECTIONS, "all")]
    if wrong or not asked:
        raise argparse.ArgumentTypeError(
            f"{', '.join(wrong) or text!r}: choose from {', '.join(SECTIONS)} or all")
    return SECTIONS if "all" in asked else tuple(asked)


def query_command(opts: argparse.Namespace) -> int:
    sections = opts.what or (SECTIONS if opts.json else ("graphs", "kernels"))
    if Path(opts.trace).is_dir():
        return _query_ranks(opts, sections)
    try:
        trace = load_trace(opts.trace, lazy=True)
        if opts.graph is not None and all(g.index != opts.graph for g in trace.graphs):
            known = ", ".join(str(g.index) for g in trace.graphs) or "none"
            return _fail(f"no graph {opts.graph} in {opts.trace} (graphs: {known})", NOT_FOUND)
        doc = query_document(trace, opts.trace, sections=sections, graph=opts.graph)
    except (TraceError, OSError) as e:
        return _fail(str(e), 2)
    return _emit(_json(doc) if opts.json else query_text(doc))


def _query_ranks(opts: argparse.Namespace, sections) -> int:
    """The folder of a multi-rank capture: whether the ranks agree, then each rank."""
    try:
        experiment = read_experiment(opts.trace)
    except ValueError as e:
        return _fail(str(e), 2)
    if experiment.kind != ranks.KIND:
        return _fail(f"{opts.trace} is a {experiment.kind} experiment, not the ranks of a "
                     "capture: query one of its traces", 2)
    traces = [v.trace for v in experiment.variants]
    if opts.graph is not None and any(all(g.index != opts.graph for g in t.graphs)
                                      for t in traces):
        return _fail(f"no graph {opts.graph} on every rank in {opts.trace}", NOT_FOUND)
    docs = [query_document(v.trace, str(Path(opts.trace) / v.file), sections=sections,
                           graph=opts.graph) for v in experiment.variants]
    diffs = ranks.compare_ranks(traces)
    doc = {"schema": "fusionviz.ranks/1", "folder": str(opts.trace),
           "script": experiment.script, "agree": not any(d.decisions for d in diffs),
           "differences": [{"rank": d.rank, "decisions": d.decisions, "times": d.times}
                           for d in diffs],
           "ranks": docs}
    if opts.json:
        return _emit(_json(doc))
    text = ranks.report_markdown(experiment.script, traces, diffs)
    return _emit("\n".join([text, *(f"# rank {r}\n{query_text(d)}" for r, d in enumerate(docs))]))


def why_command(opts: argparse.Namespace) -> int:
    try:
        trace = load_trace(opts.trace, lazy=True)
        graph, a, b = find_pair(trace, opts.a, opts.b, opts.graph)
        why = why_not_fused(graph, a, b)
        if opts.json:
            out = _json(why_document(trace, opts.trace, graph, why))
        else:
            out = (f"graph {graph.index} ({graph.kind}, compile id {graph.compile_id})\n"
                   + why_text(why, Names(graph)))
    except (TraceError, OSError) as e:
        return _fail(str(e), 2)
    except NodeLookupError as e:
        close = f"\n  did you mean: {', '.join(e.suggestions)}" if e.suggestions else ""
        return _fail(f"{opts.trace}: {e}{close}", NOT_FOUND)
    return _emit(out)


def _json(doc: dict) -> str:
    return json.dumps(doc, indent=1, allow_nan=False)


def _fail(message: str, code: int) -> int:
    emit(f"fusionviz: {message}", err=True)
    return code


def _emit(text: str) -> int:
    emit(text)
    return 0
