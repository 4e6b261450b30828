"""The Notices pane's lines: what the user should know a trace lacks or hit.

``fusionviz summary`` prints the same lines (``trace_notices`` under its header,
``graph_notices`` under each graph), so the window and the command line say the same."""

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
    """One line each: first, a script that did not end well; then the trace's notices
    (``trace_notices``) and, for the shown ``graph``, its own (``graph_notices``)."""
    lines = [] if trace.script.status in ("ok", "running") else [
        f"Script status: {trace.script.status}. {trace.script.message}"]
    lines += trace_notices(trace, trace_problems, unreadable)
    if graph is not None:
        lines += graph_notices(graph, graph_problems)
    return lines


def trace_notices(trace: Trace, trace_problems: Problems,
                  unreadable: Iterable[str] = ()) -> list[str]:
    """What this torch did not record, an untested torch, the trace's warnings and
    problems, its ``unreadable`` parts and ``trace_problems``, one line each."""
    lines = [f"Not recorded on this torch: {m}" for m in trace.capabilities.missing]
    untested = unverified_note(str(trace.env.get("torch", "")))
    lines += [untested.capitalize()] if untested else []
    lines += list(trace.warnings)
    lines += [f"{p.where}: {p.message}" for p in trace.problems]
    lines += [f"malformed, not shown: {where}" for where in unreadable]
    lines += [f"trace does not hold together: {p}" for p in trace_problems]
    return lines


def graph_notices(graph: Graph, graph_problems: Problems | None = None) -> list[str]:
    """``graph``'s warnings, collective passes, ``graph_problems`` and timing notes,
    one line each, each naming the graph."""
    lines = [f"graph {graph.index}: {w}" for w in graph.warnings]
    lines += [f"graph {graph.index}, before lowering: {comm_pass_text(cp)}"
              for cp in graph.comm_passes]
    lines += [f"graph {graph.index} does not hold together: {p}"
              for p in graph_problems or ()]
    timing = graph.timing
    for note in (timing.note, load_warning(timing)) if timing is not None else ():
        if note:
            lines.append(f"graph {graph.index} timing: {note}")
    return lines
