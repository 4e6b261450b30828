"""Verifying the advisor's best candidates by measurement (#20, item 3): each is
replayed and timed between two baseline replays of the same graph, and counts as a
win only beyond the noise.

The noise of a run is the largest half-range (max − min) / 2 of any of its timings,
relative to its median, and the baselines' disagreement with each other; a
difference counts only when it is over ``max(3 × noise, 1%)`` and the candidate's
spread does not overlap the baselines' (Inductor-Rewrite-Blame's threshold, in
``research/advisor.md``). Times are per call of the graph, on the clock the capture
uses there (device time on the GPU, wall time on the CPU).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from fusionviz.model.advisor.candidates import Candidate
from fusionviz.model.trace import Timing

FLOOR = 0.01  # no difference under 1% counts


@dataclass(frozen=True)
class Measured:
    candidate: Candidate
    verdict: str  # win | slower | within noise | no change | failed
    baseline_ms: float | None = None
    ms: float | None = None
    gain_ms: float | None = None  # baseline - candidate (> 0: faster)
    threshold: float | None = None  # the relative difference that would count
    detail: str = ""  # why it failed, or what changed in the decisions


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
