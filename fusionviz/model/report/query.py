"""A trace as one JSON document for scripts, CI and coding assistants (``fusionviz
query --json``), and the same answer as short text tables.

The document's shape is ``fusionviz.query/1``, written down as a JSON Schema in
``docs/query.schema.json`` (with ``fusionviz.why/1``, the answer of ``fusionviz
why``: ``why_report``); a change that breaks a reader of version 1 gets a new version. Its rows are
the ones the window shows: graph headlines (``queries.graph_headline``), kernel rows
(``kernel_table``) and ledger rows (``ledger_table``).
"""

from __future__ import annotations

import math

from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.comms.reorders import comm_names, moves, overlaps
from fusionviz.model.comms.step_overlap import step_overlap, step_span_ok, union
from fusionviz.model.names import Names
from fusionviz.model.queries import graph_headline
from fusionviz.model.report.eager_json import eager_json
from fusionviz.model.report.extern_facts import facts_json
from fusionviz.model.report.formatting import group, ms, number
from fusionviz.model.report.graph_reasons import step_calls, why_short
from fusionviz.model.report.kernel_table import kernel_rows
from fusionviz.model.report.ledger_table import ledger_rows
from fusionviz.model.report.reorder_table import reorder_summary
from fusionviz.model.report.tables import plain_text
from fusionviz.model.trace import Graph, Round, Trace
from fusionviz.model.tracefile.io import to_dict
from fusionviz.model.validate import detail_problems, graph_problems, trace_problems

QUERY_SCHEMA = "fusionviz.query/1"
SECTIONS = ("graphs", "kernels", "rounds", "ledger")


def trace_header(trace: Trace, path: str) -> dict:
    """What every document starts with: the file, the script's run and its machine."""
    return {
        "trace": {"path": path, "format": trace.format, "version": trace.version,
                  "created": trace.created},
        "script": to_dict(trace.script),
        "env": to_dict(trace.env),
        "config": to_dict(trace.config),
        "capabilities": to_dict(trace.capabilities),
        "warnings": list(trace.warnings),
        "problems": to_dict(trace.problems) + [
            {"where": "trace", "message": p, "traceback": ""} for p in trace_problems(trace)],
    }


def query_document(trace: Trace, path: str, *, sections=SECTIONS,
                   graph: int | None = None) -> dict:
    """The ``fusionviz.query/1`` document: the header, ``graphs`` always, and those of
    ``kernels``, ``rounds`` and ``ledger`` named in ``sections``; ``graph`` keeps that
    graph (by index) only."""
    graphs = [g for g in trace.graphs if graph is None or g.index == graph]
    calls = step_calls(trace)
    doc = {"schema": QUERY_SCHEMA, **trace_header(trace, path),
           "graphs": [graph_row(g, calls.get(g.index)) for g in graphs],
           "eager": eager_json(trace), "step": step_json(trace)}
    if "kernels" in sections:
        doc["kernels"] = [row for g in graphs for row in kernel_json(g, trace.env)]
    if "rounds" in sections:
        doc["rounds"] = [round_json(g, r) for g in graphs for r in g.rounds]
    if "ledger" in sections:
        doc["ledger"] = [row for g in graphs for row in ledger_json(g)]
    return json_safe(doc)


def graph_row(g: Graph, calls: int | None = None) -> dict:
    """One graph: what it is, its headline numbers, and why it exists (graph-break and
    recompile reasons, the code its frame starts at, when the trace recorded them: empty
    lists and null otherwise); ``calls``: the profiled step's calls of it, when known."""
    return {
        "index": g.index,
        "compile_id": g.compile_id,
        "kind": g.kind,
        "device": g.device,
        "backend": g.backend,
        **graph_headline(g),
        **timing_fields(g),
        "fusion_s": g.fusion_s,
        "break_reasons": to_dict(list(g.break_reasons)),
        "recompile_reasons": list(g.recompile_reasons),
        "resumed_after": to_dict(g.resumed_after),
        "frame": to_dict(g.frame),
        "step_calls": calls,
        "why": why_short(g, calls),
        "collectives": collective_json(g),
        "reorders": reorder_json(g),
        "comm_passes": [{"name": cp.name, "before": dict(cp.before), "after": dict(cp.after)}
                        for cp in g.comm_passes],
        "warnings": list(g.warnings),
        "problems": graph_problems(g) + detail_problems(g),
    }


def step_json(trace: Trace) -> dict | None:
    """The rank's profiled train step (``Trace.step``; null when not recorded): its
    window, each lane's spans summed up, the communication and how much of it the
    compute hid (``comms.step_overlap``: null where no span was recorded), and each
    collective with its bytes, time and the backward graphs it overlaps."""
    step = trace.step
    if step is None:
        return None
    spans = [s for s in step.spans if step_span_ok(s)]
    lanes: dict[str, list] = {}
    for s in spans:
        lanes.setdefault(s.lane, []).append(s)
    o = step_overlap(step)
    out = {
        "window": step.window, "duration_ms": step.duration_ms, "device": step.device,
        "method": step.method, "note": step.note,
        "lanes": [{
            "lane": lane,
            "spans": len(found),
            "busy_ms": sum(b - a for a, b in union([(x.start_ms, x.end_ms) for x in found])),
            "kinds": {k: sum(1 for x in found if x.kind == k)
                      for k in dict.fromkeys(x.kind for x in found)},
            "graph_calls": {str(i): sum(1 for x in found if x.graph == i)
                            for i in dict.fromkeys(x.graph for x in found
                                                   if x.graph is not None)},
        } for lane, found in lanes.items()],
        "clock": o.clock if o else None,
        "compute_ms": o.compute_ms if o else None,
        "communication_ms": o.communication_ms if o else None,
        "hidden_ms": o.hidden_ms if o else None,
        "behind_backward_ms": o.behind_backward_ms if o else None,
        "exposed_ms": o.exposed_ms if o else None,
        "collectives": [{
            "name": c.span.name, "kind": c.span.kind, "lane": c.span.lane,
            "bytes": c.span.bytes, "shape": list(c.span.shape), "dtype": c.span.dtype,
            "backend": c.span.backend, "bucket": c.span.bucket,
            "issue_ms": c.span.issue_ms, "start_ms": c.span.start_ms,
            "end_ms": c.span.end_ms, "ms": c.ms, "hidden_ms": c.hidden_ms,
            "exposed_ms": max(0.0, c.ms - c.hidden_ms), "backward_graphs": list(c.backward),
            "behind_backward_ms": c.backward_ms,
        } for c in (o.collectives if o else ())],
    }
    return out


def timing_fields(g: Graph) -> dict:
    """Both clocks of both sides (null where not taken), and what "eager" ran."""
    t = g.timing
    keys = ("compiled_wall_ms", "eager_wall_ms", "compiled_device_ms", "eager_device_ms",
            "dynamo_eager_ms")
    out = {k: getattr(t, k, None) if t else None for k in keys}
    out["eager_source"] = t.eager_source if t else ""
    return out


def collective_json(g: Graph) -> list[dict]:
    """Each collective of ``g`` (not a wait), its wait(s) and what it took on this rank
    (``comms.collective_times``): ``time_ms`` is ``device_ms`` on the GPU, ``span_ms``
    (from its call's start to the end of its wait) on the CPU."""
    return [{
        "node": t.node,
        "kind": t.collective.kind,
        "group": t.collective.group,
        "reduce_op": t.collective.reduce_op,
        "group_size": t.collective.group_size,
        "bytes": t.collective.bytes,
        "backend": t.collective.backend,
        "waits": list(t.waits),
        "kernel": t.kernel,
        "time_ms": t.time_ms,
        "time_kind": None if t.time_ms is None else "device" if t.on_device else "span",
        "issue_ms": t.issue_ms,
        "wait_ms": t.wait_ms,
        "span_ms": t.span_ms,
        "device_ms": t.device_ms,
        "kernels_between": None if t.kernels_between is None else list(t.kernels_between),
    } for t in collective_times(g)]


def reorder_json(g: Graph) -> list[dict]:
    """Each pass that reordered ``g``'s fused nodes after fusion: its name, the nodes it
    moved (0-based positions before and after) and, per collective, the fused nodes of
    other work between it and its wait before and after the pass."""
    return [{
        "index": r.index,
        "name": r.name,
        "error": r.error,
        "wall_s": r.wall_s,
        "nodes": len(r.order_after),
        "moved": [{"group": list(m.group), "before": m.before, "after": m.after}
                  for m in moves(r, comm_names(g))],
        "overlaps": [{"collective": o.collective, "wait": o.wait, "kind": o.kind,
                      "between_before": o.between_before, "between_after": o.between_after}
                     for o in overlaps(g, r)],
        "summary": reorder_summary(g, r),
    } for r in g.reorders]


def kernel_json(g: Graph, env: dict | None = None) -> list[dict]:
    """The kernel table's rows of ``g`` (times as recorded: device ms per graph call on
    the GPU), with the backend, every member node by raw and readable name, and an
    extern kernel's facts (``extern_facts``; ``env``: the trace's; null for others)."""
    names = Names(g)
    return [{
        "graph": g.index,
        "name": k.name,
        "kind": k.kind,
        "backend": k.backend,
        "ms": row["ms"],
        "share": row["share"],
        "launches": k.calls,
        "bytes": k.bytes,
        "gb_s": row["gb_s"],
        "regs": k.n_regs,
        "spills": k.n_spills,
        "about": row["module"],
        "nodes": list(k.nodes),
        "node_labels": [names.label(n) for n in k.nodes],
        "extern": facts_json(row["facts"]),
    } for k, row in zip(g.kernels, kernel_rows(g, env), strict=True)]


def round_json(g: Graph, r: Round) -> dict:
    """One fusion round of ``g``: its size before and after, its candidates and the
    pairs it fused."""
    return {
        "graph": g.index,
        "round": r.index,
        "reorder": r.reorder,
        "wall_s": r.wall_s,
        "groups_before": len(r.groups_before),
        "groups_after": len(r.groups_after),
        "candidates": len(r.candidates),
        "verdicts": len(r.verdicts),
        "verdicts_dropped": r.verdicts_dropped,
        "fused": [{"a": list(f.a), "b": list(f.b), "bytes_saved": f.bytes_saved}
                  for f in r.fusions],
    }


def ledger_json(g: Graph) -> list[dict]:
    """The ledger table's rows of every round of ``g`` (candidates in score order, then
    rejecting scan verdicts), the ``score_*`` columns gathered in ``score``."""
    names = Names(g)
    out = []
    for r in g.rounds:
        for row in ledger_rows(r, names):
            plain = {"graph": g.index, "round": r.index}
            for key, value in row.items():
                if key.startswith("score_"):  # in the place of the score columns
                    plain.setdefault("score", {})[key.removeprefix("score_")] = value
                else:
                    plain[key] = list(value) if isinstance(value, tuple) else value
            plain.setdefault("score", {})
            out.append(plain)
    return out


def json_safe(value):
    """``value`` with tuples as lists and NaN/infinity as None (not JSON)."""
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def query_text(doc: dict) -> str:
    """The document's sections as short aligned tables (what ``query`` prints)."""
    s = doc["script"]
    parts = [f"{doc['trace']['path']}: {s['path']} ({s['status']}), "
             f"{len(doc['graphs'])} graph(s)"]
    parts += ["", plain_text(
        ("graph", "kind", "compile id", "nodes", "kernels", "rounds", "fusions",
         "compiled", "eager", "breaks", "recompiles", "why"),
        ((g["index"], g["kind"], g["compile_id"], g["nodes"], g["kernels"], g["rounds"],
          g["fusions"], ms(g["compiled_ms"]), ms(g["eager_ms"]), len(g["break_reasons"]),
          len(g["recompile_reasons"]), g["why"]) for g in doc["graphs"]))]
    if doc.get("step") and doc["step"]["communication_ms"] is not None:
        st = doc["step"]
        parts += ["", f"train step ({st['window']}): {ms(st['duration_ms'])}, "
                  f"communication {ms(st['communication_ms'])}, "
                  f"{ms(st['behind_backward_ms'])} behind the backward, "
                  f"{ms(st['exposed_ms'])} exposed", plain_text(
                      ("collective", "bytes", "ms", "exposed ms", "backward graphs"),
                      ((c["name"], number(c["bytes"]), number(c["ms"]),
                        number(c["exposed_ms"]),
                        ", ".join(map(str, c["backward_graphs"])) or "none")
                       for c in st["collectives"]))]
    if "kernels" in doc:
        parts += ["", plain_text(
            ("graph", "kernel", "kind", "ms", "launches", "ops · module", "nodes"),
            ((k["graph"], k["name"], k["kind"], number(k["ms"]), k["launches"], k["about"],
              group(k["nodes"])) for k in doc["kernels"]))]
    if "rounds" in doc:
        parts += ["", plain_text(
            ("graph", "round", "groups", "candidates", "fused"),
            ((r["graph"], r["round"], f"{r['groups_before']} -> {r['groups_after']}",
              r["candidates"], len(r["fused"])) for r in doc["rounds"]))]
    if "ledger" in doc:
        parts += ["", plain_text(
            ("graph", "round", "rank", "pair", "outcome", "reasons"),
            ((x["graph"], x["round"], x["rank"], f"{group(x['a'])} × {group(x['b'])}",
              x["outcome"], x["reasons"]) for x in doc["ledger"]))]
    said = ([f"warning  {w}" for w in doc["warnings"]]
            + [f"problem  {p['where']}: {p['message']}" for p in doc["problems"]]
            + [f"problem  graph {g['index']}: {p}" for g in doc["graphs"] for p in g["problems"]])
    if said:  # what summary lists too: a trace that does not hold together says so
        parts += ["", *said]
    return "\n".join(parts)
