"""The fusion advisor's candidates, ranked by estimate (#20, item 2): what in one
captured graph may be worth changing, before anything is measured.

Pairs: every pair Inductor refused (a ledger candidate rejected, timed slower, vetoed
for register spills or a cycle, or a scan verdict that said no), estimated by the
bytes fusing would save: a buffer one side writes and the other reads is written and
read once less (only read once less when something else reads it too), a buffer both
read is read once less (nothing for a pair Inductor found no shared data in). Time: those bytes at the GPU's peak bandwidth (the signal
Inductor's ``score_fusion_memory`` uses), an upper bound. Extern calls, collectives
and no-ops are left out: Inductor never fuses them.

Configurations: those that apply to the graph at hand (CUDA graphs for a graph whose
wall time per call is well above its device time, ``benchmark_fusion`` where it is off
and refusals were close calls, ``max_autotune`` where library matmuls take a large
share of the time, ``combo_kernels`` for many tiny kernels), with an estimate where
the trace holds one.

Each candidate says how to try it (``fusionviz replay`` with a what-if) and how to
apply it. Nothing here is measured: item 3 verifies the best few by replay.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from fusionviz.model.trace import Graph, Group, Trace
from fusionviz.model.whatif import Pair

UNFUSABLE = frozenset(("extern", "collective", "nop"))
# refusals a forced pair cannot get past: Inductor checks them for correctness (fusing
# past a node in between would make a cycle), not as heuristics a rule may skip; and
# iteration spaces that do not match (forced on an H100, 6 of 6 such pairs of GPT-2,
# Llama and ResNet-50 were still not fused: benchmarks/results/advisor_measured_h100.txt)
STRUCTURAL = ("intermediate nodes between", "will create cycle", "would create a cycle",
              "numel/rnumel mismatch")
REFUSED = ("rejected", "benchmark_slower", "spill", "cycle")
LAUNCH_BOUND = 2.0  # wall per call over device time per call: launches dominate
MATMUL_SHARE = 0.2  # library matmuls' share of kernel time worth autotuning
GENERATED_SHARE = 0.2  # generated kernels' share of kernel time worth tuning
TINY_KERNELS, TINY_MS = 40, 0.01  # that many kernels under this many ms: combo kernels
LARGE_BUFFER = 1 << 20  # never-candidates: pairs sharing at least this many bytes
NEVER_MAX = 50  # never-candidates listed per graph, the largest first
# refusal reasons a setting decides: (what the reason says, setting, value to try, why)
SETTING_REASONS = (
    ("score_fusion_memory_threshold", "score_fusion_memory_threshold", 1,
     "fusions refused because they share fewer bytes than this threshold"),
    ("exceeds max fusion", "max_fusion_size", 128,
     "fusions refused for holding more than max_fusion_size nodes"),
    ("memory deps did not match", "loop_ordering_after_fusion", True,
     "fusions refused because the two loops index memory differently, which loop "
     "reordering after fusion can align"),
)


@dataclass(frozen=True)
class Candidate:
    """One thing worth trying on a graph."""

    kind: str  # "pair" | "config"
    what: str  # op3 + op7, or benchmark_fusion=True
    why: str  # Inductor's reason, or what in the graph makes the setting apply
    bytes_saved: int | None  # pairs: the estimate's bytes
    ms: float | None  # estimated gain per graph call (an upper bound), None: unknown
    apply: str  # how a user would apply it
    nodes: tuple[str, ...] = ()  # a pair's pre-fusion nodes (to show it on the graph)
    # the change a replay tries: a forced pair, Inductor settings, a compile mode
    force: tuple[Pair, ...] = ()
    config: tuple[tuple[str, bool | int | float | str], ...] = ()
    mode: str | None = None
    forceable: bool = True  # False: Inductor refuses the pair even when forced

    @property
    def measurable(self) -> bool:
        """Worth a replay: a setting, or a pair a rule can force that would save bytes."""
        return self.kind == "config" or (self.forceable and self.bytes_saved != 0)

    @property
    def try_args(self) -> tuple[str, ...]:
        """The ``fusionviz replay`` arguments that try it."""
        args: list[str] = []
        for a, b in self.force:
            args += ["--force", f"{a},{b}"]
        for key, value in self.config:
            args += ["--config", f"{key}={value!r}" if isinstance(value, str)
                     else f"{key}={value}"]
        return (*args, *(("--mode", self.mode) if self.mode else ()))


def rank(trace: Trace, graph: Graph) -> list[Candidate]:
    """Every candidate of ``graph``, the largest estimate first (unknown ones last)."""
    gb_s = trace.env.get("peak_dram_gb_s") if graph.device.startswith("cuda") else None
    found = _pairs(graph, gb_s if isinstance(gb_s, int | float) and gb_s > 0 else None)
    found += _configs(trace, graph)
    ordered = sorted(found, key=lambda c: (c.ms is None, -(c.ms or 0), -(c.bytes_saved or 0),
                                           c.what))
    unique: dict[tuple[str, ...], Candidate] = {}  # the same rule from later rounds:
    for c in ordered:  # tried once, where it ranks best
        unique.setdefault(c.try_args, c)
    return list(unique.values())


def _pairs(graph: Graph, gb_s: float | None) -> list[Candidate]:
    category = {n.name: n.category for n in graph.nodes}
    writes = {n.name: {a.buffer: a.bytes for a in n.writes} for n in graph.nodes}
    reads = {n.name: {a.buffer: a.bytes for a in n.reads} for n in graph.nodes}
    readers: dict[str, set[str]] = defaultdict(set)
    for name, bufs in reads.items():
        for buf in bufs:
            readers[buf].add(name)
    seen: dict[tuple[Group, Group], tuple[str, str]] = {}
    for r in graph.rounds:
        for c in r.candidates:
            if c.outcome in REFUSED:
                seen.setdefault((c.a, c.b), (c.outcome, _reason(c.reasons)))
        for v in r.verdicts:
            if not v.ok:
                seen.setdefault((v.a, v.b), ("rejected", _reason(v.reasons)))
    kernel_of = {n: i for i, group in enumerate(graph.final_groups) for n in group}
    out = []
    for (a, b), (outcome, reason) in seen.items():
        if any(category.get(m, "other") in UNFUSABLE for m in (*a, *b)):
            continue
        if kernel_of.get(a[0], -1) == kernel_of.get(b[0], -2):
            continue  # refused once, fused in the end by another way: nothing to try
        # Inductor found no memory access the two share: fusing them saves nothing
        saved = 0 if "no shared data" in reason else _bytes_saved(a, b, writes, reads,
                                                                   readers)
        ms = saved / (gb_s * 1e6) if gb_s and saved else None
        forceable = outcome != "cycle" and not any(s in reason for s in STRUCTURAL)
        out.append(Candidate(
            kind="pair", what=f"{_label(a)} with {_label(b)}",
            why=f"{outcome}: {reason}" if reason else outcome, bytes_saved=saved, ms=ms,
            # a rule names one node of each side: it joins the groups that hold them
            force=((a[0], b[0]),),
            apply=_apply_pair(outcome, reason, forceable), nodes=(*a, *b),
            forceable=forceable))
    return out + _never_candidates(graph, seen, kernel_of, category, writes, reads, readers,
                                   gb_s)


def _never_candidates(graph, seen, kernel_of, category, writes, reads, readers,
                      gb_s) -> list[Candidate]:
    """Pairs Inductor never asked about although one writes a large buffer the other
    reads (a producer and a consumer ``score_fusion`` never ranked high enough), in
    separate kernels in the end; the NEVER_MAX with the most bytes."""
    asked = {(x, y) for a, b in seen for x in a for y in b}
    found: dict[tuple[str, str], tuple[str, int]] = {}
    for producer, bufs in writes.items():
        for buf, size in bufs.items():
            if size < LARGE_BUFFER:
                continue
            for consumer in readers.get(buf, ()):
                pair = (producer, consumer)
                if consumer == producer or pair in asked or pair[::-1] in asked \
                        or kernel_of.get(producer, -1) == kernel_of.get(consumer, -2) \
                        or {category.get(producer), category.get(consumer)} & UNFUSABLE:
                    continue
                if size > found.get(pair, ("", 0))[1]:
                    found[pair] = (buf, size)
    best = sorted(found.items(), key=lambda kv: -kv[1][1])[:NEVER_MAX]
    out = []
    for (a, b), (buf, size) in best:
        saved = _bytes_saved((a,), (b,), writes, reads, readers)
        out.append(Candidate(
            kind="pair", what=f"{a} with {b}",
            why=f"never a candidate: {a} writes {buf} ({size:,} bytes), which {b} reads",
            bytes_saved=saved, ms=saved / (gb_s * 1e6) if gb_s and saved else None,
            apply="not reachable by configuration: Inductor never ranked the pair; a "
            "forced replay says whether it can fuse them", nodes=(a, b), force=((a, b),)))
    return out


def _bytes_saved(a: Group, b: Group, writes, reads, readers) -> int:
    """Bytes one kernel instead of two would not move: a buffer one side writes and the
    other reads (its write too when nothing outside the pair reads it), a buffer both
    sides read."""
    inside = set(a) | set(b)
    saved = 0
    for first, second in ((a, b), (b, a)):
        for buf, size in {k: v for n in first for k, v in writes.get(n, {}).items()}.items():
            if any(buf in reads.get(n, {}) for n in second):
                saved += size * (2 if readers[buf] <= inside else 1)
    read_a = {k: v for n in a for k, v in reads.get(n, {}).items()}
    read_b = {k for n in b for k in reads.get(n, {})}
    written = {k for n in inside for k in writes.get(n, {})}
    saved += sum(v for k, v in read_a.items() if k in read_b and k not in written)
    return saved


def _label(group: Group) -> str:
    return "+".join(group) if len(group) <= 3 else f"{'+'.join(group[:2])}+… ({len(group)} nodes)"


def _reason(reasons) -> str:
    return "; ".join(r.text for r in reasons)[:200] if reasons else ""


def _apply_pair(outcome: str, reason: str, forceable: bool) -> str:
    if not forceable and "numel/rnumel" in reason:
        return ("not reachable by configuration, nor by forcing it: their loops differ in "
                "size; it needs another shape or layout in the model")
    if not forceable:
        return ("not reachable by configuration, nor by forcing it: fusing them would make "
                "a cycle through the nodes between them; it needs another op order")
    if outcome in ("benchmark_slower", "spill"):
        return ("torch._inductor.config.benchmark_fusion = False (its timing or register "
                "check refused the pair; without it Inductor fuses by its heuristics)")
    if "max_fusion_size" in reason or "exceeds max fusion" in reason:
        return "torch._inductor.config.max_fusion_size = <larger>"
    if "score_fusion_memory_threshold" in reason:
        return ("torch._inductor.config.score_fusion_memory_threshold = <lower> (Inductor "
                "found too few shared bytes to think the fusion worth it)")
    return ("not reachable by configuration: the pair needs a change to the model's code "
            "(another op order or layout) or to Inductor")


def _reason_settings(config: dict, graph: Graph) -> list[Candidate]:
    """A setting for each kind of refusal it decides, where it is not already so."""
    said = [x.text for r in graph.rounds for v in r.verdicts if not v.ok for x in v.reasons]
    out = []
    for text, key, value, why in SETTING_REASONS:
        count = sum(text in reason for reason in said)
        if count and config.get(key) != value:
            out.append(Candidate(
                kind="config", what=f"{key}={value}",
                why=f"{count} refusal(s): {why} (now {config.get(key, 'unrecorded')})",
                bytes_saved=None, ms=None, config=((key, value),),
                apply=f"torch._inductor.config.{key} = {value}"))
    return out


def _large_bodies(config: dict, graph: Graph) -> list[Candidate]:
    """``realize_opcount_threshold`` above the largest body lowering stored for its size:
    those bodies are computed inside their users instead (less memory traffic, more
    recomputation)."""
    if not graph.large_bodies:
        return []
    top, now = max(graph.large_bodies), config.get("realize_opcount_threshold")
    return [Candidate(
        kind="config", what=f"realize_opcount_threshold={top + 1}",
        why=f"{len(graph.large_bodies)} buffer(s) stored to memory when their bodies "
        f"(up to {top} ops) were over the op-count threshold (now "
        f"{'the default' if now is None else now}), not outputs nor a library call's "
        "inputs; above it they may be computed inside their users instead",
        bytes_saved=None, ms=None,
        config=(("realize_opcount_threshold", top + 1),),
        apply=f"torch._inductor.config.realize_opcount_threshold = {top + 1}")]


def _configs(trace: Trace, graph: Graph) -> list[Candidate]:
    config = trace.config
    out = [*_reason_settings(config, graph), *_large_bodies(config, graph)]
    t = graph.timing
    wall, device = (t.compiled_wall_ms, t.compiled_device_ms) if t else (None, None)
    if graph.device.startswith("cuda") and wall and device and wall > LAUNCH_BOUND * device:
        out.append(Candidate(
            kind="config", what='mode="reduce-overhead" (CUDA graphs)',
            why=f"launch-bound: {wall:.3f} ms wall per call against {device:.3f} ms on the "
            "device", bytes_saved=None, ms=wall - device,
            mode="reduce-overhead",
            apply='torch.compile(model, mode="reduce-overhead")'))
    close = [c for r in graph.rounds for c in r.candidates if c.outcome in ("rejected",)]
    if graph.device.startswith("cuda") and config.get("benchmark_fusion") is False and close:
        out.append(Candidate(
            kind="config", what="benchmark_fusion=True",
            why=f"off, and {len(close)} candidate(s) were refused by heuristics alone",
            bytes_saved=None, ms=None, config=(("benchmark_fusion", True),),
            apply="torch._inductor.config.benchmark_fusion = True"))
    timed = [k for k in graph.kernels if k.ms is not None]
    total = sum(k.ms for k in timed)
    library = sum(k.ms for k in timed if k.backend == "extern"
                  and any(op in k.name for op in ("mm", "conv")))
    generated = sum(k.ms for k in timed if k.backend != "extern")
    cuda = graph.device.startswith("cuda")
    if cuda and not config.get("max_autotune") and total and library / total >= MATMUL_SHARE:
        out.append(Candidate(
            kind="config", what="max_autotune=True",
            why=f"library matmuls and convolutions take {100 * library / total:.0f}% of the "
            "kernel time; autotuning tries Triton templates against them",
            bytes_saved=None, ms=None, config=(("max_autotune", True),),
            apply="torch._inductor.config.max_autotune = True (or torch.compile(model, "
            'mode="max-autotune-no-cudagraphs"), which also sets the next one)'))
    if cuda and not config.get("coordinate_descent_tuning") and total \
            and generated / total >= GENERATED_SHARE:
        out.append(Candidate(
            kind="config", what="coordinate_descent_tuning=True",
            why=f"generated Triton kernels take {100 * generated / total:.0f}% of the kernel "
            "time; coordinate descent tunes their block sizes at their first call",
            bytes_saved=None, ms=None, config=(("coordinate_descent_tuning", True),),
            apply="torch._inductor.config.coordinate_descent_tuning = True (part of "
            'mode="max-autotune-no-cudagraphs")'))
    tiny = [k for k in timed if k.ms < TINY_MS and k.backend != "extern"]
    if graph.device.startswith("cuda") and not config.get("combo_kernels") \
            and len(tiny) >= TINY_KERNELS:
        out.append(Candidate(
            kind="config", what="combo_kernels=True",
            why=f"{len(tiny)} generated kernels take under {TINY_MS * 1000:.0f} us each",
            bytes_saved=None, ms=None, config=(("combo_kernels", True),),
            apply="torch._inductor.config.combo_kernels = True"))
    return out
