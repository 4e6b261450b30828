"""The Notices pane's lines: what the user should know a trace lacks or hit."""

from __future__ import annotations

from collections.abc import Iterable

from fusionviz.model.queries import load_warning
from fusionviz.model.report.formatting import comm_pass_text
from fusionviz.model.report.torch_versions import unverified_note
from fusionviz.model.trace import Graph, Trace
from fusionviz.model.validate import Problems


def notice_lines(trace: Trace, graph: Graph | None, trace_problems: Problems,
                 graph_problems: Problems | None = None,
                 unreadable: Iterable[str] = ()) -> list[str]:
    """One line each: what this torch did not record, an untested torch, the trace's
    warnings and problems, its ``unreadable`` parts, ``trace_problems``; for the shown
    ``graph``, its warnings, collective passes, ``graph_problems`` and timing notes;
    first, a script that did not end well."""
    lines = [f"Not recorded on this torch: {m}" for m in trace.capabilities.missing]
    untested = unverified_note(str(trace.env.get("torch", "")))
    lines += [untested.capitalize()] if untested else []
    lines += list(trace.warnings)
    lines += [f"{p.where}: {p.message}" for p in trace.problems]
    lines += [f"malformed, not shown: {where}" for where in unreadable]
    lines += [f"trace does not hold together: {p}" for p in trace_problems]
    if graph is not None:
        lines += [f"graph {graph.index}: {w}" for w in graph.warnings]
        lines += [f"graph {graph.index}, before lowering: {comm_pass_text(cp)}"
                  for cp in graph.comm_passes]
        lines += [f"graph {graph.index} does not hold together: {p}"
                  for p in graph_problems or ()]
        timing = graph.timing
        for note in (timing.note, load_warning(timing)) if timing is not None else ():
            if note:
                lines.append(f"graph {graph.index} timing: {note}")
    if trace.script.status not in ("ok", "running"):
        lines.insert(0, f"Script status: {trace.script.status}. {trace.script.message}")
    return lines
