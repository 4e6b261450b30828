"""Verifying the advisor's best candidates by measurement (#20, item 3): each is
replayed and timed beside baseline replays of the same graph, and counts as a win only
beyond the noise.

Replays compile side by side (``jobs`` at a time) and take turns on the GPU
(``replay/turns.py``) in a fixed order, baseline first and every candidate next to a
baseline: B C1 C2 B C3 C4 B ... Each candidate is judged against the baselines timed
just before and after it. On the CPU the replays run one at a time: times there are
wall times, and a compile beside a timing would stretch them.

The noise of a run is the largest half-range (max − min) / 2 of any of its timings,
relative to its median, and the baselines' disagreement with each other; a
difference counts only when it is over ``max(3 × noise, 1%)`` and the candidate's
spread does not overlap the baselines' (Inductor-Rewrite-Blame's threshold, in
``research/advisor.md``). Times are per call of the graph, on the clock the capture
uses there (device time on the GPU, wall time on the CPU).

A graph that cannot be replayed (``replay_problems``: custom ops, inputs the trace could
not hold) is measured by running the user's script again for each replay instead
(``replay.run.rerun``), one at a time, its graph of the same index timed.

A replay also checks its outputs against the graph run eagerly (``max_abs_diff``): a
candidate whose outputs are further from eager than ``RESULT_SLACK`` × the baseline's
(and more than ``RESULT_FLOOR``) "changed results", whatever its time.
"""

from __future__ import annotations

import json
import math
import os
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from fusionviz.model.advisor.candidates import Candidate
from fusionviz.model.replay.compare import decision_differences
from fusionviz.model.replay.run import replay, rerun, rerun_problem
from fusionviz.model.replay.script import replay_problems
from fusionviz.model.replay.turns import schedule
from fusionviz.model.run.kernel_cache import shared_kernels
from fusionviz.model.trace import Graph, Timing, Trace
from fusionviz.model.whatif import WhatIf

FLOOR = 0.01  # no difference under 1% counts
RESULT_SLACK, RESULT_FLOOR = 4.0, 1e-5
# a replay's device time cannot show what CUDA graphs save (launches): not measured here
UNMEASURED_MODES = {"reduce-overhead": "CUDA graphs save launch time, which a replay's "
                    "device time does not see: measure the script with fusionviz capture "
                    "--what-if reduce-overhead"}
NOTHING_TO_MEASURE = ("no candidate a replay can measure (pairs no rule can force or that "
                      "would save no bytes, and CUDA graphs, are left out)")
OVER_BUDGET, CANCELLED = "over the time budget", "cancelled"
SCRIPT_NOTE = ("; this graph cannot be replayed: each replay was a run of your whole script "
               "with the change")
VERDICTS = ("win", "within noise", "slower", "changed results", "not generated",
            "failed", "not measured")


@dataclass(frozen=True)
class Measured:
    candidate: Candidate
    verdict: str  # one of VERDICTS
    baseline_ms: float | None = None
    ms: float | None = None
    gain_ms: float | None = None  # baseline - candidate (> 0: faster)
    threshold: float | None = None  # the relative difference that would count
    detail: str = ""  # why it failed, or what changed in the decisions
    trace: str = ""  # the replay's trace file
    kernels: tuple[int, int] | None = None  # kernels before, after


@dataclass
class Measurement:
    """One graph's measured candidates."""

    graph: int
    clock: str  # "device time" | "wall time (CPU, noisy)"
    baselines: list[float] = field(default_factory=list)  # ms, in timing order
    baseline_traces: list[str] = field(default_factory=list)
    results: list[Measured] = field(default_factory=list)
    seconds: float = 0.0
    jobs: int = 1
    problem: str = ""  # why nothing could be measured
    halted: str = ""  # OVER_BUDGET or CANCELLED when replays were ended before their time
    source: str = "replay"  # "replay", or "script": the graph could not be replayed


def judge(baselines: list[Timing], timed: Timing) -> tuple[str, float, float, float]:
    """(verdict, baseline ms, gain ms, relative threshold) of a candidate's timing
    against the baselines measured around it."""
    medians = [b.compiled_ms for b in baselines]
    base = statistics.median(medians)
    lows = [b.compiled_spread[0] if b.compiled_spread else b.compiled_ms for b in baselines]
    highs = [b.compiled_spread[-1] if b.compiled_spread else b.compiled_ms for b in baselines]
    lo, hi = timed.compiled_spread[:1] or [timed.compiled_ms], \
        timed.compiled_spread[-1:] or [timed.compiled_ms]
    noise = max([(h - low) / 2 / m for low, h, m in zip(lows, highs, medians, strict=True)]
                + [(hi[0] - lo[0]) / 2 / timed.compiled_ms,
                   (max(medians) - min(medians)) / base])
    threshold = max(3 * noise, FLOOR)
    gain = base - timed.compiled_ms
    if gain > threshold * base and hi[0] < min(lows):
        return "win", base, gain, threshold
    if -gain > threshold * base and lo[0] > max(highs):
        return "slower", base, gain, threshold
    return "within noise", base, gain, threshold


def results_changed(baseline: Timing, timed: Timing) -> str:
    """Why the candidate's outputs count as changed ("" when they do not, or when
    either replay could not compare its outputs)."""
    base, cand = baseline.max_abs_diff, timed.max_abs_diff
    if base is None or cand is None or math.isnan(base):  # random inputs may give NaN
        return ""  # outputs in eager too: nothing to compare against
    if not math.isnan(cand) and cand <= max(RESULT_SLACK * base, RESULT_FLOOR):
        return ""
    return (f"outputs differ from eager by up to {cand:.3g}, the baseline's by {base:.3g} "
            f"(over {RESULT_SLACK:g}x)")


def default_jobs(cuda: bool) -> int:
    """Replays compiled side by side: on the GPU half the cores, up to 8; on the CPU 1."""
    return min(8, max(1, (os.cpu_count() or 2) // 2)) if cuda else 1


def plan(count: int) -> list[int | None]:
    """The timing order: None a baseline, i a candidate; every candidate next to a
    baseline (B C0 C1 B C2 C3 B ...)."""
    order: list[int | None] = [None]
    for i in range(count):
        order.append(i)
        if i % 2 == 1 or i == count - 1:
            order.append(None)
    return order


def chosen(candidates: list[Candidate], count: int) -> list[Candidate]:
    """The candidates ``measure`` replays: the best ``count`` a replay can time, settings
    first (few, each one line to apply), then pairs by estimate."""
    worth = [c for c in candidates if c.measurable and c.mode not in UNMEASURED_MODES]
    return sorted(worth, key=lambda c: c.kind != "config")[:count]


def measure(trace: Trace, trace_path: str, graph: Graph, candidates: list[Candidate],
            count: int, *, folder: str | None = None, budget: float = 600,
            jobs: int | None = None,
            on_event: Callable[[str], None] = lambda _s: None,
            stopped: Callable[[], bool] = lambda: False) -> Measurement:
    """Replay the best ``count`` candidates of ``graph`` (pairs that would save no bytes
    and what a replay cannot time left out) and judge each. ``on_event`` hears one line
    per replay started and ended; ``stopped()`` cancels, and so does the end of
    ``budget`` seconds: running replays are killed, what was timed before is kept."""
    cuda = graph.device.startswith("cuda")
    cannot = replay_problems(graph)
    jobs = 1 if cannot else max(1, jobs or default_jobs(cuda))  # scripts take no turns
    out = Path(folder or tempfile.mkdtemp(prefix="fusionviz-advise-")) / f"graph_{graph.index}"
    out.mkdir(parents=True, exist_ok=True)
    result = Measurement(graph.index, "device time" if cuda else "wall time (CPU, noisy)",
                         jobs=jobs)
    skipped = [Measured(c, "not measured", detail=UNMEASURED_MODES[c.mode])
               for c in candidates if c.mode in UNMEASURED_MODES]
    worth = chosen(candidates, count)
    if cannot:
        result.source = "script"
        on_event(f"graph {graph.index} cannot be replayed ({cannot[0]}): each "
                 "measurement runs your script again")
        problem = rerun_problem(trace)
        if problem:
            result.problem = f"cannot be replayed ({cannot[0]}), and {problem}"
            result.results = [*skipped, *(Measured(c, "not measured", detail=result.problem)
                                          for c in worth)]
            return result
    if not worth:
        result.problem = NOTHING_TO_MEASURE
        result.results = skipped
        return result
    order = plan(len(worth))
    start = time.monotonic()
    lock = threading.Lock()
    threads = {"compile_threads": max(1, (os.cpu_count() or 2) // jobs)} if jobs > 1 else {}
    turns = tempfile.mkdtemp(prefix="turns-", dir=out) if jobs > 1 else None
    kept: dict = {}  # the kernel folder the replays share

    def halted() -> bool:
        return stopped() or time.monotonic() - start > budget

    def why_halted() -> str:
        return CANCELLED if stopped() else OVER_BUDGET

    def cancelled() -> None:
        if halted():
            raise Cancelled

    def run(ticket: int) -> tuple[Graph | None, str, str]:
        c = None if order[ticket] is None else worth[order[ticket]]
        label = "baseline" if c is None else c.what
        if halted():
            return None, why_halted(), ""
        with lock:
            on_event(f"[{time.monotonic() - start:5.0f}s] replay {ticket + 1}/{len(order)} "
                     f"started: {label}")
        path = str(out / f"replay_{ticket + 1}.json.gz")
        change = {"config": {**threads, **dict(c.config if c else ())},
                  "mode": c.mode if c else None, "poll": cancelled,
                  "timeout": max(60.0, budget - (time.monotonic() - start) + 60), **kept}
        try:
            if cannot:
                again, failed = rerun(trace, graph, path, whatif=WhatIf(
                    force=c.force, graph=graph.index) if c else None, **change)
            else:
                again, failed = replay(trace, trace_path, graph, path, whatif=WhatIf(
                    force=c.force) if c else None, turns=turns, ticket=ticket, **change)
        except Cancelled:
            return None, why_halted(), path
        with lock:
            said = f"{again.timing.compiled_ms:.3f} ms" if again and again.timing \
                and again.timing.compiled_ms else f"failed ({failed[:80]})"
            on_event(f"[{time.monotonic() - start:5.0f}s] replay {ticket + 1}/{len(order)} "
                     f"ended: {label}: {said}")
        return again, failed, path

    # the same graph compiled again and again: its kernels are compiled once
    with shared_kernels() as kernels, ThreadPoolExecutor(max_workers=jobs) as pool:
        kept["kernel_cache"] = kernels
        futures = [pool.submit(run, t) for t in range(len(order))]
        if turns:
            schedule(turns, range(len(order)), lambda t: futures[t].done(), halted)
        done = [f.result() for f in futures]
    result.seconds = time.monotonic() - start
    result.halted = next((f for _g, f, _p in done if f in (OVER_BUDGET, CANCELLED)), "")
    timed = [(i, g) for i, (g, _f, _p) in enumerate(done)
             if order[i] is None and _timed(g)]
    result.baselines = [g.timing.compiled_ms for _i, g in timed]
    result.baseline_traces = [done[i][2] for i, _g in timed]
    if not timed:
        first = next((f for g, f, _p in done if f), "no baseline was timed")
        result.problem = f"the baseline replay failed or was not timed ({first})"
        result.results = [Measured(c, "not measured", detail=result.problem) for c in worth]
        return result
    for ticket, (again, failed, path) in enumerate(done):
        if order[ticket] is None:
            continue
        c = worth[order[ticket]]
        if again is None and failed in (OVER_BUDGET, CANCELLED):
            result.results.append(Measured(c, "not measured", detail=failed))
            continue
        if not _timed(again):
            result.results.append(Measured(c, "failed", detail=failed or "not timed",
                                           trace=path))
            continue
        near = sorted(timed, key=lambda ig: (abs(ig[0] - ticket), ig[0]))[:2]
        base_graph = near[0][1]
        kernels = (len(base_graph.kernels), len(again.kernels))
        refused = [p for p in c.force if not _together(again, p)]
        if refused:
            result.results.append(Measured(
                c, "not generated", detail="forced, Inductor still did not fuse them: "
                + _refusal(again, refused[0]), trace=path, kernels=kernels))
            continue
        changed = decision_differences(base_graph, again)
        verdict, base_ms, gain, threshold = judge([g.timing for _i, g in near], again.timing)
        wrong = results_changed(base_graph.timing, again.timing)
        detail = wrong or (f"kernels {kernels[0]} -> {kernels[1]}; "
                           + ("changed: " + ", ".join(d.split(":")[0] for d in changed)
                              if changed else "the same decisions"))
        result.results.append(Measured(c, "changed results" if wrong else verdict, base_ms,
                                       again.timing.compiled_ms, gain, threshold, detail,
                                       path, kernels))
    result.results += skipped
    write_comparison(out, graph, result)
    return result


def write_comparison(folder: Path, graph: Graph, m: Measurement) -> Path | None:
    """An experiment folder (``experiment.json``, ``report.md``) of the baseline replay
    and every timed candidate's replay, which the window's comparison view opens
    (variant 0 the baseline, then the candidates in ``m.results`` order)."""
    replays = [r for r in m.results if r.trace and Path(r.trace).is_file()]
    if not m.baseline_traces or not replays:
        return None
    variants = [{"label": "baseline replay", "trace": Path(m.baseline_traces[0]).name}]
    variants += [{"label": f"{r.verdict}: {r.candidate.what}"[:120],
                  "trace": Path(r.trace).name} for r in replays]
    rows = [f"| {r.candidate.what} | {r.verdict} | {gain_text(r)} | {r.detail} |"
            for r in m.results]
    report = "\n".join([
        f"# Measured candidates of graph {graph.index} ({graph.kind})", "",
        f"Baselines ({m.clock}): " + ", ".join(f"{b:.3f} ms" for b in m.baselines), "",
        "| candidate | verdict | gain | detail |", "|---|---|---|---|", *rows, ""])
    (folder / "report.md").write_text(report, encoding="utf-8")
    meta = {"kind": "advise", "script": f"graph {graph.index} ({graph.kind}) replayed",
            "variants": variants, "report": "report.md"}
    path = folder / "experiment.json"
    path.write_text(json.dumps(meta, indent=1), encoding="utf-8")
    return path


def gain_text(r: Measured) -> str:
    """+0.123 ms (+4.5%): what the candidate saves per call (negative: costs)."""
    if r.gain_ms is None or not r.baseline_ms:
        return ""
    return f"{r.gain_ms:+.3f} ms ({100 * r.gain_ms / r.baseline_ms:+.1f}%)"


class Cancelled(Exception):
    """The user stopped the measurement."""


def _together(graph: Graph, pair: tuple[str, str]) -> bool:
    """Did ``graph`` end with both nodes of ``pair`` in one kernel?"""
    return any(pair[0] in g and pair[1] in g for g in graph.final_groups)


def _refusal(graph: Graph, pair: tuple[str, str]) -> str:
    """Inductor's last reason, in ``graph``, for not fusing the groups holding ``pair``."""
    said = "no reason recorded"
    for r in graph.rounds:
        for v in r.verdicts:
            sides = (v.a, v.b)
            if not v.ok and any(pair[0] in x for x in sides) and \
                    any(pair[1] in x for x in sides):
                said = "; ".join(x.text for x in v.reasons)[:200] or said
    return said


def _timed(g: Graph | None) -> bool:
    return g is not None and g.timing is not None and bool(g.timing.compiled_ms)
