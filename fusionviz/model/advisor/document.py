"""The advisor's JSON document (``fusionviz advise --json``, schema ``fusionviz.advise/1``):
written by the CLI, read back by the window (Open Measured Advice) to show what was
measured elsewhere, on a machine with the GPU."""

from __future__ import annotations

from fusionviz.model.advisor.candidates import Candidate, rank
from fusionviz.model.advisor.measure import VERDICTS, Measured, Measurement
from fusionviz.model.advisor.step import step_changes
from fusionviz.model.errors import TraceError
from fusionviz.model.run.settings import parse_config
from fusionviz.model.trace import Graph, Trace
from fusionviz.model.whatif import parse_pair

SCHEMA = "fusionviz.advise/1"


def candidate_doc(trace_path: str, g: Graph, c: Candidate) -> dict:
    return {"kind": c.kind, "what": c.what, "why": c.why, "bytes_saved": c.bytes_saved,
            "estimate_ms": c.ms, "try": ["fusionviz", "replay", trace_path, "--graph",
                                         str(g.index), *c.try_args], "apply": c.apply}


def measured_document(trace_path: str, runs) -> dict:
    """``runs``: (graph, its ranked candidates, its Measurement) of each graph."""
    return {"schema": SCHEMA, "trace": trace_path, "measured": True, "graphs": [
        {"index": g.index, "kind": g.kind, "nodes": len(g.nodes), "clock": m.clock,
         "problem": m.problem, "source": m.source,
         "baselines_ms": m.baselines, "seconds": round(m.seconds, 1), "jobs": m.jobs,
         "candidates": [candidate_doc(trace_path, g, c) for c in cands],
         "measured": [{**candidate_doc(trace_path, g, r.candidate), "verdict": r.verdict,
                       "baseline_ms": r.baseline_ms, "ms": r.ms, "gain_ms": r.gain_ms,
                       "threshold": r.threshold, "detail": r.detail, "replay": r.trace,
                       "kernels": list(r.kernels) if r.kernels else None}
                      for r in m.results]}
        for g, cands, m in runs],
        "step": [{"what": s.what, "apply": s.apply, "net_ms": s.net_ms,
                  "gain_ms": s.gain_ms, "lost_ms": s.lost_ms, "graphs": [
                      {"graph": i, "verdict": r.verdict, "gain_ms": r.gain_ms}
                      for i, r in s.on]}
                 for s in step_changes({g.index: m for g, _c, m in runs})]}


def read_measured(doc: object, trace: Trace) -> dict[int, Measurement]:
    """The measurements of a measured document of ``trace``, each result tied to the
    candidate ``rank`` gives with the same replay arguments (rebuilt from them when this
    fusionviz ranks no such candidate); TraceError when the document is not one, or was
    measured on another trace (another graph kind or size, nodes it does not have)."""
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA or doc.get("measured") \
            is not True or not isinstance(doc.get("graphs"), list):
        raise TraceError(f"not a measured advice document ({SCHEMA}, from fusionviz advise "
                         "--measure K --json)")
    graphs = {g.index: g for g in trace.graphs}
    out: dict[int, Measurement] = {}
    for gdoc in doc["graphs"]:
        if not isinstance(gdoc, dict) or type(gdoc.get("index")) is not int:
            raise TraceError("a graph of the advice document has no index")
        index = gdoc["index"]
        graph = graphs.get(index)
        if graph is None or gdoc.get("kind") != graph.kind or gdoc.get("nodes", len(
                graph.nodes)) != len(graph.nodes):
            raise TraceError(f"the advice document's graph {index} is not the open trace's: "
                             "it was measured on another trace")
        by_args = {c.try_args: c for c in rank(trace, graph)}
        m = Measurement(index, _text(gdoc.get("clock")), problem=_text(gdoc.get("problem")),
                        baselines=[float(b) for b in gdoc.get("baselines_ms") or ()
                                   if _number(b)],
                        seconds=float(gdoc.get("seconds") or 0) if _number(
                            gdoc.get("seconds") or 0) else 0.0,
                        jobs=gdoc["jobs"] if type(gdoc.get("jobs")) is int else 1,
                        source="script" if gdoc.get("source") == "script" else "replay")
        names = {n.name for n in graph.nodes}
        for row in gdoc.get("measured") or ():
            if not isinstance(row, dict) or not isinstance(row.get("try"), list):
                continue
            args = tuple(str(a) for a in row["try"][5:])
            c = by_args.get(args) or candidate_from_args(
                args, _text(row.get("what")), _text(row.get("why")), _text(row.get("apply")))
            if c is None or row.get("verdict") not in VERDICTS:
                continue  # not a change a replay can make
            if not set(c.nodes) <= names:
                raise TraceError(f"the advice document names nodes graph {index} does not "
                                 "have: it was measured on another trace")
            kernels = row.get("kernels")
            m.results.append(Measured(
                c, row["verdict"], *(float(row[k]) if _number(row.get(k)) else None
                                     for k in ("baseline_ms", "ms", "gain_ms", "threshold")),
                detail=_text(row.get("detail")), trace=_text(row.get("replay")),
                kernels=tuple(kernels) if isinstance(kernels, list) and len(kernels) == 2
                and all(type(k) is int for k in kernels) else None))
        out[index] = m
    return out


def candidate_from_args(args: tuple[str, ...], what: str = "", why: str = "",
                        apply: str = "") -> Candidate | None:
    """The candidate that ``fusionviz replay`` arguments try (None when they are not
    ``--force``, ``--config`` and ``--mode`` flags): one the open trace's ranking no
    longer holds (measured by another fusionviz), or a change to check again."""
    force, config, mode = [], [], None
    if len(args) > 40:
        return None
    try:
        for flag, value in zip(args[::2], args[1::2], strict=True):
            if flag == "--force":
                force.append(parse_pair(value))
            elif flag == "--config":
                key = value.partition("=")[0].strip()
                if "=" not in value or not key or len(value) > 200:  # parse_config exits
                    return None
                config += parse_config([value]).items()
            elif flag == "--mode":
                mode = value
            else:
                return None
    except ValueError:
        return None
    return Candidate(kind="pair" if force else "config", what=what or " ".join(args),
                     why=why, bytes_saved=None, ms=None, apply=apply,
                     nodes=tuple(n for p in force for n in p),
                     force=tuple(force), config=tuple(config), mode=mode)


def _number(v: object) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and v == v \
        and abs(v) < 1e15


def _text(v: object) -> str:
    return v[:2000] if isinstance(v, str) else ""
