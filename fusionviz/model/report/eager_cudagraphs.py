"""The CUDA graphs what-if of one entry (``--what-if reduce-overhead``), as measured.

The capture compiled the user's callable again with CUDA graphs on and timed it as a
third side, interleaved with the eager and compiled calls (``Entry.cudagraphs_*``).
Here: each side and clock against the callable as the user compiled it (a ``Versus``
whose "eager" slot holds the compiled figure, so its verdict and noise rules are the
same), the step's total, and the lines, budget row and JSON that say it.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionviz.model.report.eager_figures import (
    Versus,
    ratio_text,
    step_medians,
    versus_clocks,
)
from fusionviz.model.trace import Entry

ALREADY = ("it already replays CUDA graphs (mode=\"reduce-overhead\"): the host time "
           "left is Python around the call, guards, the copies of inputs into the graphs' "
           "static buffers, and eager code between graphs (graph breaks): look for graph "
           "breaks and recompiles first")
ASK = ("measure it: fusionviz capture SCRIPT --what-if reduce-overhead (or the Measure CUDA graphs "
       "button of the Compiled vs eager pane) times your callable compiled again with "
       "CUDA graphs beside eager and as compiled")


@dataclass(frozen=True)
class Graphed:
    """An entry's CUDA graphs figures against the callable as compiled."""

    forward: dict[str, Versus]  # clock -> compiled (eager slot) vs CUDA graphs
    backward: dict[str, Versus]
    step: dict[str, tuple[float, float]]  # clock -> (compiled ms, CUDA graphs ms)
    note: str

    def verdict(self, clock: str) -> str:
        """faster | slower | within noise, the step on ``clock`` (every side must agree
        for a speedup to be said)."""
        sides = [vs[clock] for vs in (self.forward, self.backward) if clock in vs]
        verdicts = {v.verdict for v in sides}
        if not sides or "within noise" in verdicts or len(verdicts) > 1:
            return "within noise"
        return verdicts.pop()

    def text(self, clock: str, eager_ms: float | None = None) -> str:
        """``0.412 ms wall per step with CUDA graphs, against 1.913 ms as compiled:
        4.64x faster (2.30 ms eager: 5.58x)``."""
        compiled, graphed = self.step[clock]
        verdict = self.verdict(clock)
        how = "within noise" if verdict == "within noise" else ratio_text(compiled / graphed)
        eager = (f" ({eager_ms:.3f} ms eager: {eager_ms / graphed:.2f}x)"
                 if eager_ms and graphed > 0 else "")
        return (f"{graphed:.3f} ms {clock} per step with CUDA graphs, against {compiled:.3f} "
                f"ms as compiled: {how}{eager}")


def graphed(entry: Entry) -> Graphed | None:
    """The entry's CUDA graphs figures; None where none was measured (see its
    ``cudagraphs_note`` for why)."""
    fwd = versus_clocks(entry.compiled_forward, entry.cudagraphs_forward)
    if not fwd:
        return None
    bwd = versus_clocks(entry.compiled_backward, entry.cudagraphs_backward)
    step = step_medians(fwd, bwd, need_backward=entry.grad
                        and entry.compiled_backward is not None)
    return Graphed(fwd, bwd, step, entry.cudagraphs_note) if step else None


def fix_text(entry: Entry, eager_wall_ms: float | None) -> str:
    """The launch-bound finding's fix: the measured figure where there is one, else
    how to measure it (and why it was not, when it was asked for)."""
    if entry.compiled_cudagraphs:
        return ALREADY
    g = graphed(entry)
    if g is not None and "wall" in g.step:
        return "CUDA graphs, measured: " + g.text("wall", eager_wall_ms) + "."
    why = f" (asked for, not measured: {entry.cudagraphs_note})" if entry.cudagraphs_note else ""
    return ("CUDA graphs: torch.compile(..., mode=\"reduce-overhead\") replays the whole graph "
            f"in one launch; {ASK}{why}.")


def budget_rows(entry: Entry, eager_step: dict) -> list[tuple[str, str]]:
    g = graphed(entry)
    if g is None:
        return ([("CUDA graphs (what-if)", f"not measured: {entry.cudagraphs_note}")]
                if entry.cudagraphs_note else [])
    rows = [(f"CUDA graphs (what-if, {clock})",
             g.text(clock, eager_step.get(clock, (None, None))[0])) for clock in g.step]
    if g.note:
        rows.append(("CUDA graphs (what-if)", g.note))
    return rows


def lines(entry: Entry) -> list[str]:
    """Per side and clock, for ``fusionviz summary``."""
    g = graphed(entry)
    if g is None:
        return []
    out = []
    for side, vs in (("forward", g.forward), ("backward", g.backward)):
        for clock, v in vs.items():
            out.append(f"  {side:8} {clock:6} with CUDA graphs {v.compiled.text()}: {v.how} "
                       "than as compiled")
    return out


def as_json(entry: Entry, figure_json) -> dict | None:
    """The ``cudagraphs`` object of a ``query --json`` eager entry (None: not asked)."""
    g = graphed(entry)
    if g is None:
        return {"measured": False, "note": entry.cudagraphs_note} if entry.cudagraphs_note \
            else None

    def sides(vs: dict[str, Versus]) -> dict:
        return {clock: {"cudagraphs": figure_json(v.compiled), "compiled": figure_json(v.eager),
                        "speedup": v.speedup, "verdict": v.verdict}
                for clock, v in vs.items()}

    return {"measured": True, "note": g.note, "forward": sides(g.forward),
            "backward": sides(g.backward),
            "step": {clock: {"compiled_ms": c, "cudagraphs_ms": x, "verdict": g.verdict(clock)}
                     for clock, (c, x) in g.step.items()}}
