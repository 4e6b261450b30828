"""Whether a replay took the captured graph's decisions: the same pre-fusion nodes,
candidates in the same order with the same outcomes, the same verdicts and fusions,
round by round, and the same kernels over the same nodes."""

from __future__ import annotations

from fusionviz.model.trace import Graph


def decision_differences(captured: Graph, replayed: Graph) -> list[str]:
    """One line per kind of decision that differs ([] when the replay matches)."""
    sides = {
        "pre-fusion nodes": lambda g: [(n.name, n.category) for n in g.nodes],
        "rounds": lambda g: len(g.rounds),
        "candidates (pair, outcome), in score order": lambda g: [
            (r.index, c.a, c.b, c.outcome) for r in g.rounds for c in r.candidates],
        "verdicts": lambda g: [(r.index, v.a, v.b, v.ok) for r in g.rounds for v in r.verdicts],
        "fusions": lambda g: [(r.index, f.a, f.b) for r in g.rounds for f in r.fusions],
        "final groups": lambda g: list(g.final_groups),
        "kernels (kind, nodes)": lambda g: [(k.kind, k.nodes) for k in g.kernels],
    }
    out = []
    for what, of in sides.items():
        a, b = of(captured), of(replayed)
        if a != b:
            out.append(f"{what}: {_first_difference(a, b)}")
    return out


def decision_counts(graph: Graph) -> str:
    return (f"{len(graph.nodes)} nodes, {len(graph.rounds)} rounds, "
            f"{sum(len(r.candidates) for r in graph.rounds)} candidates, "
            f"{sum(len(r.verdicts) for r in graph.rounds)} verdicts, "
            f"{sum(len(r.fusions) for r in graph.rounds)} fusions, {len(graph.kernels)} kernels")


def _first_difference(a, b) -> str:
    if not isinstance(a, list):
        return f"{a} captured, {b} replayed"
    for i, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return f"#{i + 1}: {str(x)[:120]} captured, {str(y)[:120]} replayed"
    return f"{len(a)} captured, {len(b)} replayed"


def time_line(captured: Graph, replayed: Graph) -> str:
    """The replay's time per call beside the capture's on the same clock ("" when the
    replay was not timed): device time on the GPU, wall time on the CPU (noisy)."""
    a, b = captured.timing, replayed.timing
    if b is None or not b.compiled_ms:
        return ""
    clock = "device" if b.compiled_device_ms else "wall (CPU: noisy, see its spread)"
    spread = ("" if not b.compiled_spread else
              f", spread {b.compiled_spread[0]:.3f}–{b.compiled_spread[-1]:.3f}")
    head = f"time per call ({clock}): {b.compiled_ms:.3f} ms replayed{spread}"
    if a is None or not a.compiled_ms or bool(a.compiled_device_ms) != bool(b.compiled_device_ms):
        return head + " (the capture has no time on this clock)"
    return f"{head}, {a.compiled_ms:.3f} ms captured ({b.compiled_ms / a.compiled_ms:.2f}x)"
