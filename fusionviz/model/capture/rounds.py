"""Record one ``fuse_nodes_once`` round: candidates, verdicts, benchmarks, fusions.

The hooks feed raw events (node objects, booleans, reasons) into a ``RoundRecorder``;
``finish`` turns them into a ``trace.Round``. Attempts are matched to candidates in
score order, because Inductor tries candidates in that order and re-checks each pair
through the nodes they have been fused into since.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

from fusionviz.model.capture.nodes import members
from fusionviz.model.trace import (
    BenchKernel,
    Benchmark,
    Candidate,
    Fusion,
    Group,
    Reason,
    Round,
    Verdict,
)
from fusionviz.model.tracefile.io import json_value

MAX_SCAN_VERDICTS = 2000  # rejected scan verdicts kept per round; the rest are counted


@dataclass
class ReasonSink:
    """Collects WhyNoFuse reasons and silent False checks during one call."""

    reasons: list[Reason] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    asked: tuple[str, str] = ("", "")  # the pair's names, in the order asked


@dataclass
class BenchRecord:
    """What one ``speedup_by_fusion`` call timed (filled as it happens)."""

    kernels: list[BenchKernel] = field(default_factory=list)
    sink: ReasonSink = field(default_factory=ReasonSink)
    decision: bool | None = None
    deferred: bool = False
    template: bool = False  # a template epilogue/prologue: each timing is a fused choice

    def to_benchmark(self) -> Benchmark:
        by_role = {k.role: k.ms for k in self.kernels}
        ms_a, ms_b, ms_f = by_role.get("a"), by_role.get("b"), by_role.get("fused")
        speedup = (ms_a + ms_b) / ms_f if ms_a and ms_b and ms_f else None
        spill = next(
            (r.text.rsplit(" ", 2)[-2] for r in self.sink.reasons if "spilling" in r.text),
            "",
        )
        return Benchmark(
            fuse=self.decision,
            ms_a=ms_a,
            ms_b=ms_b,
            ms_fused=ms_f,
            speedup=speedup,
            spill=spill,
            deferred=self.deferred,
            kernels=tuple(self.kernels),
        )


@dataclass
class Attempt:
    """One ``can_fuse`` call made while Inductor walked the ranked candidates."""

    a: Group
    b: Group
    ids: tuple[int, int]
    ok: bool
    reasons: tuple[Reason, ...]
    cycle: bool = False
    bench: BenchRecord | None = None
    fused: bool = False

    def outcome(self) -> str:
        if not self.ok:
            return "stale" if self.a == self.b else "rejected"
        if self.cycle:
            return "cycle"
        if self.fused:
            return "fused"
        if self.bench is not None:
            if self.bench.decision is None:
                return "pending"
            if self.bench.to_benchmark().spill:
                return "spill"
            if self.bench.kernels and not self.bench.decision:
                return "benchmark_slower"
        return "rejected"


def reasons_for(ok: bool, sink: ReasonSink, same: bool) -> tuple[Reason, ...]:
    """The recorded reasons, or the silent check that returned False."""
    if ok or sink.reasons:
        return tuple(dict.fromkeys(sink.reasons))  # the same check can explain twice
    if same:
        return (Reason("both sides are already one fused node", "identity"),)
    if sink.checks:
        check = sink.checks[0]  # innermost check returns first
        return (Reason(f"{check} returned False (no reason logged)", check),)
    return (Reason("rejected without a logged reason", "can_fuse"),)


def score_fields(key: object) -> dict:
    """Inductor's score object (tuple, NamedTuple or FusionScore) as a flat dict."""
    if dataclasses.is_dataclass(key):
        return {k: json_value(v) for k, v in dataclasses.asdict(key).items()}
    if hasattr(key, "_asdict"):
        return {k: json_value(v) for k, v in key._asdict().items()}
    if isinstance(key, tuple):
        return {f"score{i}": json_value(v) for i, v in enumerate(key)}
    return {"score": json_value(key)}


class RoundRecorder:
    """Accumulates one round's raw events; ``finish`` builds the Round."""

    def __init__(self, index: int, reorder: bool, nodes: list) -> None:
        self.index, self.reorder = index, reorder
        self.t0 = time.perf_counter()
        self.groups_before = tuple(members(n) for n in nodes)
        self.scanning = True
        self.scores: dict[tuple[int, int], dict] = {}
        self.candidates: list[tuple[Group, Group, dict, bool]] = []
        self.verdicts: list[Verdict] = []
        self.verdicts_dropped = 0
        self.attempts: list[Attempt] = []
        self.fusions: list[Fusion] = []
        self.forced: set[tuple[int, int]] = set()  # candidate pairs put first by a rule

    def on_score(self, n1, n2, key) -> None:
        self.scores[(id(n1), id(n2))] = score_fields(key)

    def on_candidates(self, pairs) -> None:
        self.candidates = [
            (members(a), members(b), self.scores.get((id(a), id(b)), {}),
             (id(a), id(b)) in self.forced)
            for a, b in pairs
        ]
        self.scanning = False

    def on_can_fuse(self, n1, n2, ok: bool, sink: ReasonSink) -> None:
        if self.scanning:
            if ok:
                return
            if len(self.verdicts) >= MAX_SCAN_VERDICTS:
                self.verdicts_dropped += 1
                return
            reasons = reasons_for(ok, sink, n1 is n2)
            self.verdicts.append(Verdict(members(n1), members(n2), False, reasons))
            return
        pending = self.attempt_for(n1, n2)
        if pending and pending.bench and pending.bench.deferred and pending.bench.decision is None:
            # Inductor re-checks a pending pair before running its benchmark
            # (fuse_if_speedup): the same attempt, not a new one.
            pending.ok = pending.ok and ok
            pending.reasons += reasons_for(ok, sink, n1 is n2) if not ok else ()
            return
        a, b = members(n1), members(n2)
        self.attempts.append(
            Attempt(a, b, (id(n1), id(n2)), ok, reasons_for(ok, sink, n1 is n2))
        )

    def attempt_for(self, n1, n2) -> Attempt | None:
        key = (id(n1), id(n2))
        return next((a for a in reversed(self.attempts) if a.ids == key), None)

    def on_fused(self, n1, n2, fused) -> None:
        attempt = self.attempt_for(n1, n2)
        if attempt is not None:
            attempt.fused = True
        self.fusions.append(
            Fusion(members(n1), members(n2), _bytes(n1), _bytes(n2), _bytes(fused))
        )

    def finish(self, nodes=None) -> Round:
        """The Round; ``nodes=None`` when Inductor raised mid-round: the groups after
        are then the groups before with the fusions recorded so far applied."""
        after = tuple(members(n) for n in nodes) if nodes is not None else self._applied()
        return Round(
            index=self.index,
            reorder=self.reorder,
            wall_s=time.perf_counter() - self.t0,
            groups_before=self.groups_before,
            groups_after=after,
            candidates=self._ledger(),
            verdicts=tuple(self.verdicts),
            fusions=tuple(self.fusions),
            verdicts_dropped=self.verdicts_dropped,
        )

    def _applied(self) -> tuple[Group, ...]:
        groups = list(self.groups_before)
        for f in self.fusions:
            a = next((g for g in groups if set(f.a) <= set(g)), None)
            b = next((g for g in groups if set(f.b) <= set(g)), None)
            if a is not None and b is not None and a is not b:
                groups[groups.index(a)] = a + b
                groups.remove(b)
        return tuple(groups)

    def _ledger(self) -> tuple[Candidate, ...]:
        """Match attempts to candidates in order. Inductor tries the candidates in
        score order, so each candidate's attempt comes after the previous one's; can_fuse
        calls Inductor makes for its own purposes in between are passed over."""
        saved = {(f.a, f.b): f.bytes_saved for f in self.fusions}
        out = []
        start = 0
        for rank, (a, b, score, forced) in enumerate(self.candidates):
            i = next((j for j in range(start, len(self.attempts))
                      if _covers(self.attempts[j].a, a) and _covers(self.attempts[j].b, b)), None)
            if i is None:
                out.append(Candidate(rank, a, b, score, outcome="skipped", forced=forced))
                continue
            att, start = self.attempts[i], i + 1
            out.append(
                Candidate(
                    rank,
                    a,
                    b,
                    score,
                    outcome=att.outcome(),
                    reasons=att.reasons + _bench_reasons(att),
                    benchmark=att.bench.to_benchmark() if att.bench else None,
                    bytes_saved=saved.get((att.a, att.b)) if att.fused else None,
                    forced=forced,
                    tried=(att.a, att.b) if (att.a, att.b) != (a, b) else (),
                )
            )
        return tuple(out)


def _bench_reasons(att: Attempt) -> tuple[Reason, ...]:
    if not att.bench:
        return ()
    out = tuple(att.bench.sink.reasons)
    if att.bench.decision is False and not out and not att.bench.kernels:
        out += (Reason("speedup_by_fusion said no without timing anything (e.g. a template "
                       "epilogue it does not benchmark, or a layout conflict)",
                       "speedup_by_fusion"),)
    if att.bench.decision and att.ok and not att.fused and not att.cycle:
        out += (Reason("the benchmark favoured fusing, but the pair was not fused "
                       "(Inductor dropped it after the deferred benchmark)", "speedup_by_fusion"),)
    return out


def _covers(big: Group, small: Group) -> bool:
    return set(small) <= set(big)


def _bytes(snode) -> int:
    try:
        return int(snode.get_read_write_buffers_sizes())
    except Exception:  # noqa: BLE001
        return 0
