"""Plain-text summary of a trace: the script, each graph, its rounds and kernels."""

from __future__ import annotations

from fusionviz.model.comms.collective_times import collective_times
from fusionviz.model.comms.step_overlap import SINGLE_PROCESS, overlap_line, step_overlap
from fusionviz.model.names import Names
from fusionviz.model.queries import graph_summary, time_kind
from fusionviz.model.report.eager_explain import entry_lines
from fusionviz.model.report.formatting import (
    byte_size,
    collective_text,
    collective_time_text,
    ms,
    ms_spread,
    split_text,
)
from fusionviz.model.report.graph_reasons import (
    break_label,
    first_line,
    frame_label,
    short_break,
    short_guard,
    step_calls,
)
from fusionviz.model.report.notices import graph_notices, trace_notices
from fusionviz.model.report.reorder_table import reorder_summary
from fusionviz.model.trace import Graph, Round, Timing, Trace
from fusionviz.model.validate import (
    Problems,
    detail_problems,
    graph_problems,
    trace_problems,
)


def header_lines(trace: Trace) -> list[str]:
    """The script, its status, torch and device, the settings; then the trace's notices
    as the window's Notices pane words them (``trace_notices``)."""
    s, env = trace.script, trace.env
    lines = [
        f"script   {s.path} {' '.join(s.argv)}".rstrip(),
        f"status   {s.status}" + (f": {s.message}" if s.message else ""),
        f"torch    {env.get('torch', '?')}  triton {env.get('triton') or '-'}  "
        f"device {env.get('device_name', '?')}",
    ]
    settings = {k: v for k, v in trace.config.items() if v not in (None, False, "")}
    if settings:
        lines.append("config   " + ", ".join(f"{k}={v}" for k, v in sorted(settings.items())))
    lines += [f"notice   {line}" for line in trace_notices(trace, trace_problems(trace))]
    return lines


def graph_lines(g: Graph, calls: int | None = None) -> list[str]:
    """What ``g`` is and did; after its times, its notices as the window's Notices pane
    words them (``graph_notices``: warnings, problems, timing notes, collective passes)."""
    t, s = g.timing, graph_summary(g)
    speed = f" ({s['speedup_vs_eager']:.2f}x vs eager)" if s["speedup_vs_eager"] else ""
    lines = [
        f"graph {g.index} [{g.kind}, compile id {g.compile_id}, {g.device}/{g.backend}]: "
        f"{s['nodes']} nodes -> {len(g.final_groups)} after {s['rounds']} rounds "
        f"({s['fusions']} fusions, {s['benchmark_decisions']} benchmark decisions), "
        f"{s['kernels']} kernels",
        f"  compile {g.compile_s:.2f} s (fusion {g.fusion_s:.3f} s); "
        f"{s['launches']} kernel launches per call",
        *reason_lines(g, calls),
        *timing_lines(t, speed),
        *(f"  notice: {line}" for line in graph_notices(
            g, Problems(graph_problems(g), detail_problems(g)))),
        *collective_lines(g),
        *reorder_lines(g),
    ]
    names = Names(g)
    for k in g.kernels:
        regs = f"  regs {k.n_regs} spills {k.n_spills}" if k.n_regs is not None else ""
        about = names.about(k.nodes)
        about = f"  ({about})" if about else ""
        lines.append(f"  {ms(k.ms):>12}  {k.name}  [{', '.join(k.nodes)}]{about}{regs}")
    if g.replay_note:  # recorded by this fusionviz, yet not replayable: say why
        lines.append(f"  replay: not possible: {g.replay_note}")
    if g.large_bodies:
        lines.append(f"  lowering stored {len(g.large_bodies)} buffer(s) for the size of "
                     f"their bodies (up to {max(g.large_bodies)} ops; "
                     "realize_opcount_threshold decides)")
    return lines


def reason_lines(g: Graph, calls: int | None = None) -> list[str]:
    """Why the graph exists: the break its frame resumes after, the failed guards that
    recompiled it, and the break(s) it ends at (file:line, source line, Dynamo's reason);
    first, the piece of a split frame it is, or the code its frame starts at (``calls``:
    the profiled step's calls of the graph, when known)."""
    lines = [f"  {split_text(g.split)}"] if g.split is not None else []
    f = g.frame if g.split is None else None
    if f is not None:
        at = f"{f.file}:{f.line}" + (f", called from {f.caller}" if f.caller else "")
        lines += [f"  {frame_label(f, calls)}", f"      starts at {at}"]
    if g.resumed_after is not None:
        lines.append(f"  after graph break: {break_label(g.resumed_after)} "
                     "(this graph is the code after it)")
    for r in g.recompile_reasons:
        lines.append(f"  recompiled: {short_guard(r)} (failed guard {first_line(r)})")
    for b in g.break_reasons:
        at = f" at {b.file}:{b.line}" if b.file else ""
        func = f" in {b.function}" if b.function else ""
        lines.append(f"  ends at graph break: {short_break(b.reason)}{at}{func}")
        if b.code:
            lines.append(f"      {b.code}")
        if first_line(b.reason) != short_break(b.reason):
            lines.append(f"      {first_line(b.reason)}")
    return lines


def collective_lines(g: Graph) -> list[str]:
    """The graph's collectives (each with its wait) and what each took on this rank;
    nothing for a graph without any."""
    times = collective_times(g)
    if not times:
        return []
    lines = ["  collectives (and their waits):"]
    for t in times:
        waits = f" -> {', '.join(t.waits)}" if t.waits else ""
        lines.append(f"    {t.node}{waits}  {collective_text(t.collective)}: "
                     f"{collective_time_text(t)}")
    return lines


def reorder_lines(g: Graph) -> list[str]:
    """The passes that reordered the fused nodes after fusion, and what each changed
    (those that changed the collectives before lowering are among the notices)."""
    return [f"  after fusion, pass {r.index} {r.name}: {reorder_summary(g, r)}"
            for r in g.reorders]


def timing_lines(t: Timing | None, speed: str = "") -> list[str]:
    """What a graph's times are, how they were taken and what could not be done (its
    timing notes are among the graph's notices)."""
    if t is None:
        return ["  not timed"]
    kind = time_kind(t)
    lines = [f"  compiled {ms_spread(t.compiled_ms, t.compiled_spread)} {kind}, "
             f"eager {ms_spread(t.eager_ms, t.eager_spread)} {kind}{speed}"]
    if kind == "device":
        lines.append(f"  wall per call: compiled {ms_spread(t.compiled_wall_ms, t.compiled_wall_spread)}"
                     f", eager {ms_spread(t.eager_wall_ms, t.eager_wall_spread)}")
    how = f"  timed by {t.method}" if t.method else ""
    if how:
        lines.append(how + (f"; {t.repeats} wall samples" if t.repeats else "")
                     + (f", {t.profiled_calls} profiled calls" if t.profiled_calls else ""))
    if t.eager_source:
        lines.append(f"  eager: {t.eager_source}")
    if t.dynamo_eager_ms is not None:
        lines.append(f"  the graph Dynamo captured, run eagerly: {ms(t.dynamo_eager_ms)} {kind}"
                     + (f" ({ms(t.dynamo_eager_wall_ms)} wall)" if kind == "device" else ""))
    return lines + ([f"  {t.diff_note}"] if t.diff_note else [])


def round_lines(r: Round) -> list[str]:
    tag = " (reorder)" if r.reorder else ""
    lines = [
        f"  round {r.index}{tag}: {len(r.groups_before)} -> {len(r.groups_after)} nodes, "
        f"{len(r.candidates)} candidates, {r.wall_s * 1e3:.1f} ms"
    ]
    for c in r.candidates:
        why = "; ".join(x.text for x in c.reasons)
        b = c.benchmark
        bench = f" speedup {b.speedup:.3f}x" if b and b.speedup else ""
        bench += f" spill({b.spill})" if b and b.spill else ""
        lines.append(
            f"    #{c.rank} {'_'.join(c.a)} + {'_'.join(c.b)}: {c.outcome}{bench}"
            + (f" ({why})" if why else "")
        )
    return lines


def step_lines(trace: Trace) -> list[str]:
    """The rank's profiled train step (``Trace.step``): its communication line and
    each collective's bytes, time and the backward graphs it overlaps."""
    step, o = trace.step, step_overlap(trace.step)
    if o is None:
        return [f"train step: {step.note}"] if step is not None and step.note and (
            step.note != SINGLE_PROCESS) else []
    took = f"{o.step_ms:.4g} ms, " if o.step_ms is not None else ""
    lines = [f"train step ({step.window}): {took}{overlap_line(o)}"]
    for c in o.collectives:
        s = c.span
        bucket = f" bucket {s.bucket}" if s.bucket is not None else ""
        back = ", ".join(f"#{g}" for g in c.backward) or "none"
        lines.append(f"  {s.name}{bucket}: {byte_size(s.bytes, 'bytes not recorded')}, "
                     f"{c.ms:.4g} ms ({c.ms - c.hidden_ms:.4g} ms exposed), overlaps "
                     f"backward graphs {back}")
    return lines


def summary_text(trace: Trace, *, rounds: bool = False) -> str:
    """The whole summary; with ``rounds`` also every round's candidate ledger."""
    lines = header_lines(trace)
    entries = entry_lines(trace)
    if entries:
        lines += ["", *entries]
    step = step_lines(trace)
    if step:
        lines += ["", *step]
    if not trace.graphs:
        lines.append("no compiled graphs were recorded")
    calls = step_calls(trace)
    for g in trace.graphs:
        lines.append("")
        lines += graph_lines(g, calls.get(g.index))
        if rounds:
            for r in g.rounds:
                lines += round_lines(r)
    return "\n".join(lines + failure_lines(trace))


FAILURE_LINES = 40  # of the script's traceback / stderr tail; each cut to LINE_CHARS
LINE_CHARS = 400


def failure_lines(trace: Trace) -> list[str]:
    """The end of what the trace recorded of the script's traceback or stderr, when
    the script did not end well ("ok" or still "running": nothing)."""
    s = trace.script
    text = s.traceback.rstrip()
    if s.status in ("ok", "running") or not text:
        return []
    lines = text.splitlines()
    shown = lines[-FAILURE_LINES:]
    more = f", last {len(shown)} of {len(lines)} lines" if len(shown) < len(lines) else ""
    return ["", f"script's traceback / stderr{more}:",
            *(f"  {line[:LINE_CHARS]}{' […]' if len(line) > LINE_CHARS else ''}"
              for line in shown)]
