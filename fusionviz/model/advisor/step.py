"""The whole step (#20, item 4): each measured change, with what it did to every graph
it was measured on, added up.

A setting (a ``torch._inductor.config`` line, a mode) applies to every graph one
``torch.compile`` makes: its step gain is what it won on each graph, less what it lost
where it was slower (applying it would apply it there too). A forced pair belongs to one
graph. A gain counts only where its graph's measurement called it a win; "within noise"
counts as nothing. Two changes were never measured together, so their gains are not
added: the step's advice is the best single change.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from fusionviz.model.advisor.measure import Measured, Measurement


@dataclass(frozen=True)
class StepChange:
    what: str
    apply: str
    on: tuple[tuple[int, Measured], ...]  # (graph index, its result), by graph

    @property
    def gain_ms(self) -> float:
        """Won on the graphs where it was a win."""
        return sum(r.gain_ms for _i, r in self.on if r.verdict == "win")

    @property
    def lost_ms(self) -> float:
        """Lost on the graphs where it was slower."""
        return sum(-r.gain_ms for _i, r in self.on if r.verdict == "slower")

    @property
    def net_ms(self) -> float:
        return self.gain_ms - self.lost_ms

    def verdicts(self) -> str:
        """Each graph's verdict, e.g. "graph 0: win +0.425 ms; graph 1: within noise"."""
        return "; ".join(f"graph {i}: {r.verdict}" + (f" {r.gain_ms:+.3f} ms" if r.verdict in
                                                     ("win", "slower") else "")
                         for i, r in self.on)


def step_changes(measured: Mapping[int, Measurement]) -> list[StepChange]:
    """Every change measured on any graph, the best for the step first (then by name)."""
    found: dict[tuple, tuple[str, str, list[tuple[int, Measured]]]] = {}
    for index in sorted(measured):
        for r in measured[index].results:
            c = r.candidate
            key = c.try_args if c.kind == "config" else (index, *c.try_args)
            what = c.what if c.kind == "config" else f"graph {index}: {c.what}"
            found.setdefault(key, (what, c.apply, []))[2].append((index, r))
    changes = [StepChange(what, apply, tuple(on)) for what, apply, on in found.values()]
    return sorted(changes, key=lambda s: (-s.net_ms, s.what))


def step_ms(measured: Mapping[int, Measurement]) -> float:
    """The measured graphs' time per call together (each graph's baseline replays'
    median): what a step's gain is a part of."""
    return sum(statistics.median(m.baselines) for m in measured.values() if m.baselines)


def step_line(measured: Mapping[int, Measurement]) -> str:
    """One line on the whole step: the best change and what it saves."""
    changes = [s for s in step_changes(measured) if s.net_ms > 0]
    graphs = sum(bool(m.baselines) for m in measured.values())
    if not changes:
        return f"no change won on the {graphs} graph(s) measured"
    best, total = changes[0], step_ms(measured)
    share = f" ({100 * best.net_ms / total:.1f}% of their {total:.3f} ms)" if total else ""
    return (f"the best change over the {graphs} graph(s) measured is {best.what}: "
            f"{best.net_ms:.3f} ms per step{share}; {best.verdicts()}")
