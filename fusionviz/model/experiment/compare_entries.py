"""The callables the user compiled (``Trace.entries``), run against run.

For each callable in A and in B: its compiled and eager times (forward, and backward
where it trained; device and wall clock where taken), what moved from A to B, and
each side's speedup over eager. Entries are paired by name and kind, then by order
among those of the same name and kind. The figures and their verdicts are
``eager_explain.explain``'s, by ``eager_figures``'s rules: a change (or a speedup) is
said only where the middle halves of the two sample sets do not overlap, a figure whose
middle half spreads wide is noisy, and a CPU wall figure taken while other processes
kept the cores busy is uncertain.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionviz.model.report.eager_explain import explain
from fusionviz.model.report.eager_figures import Figure, Versus, ratio_text
from fusionviz.model.trace import Entry, Trace

PARTS = ("forward", "backward")
CLOCKS = ("device", "wall")


@dataclass(frozen=True)
class EntryDelta:
    """One compiled callable's forward or backward on one clock, in A and in B."""

    name: str
    kind: str  # module | function
    part: str  # forward | backward
    clock: str  # device | wall
    a: Versus | None  # eager vs compiled in A; None: not in A, or not timed there
    b: Versus | None
    uncertain_a: str = ""  # why A's figures on this clock are uncertain ("" if not)
    uncertain_b: str = ""
    only: str = ""  # "A" or "B" when the callable is in one trace alone

    @property
    def label(self) -> str:
        """``BertModel (module) forward, device``."""
        return f"{self.name} ({self.kind}) {self.part}, {self.clock}"

    @property
    def compiled_change(self) -> str:
        return moved(_side(self.a, "compiled"), _side(self.b, "compiled"))

    @property
    def eager_change(self) -> str:
        return moved(_side(self.a, "eager"), _side(self.b, "eager"))

    def noisy(self) -> list[str]:
        """``["compiled B", …]``: the figures whose samples disagree (``Figure.noisy``)."""
        return [f"{what} {side}" for side, v in (("A", self.a), ("B", self.b)) if v
                for what in ("compiled", "eager") if getattr(v, what).noisy]

    def notes(self) -> str:
        """What to distrust in this row, or why a side is empty."""
        out = [f"only in {self.only}"] if self.only else []
        out += [f"not timed in {side}" for side, v in (("A", self.a), ("B", self.b))
                if v is None and side != _other(self.only)]
        if self.noisy():
            out.append("noisy: " + ", ".join(self.noisy()))
        out += [f"uncertain in {side}: {why}" for side, why in
                (("A", self.uncertain_a), ("B", self.uncertain_b)) if why]
        return "; ".join(out)


def _other(side: str) -> str:
    return {"A": "B", "B": "A"}.get(side, "")


def _side(v: Versus | None, what: str) -> Figure | None:
    return getattr(v, what) if v is not None else None


def moved(a: Figure | None, b: Figure | None) -> str:
    """B's figure against A's: ``+12.5%``, or ``within noise`` where their middle halves
    overlap (the rule ``Versus.verdict`` applies to eager against compiled)."""
    if a is None or b is None or a.median <= 0:
        return ""
    if Versus("", a, b).verdict == "within noise":
        return "within noise"
    return f"{(b.median - a.median) / a.median * 100:+.1f}%"


def speedup_text(v: Versus | None) -> str:
    """``1.36x faster``, ``2.15x slower`` or ``within noise (0.99x)``: compiled against
    eager on one side (``Versus.verdict``)."""
    s = v.speedup if v is not None else None
    if s is None:
        return ""
    if v.verdict == "within noise":
        return f"within noise ({s:.2f}x)"
    return ratio_text(s)


def pair_entries(a: Trace, b: Trace) -> list[tuple[Entry | None, Entry | None]]:
    """A's entries with B's of the same name and kind, the n-th with the n-th; then B's
    that A lacks."""
    def keyed(entries) -> dict:
        seen: dict[tuple[str, str], int] = {}
        out = {}
        for e in entries:
            k = (e.name, e.kind)
            out[(k, seen.get(k, 0))] = e
            seen[k] = seen.get(k, 0) + 1
        return out

    ka, kb = keyed(a.entries), keyed(b.entries)
    return [(ka.get(k), kb.get(k)) for k in [*ka, *(k for k in kb if k not in ka)]]


def entry_deltas(a: Trace, b: Trace) -> tuple[EntryDelta, ...]:
    """Every callable of A and B, each part and clock timed on either side."""
    out = []
    for ea, eb in pair_entries(a, b):
        xa = explain(a, ea) if ea is not None else None
        xb = explain(b, eb) if eb is not None else None
        e = ea or eb
        only = "" if ea and eb else ("A" if ea else "B")
        for part in PARTS:
            for clock in CLOCKS:
                va, vb = (getattr(x, part).get(clock) if x else None for x in (xa, xb))
                if va is None and vb is None:
                    continue
                busy = [x.busy if x and clock == "wall" else "" for x in (xa, xb)]
                out.append(EntryDelta(e.name, e.kind, part, clock, va, vb, *busy, only=only))
    return tuple(out)


def entry_table(deltas, label_a: str = "A", label_b: str = "B"):
    """(headers, rows) of the entries' table: numbers as numbers (None where absent);
    the sides' labels in the headers (the window, whose toolbar names A and B, gives
    ``A`` and ``B``)."""
    a, b = (label if label in ("A", "B") else f"({label})" for label in (label_a, label_b))
    headers = ["callable", "part", "clock", f"compiled ms {a}", f"compiled ms {b}",
               "compiled change", f"eager ms {a}", f"eager ms {b}", "eager change",
               f"vs eager {a}", f"vs eager {b}", "notes"]
    rows = [(f"{d.name} ({d.kind})", d.part, d.clock, _median(d.a, "compiled"),
             _median(d.b, "compiled"), d.compiled_change, _median(d.a, "eager"),
             _median(d.b, "eager"), d.eager_change, speedup_text(d.a), speedup_text(d.b),
             d.notes()) for d in deltas]
    return headers, rows


def _median(v: Versus | None, what: str) -> float | None:
    f = _side(v, what)
    return f.median if f is not None else None


def entry_metric_rows(deltas) -> list[tuple[str, object, object, str]]:
    """The entries in the metrics table's shape (metric, A, B, change), three rows each:
    compiled ms, eager ms, speedup vs eager; notes follow the change, after ``;``."""
    rows = []
    for d in deltas:
        notes = d.notes()
        tail = f"; {notes}" if notes else ""
        verdicts = [v.verdict if v else "" for v in (d.a, d.b)]
        rows += [
            (f"{d.label}: compiled (ms)", _median(d.a, "compiled"), _median(d.b, "compiled"),
             d.compiled_change + tail),
            (f"{d.label}: eager (ms)", _median(d.a, "eager"), _median(d.b, "eager"),
             d.eager_change + tail),
            (f"{d.label}: speedup vs eager", d.a.speedup if d.a else None,
             d.b.speedup if d.b else None,
             "" if verdicts[0] == verdicts[1] else " -> ".join(verdicts)),
        ]
    return rows


def headline(d: EntryDelta, label_a: str = "A", label_b: str = "B") -> str:
    """``BertModel forward, device: compiled 2.949 → 2.951 ms (within noise); vs eager:
    within noise (0.98x) → 1.12x faster``."""
    ca, cb = _median(d.a, "compiled"), _median(d.b, "compiled")
    if ca is None or cb is None:
        side = label_a if d.a else label_b
        return f"{d.name} {d.part}, {d.clock}: only timed in {side}"
    return (f"{d.name} {d.part}, {d.clock}: compiled {ca:.3f} → {cb:.3f} ms "
            f"({d.compiled_change}); vs eager: {speedup_text(d.a)} → {speedup_text(d.b)}")
