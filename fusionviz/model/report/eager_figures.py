"""Robust figures from timing samples, and the eager-vs-compiled verdict of one side.

A median of samples taken while other work shares the cores can still be far off
(compile workers, spinning OpenMP threads): each figure keeps its lower quartile
(what the call costs when nothing interferes) beside the median, and is marked noisy
when its middle half spreads more than ``NOISY`` of the median. A speedup is said
only where the two sides' middle halves do not overlap; otherwise "within noise".
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

NOISY = 0.25  # (q3 - q1) / median above this: the samples disagree


@dataclass(frozen=True)
class Figure:
    """One side's time per call, from its samples."""

    median: float
    q1: float  # lower quartile
    q3: float
    low: float  # min
    high: float  # max
    n: int

    @property
    def noisy(self) -> bool:
        return self.n < 3 or (self.q3 - self.q1) > NOISY * self.median

    def text(self) -> str:
        """``0.131 ms (q1 0.125, 20 samples)``, with ``noisy`` where it is."""
        if self.n == 1:
            return f"{self.median:.3f} ms"
        noisy = f", noisy: middle half {self.q1:.3f}-{self.q3:.3f}" if self.noisy else ""
        return f"{self.median:.3f} ms (q1 {self.q1:.3f}, {self.n} samples{noisy})"


def figure(samples) -> Figure | None:
    values = sorted(float(v) for v in samples or ())
    if not values:
        return None
    if len(values) == 1:
        v = values[0]
        return Figure(v, v, v, v, v, 1)
    q1, _, q3 = statistics.quantiles(values, n=4, method="inclusive")
    return Figure(statistics.median(values), q1, q3, values[0], values[-1], len(values))


@dataclass(frozen=True)
class Versus:
    """Eager against compiled on one clock (wall or device) for one side."""

    clock: str  # "wall" | "device"
    eager: Figure
    compiled: Figure

    @property
    def speedup(self) -> float | None:
        return self.eager.median / self.compiled.median if self.compiled.median > 0 else None

    @property
    def verdict(self) -> str:
        """faster | slower | within noise."""
        e, c = self.eager, self.compiled
        if e.n > 1 and c.n > 1 and not (c.q3 < e.q1 or c.q1 > e.q3):
            return "within noise"
        return "faster" if c.median < e.median else "slower"

    @property
    def how(self) -> str:
        """``within noise``, ``1.36x faster`` or ``2.15x slower`` (``?``: no speedup)."""
        if self.verdict == "within noise":
            return "within noise"
        return ratio_text(self.speedup) if self.speedup else "?"

    def text(self) -> str:
        """``compiled 6.42 ms vs eager 2.98 ms device: 2.15x slower``."""
        return (f"compiled {self.compiled.median:.3f} ms vs eager {self.eager.median:.3f} ms "
                f"{self.clock}: {self.how}")


def ratio_text(ratio: float) -> str:
    """``1.36x faster`` or ``2.15x slower``: the time before over the time after."""
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def step_medians(fwd: dict[str, Versus], bwd: dict[str, Versus], *,
                 need_backward: bool = False) -> dict[str, tuple[float, float]]:
    """clock -> (eager, compiled) medians of a step: the forward's plus the backward's
    where it was timed on that clock (with ``need_backward``, a clock without it is left
    out: a step without its backward would not compare)."""
    out = {}
    for clock, v in fwd.items():
        b = bwd.get(clock)
        if b is None and need_backward:
            continue
        out[clock] = (v.eager.median + (b.eager.median if b else 0.0),
                      v.compiled.median + (b.compiled.median if b else 0.0))
    return out


def versus(clock: str, eager_samples, compiled_samples) -> Versus | None:
    e, c = figure(eager_samples), figure(compiled_samples)
    return Versus(clock, e, c) if e and c else None


def versus_clocks(eager, compiled) -> dict[str, Versus]:
    """clock (device, wall) -> ``Versus`` of two ``Samples`` where both have samples."""
    out = {}
    for clock in ("device", "wall"):
        v = versus(clock, getattr(eager, clock, ()), getattr(compiled, clock, ()))
        if v is not None:
            out[clock] = v
    return out
