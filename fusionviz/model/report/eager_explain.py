"""Why compiled is faster or slower than eager: the step's budget and known causes.

For each ``Entry`` (a callable the user compiled): the eager and compiled times on
both clocks with their verdicts, a budget of where the difference goes (device kernel
time by module, host overhead per call, graph breaks, recompiles) and findings: known
regressions recognised by their signature in the kernel map, each with the usual fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from fusionviz.model.names import common_module
from fusionviz.model.report import eager_cudagraphs
from fusionviz.model.report.eager_figures import (
    figure,
    ratio_text,
    step_medians,
    versus_clocks,
)
from fusionviz.model.report.eager_map import ModuleMap, entry_graphs, module_map
from fusionviz.model.trace import Entry, Trace

LAUNCH_BOUND = 1.5  # compiled wall per call above this many times its device time
DIVERGED = 1.25  # Dynamo graph run eagerly vs the user's program: this far apart
BUSY = 0.25  # other processes' CPU use while timing, as a share of the cores: uncertain
FAULT_US = 0.25  # a minor page fault's rough cost (us); machines differ several-fold
FAULTY = 0.10  # page faults' rough cost above this share of a figure: approximate
CACHED = 0.20  # a call repeated right after itself this much faster or slower: it
#                depends on the caches (what ran before it)
FRESHER = 0.20  # a call on memory given back to the OS this much slower: it depends on
#                 the allocator ...
FRESH_PAGES = 256  # ... where it faults in at least this many pages (1 MB): below that,
#                    glibc keeps freed memory (its thresholds start at 128 KB and grow)

_MATMUL_OPS = ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
               "aten::linear", "aten::convolution", "aten::cudnn_convolution",
               "aten::_convolution", "aten::mkldnn_convolution")
_MATMUL_EXTERNS = re.compile(r"extern_kernels\.(mm|addmm|bmm|baddbmm|convolution)\b")
_COPY_LAUNCHERS = ("aten::copy_", "aten::clone", "aten::contiguous")
_COPY_OPS = {"clone", "copy", "copy_", "permute", "view", "expand", "_unsafe_view",
             "as_strided", "transpose", "t", "reshape", "contiguous", "slice", "select"}


@dataclass(frozen=True)
class Finding:
    """A known reason for time lost (or won) under compile, with the usual fix."""

    title: str  # one line, with its number
    detail: str  # what it means
    fix: str = ""
    modules: tuple[str, ...] = ()
    kind: str = ""  # launch_bound for the one the CUDA graphs what-if answers


@dataclass
class Explained:
    """One entry, explained."""

    entry: Entry
    forward: dict  # clock -> Versus
    backward: dict
    step: dict  # clock -> (eager ms, compiled ms): forward + backward medians
    maps: dict  # side -> ModuleMap
    budget: list[tuple[str, str]]  # (what, its number and meaning)
    findings: list[Finding]

    @property
    def busy(self) -> str:
        """Why CPU figures are uncertain: other processes kept cores busy while the calls
        were timed ("" when they did not, or on the GPU)."""
        load = self.entry.load or {}
        other, cores = load.get("other_cpu_cores"), load.get("cores")
        if other is None or not cores or other <= BUSY * cores:
            return ""
        return (f"other processes kept {other:.1f} of {cores} cores busy while the calls "
                "were timed")

    @property
    def faulting(self) -> dict[tuple[str, str], float]:
        """(part, side) -> page faults per call, for the CPU figures whose calls paid
        the OS for fresh memory a large share of their time (``FAULTY``)."""
        e, out = self.entry, {}
        for part in ("forward", "backward"):
            for side in ("eager", "compiled"):
                s = getattr(e, f"{side}_{part}")
                wall = figure(s.wall) if s is not None else None
                if s is None or not s.faults or wall is None:
                    continue
                if s.faults * FAULT_US / 1e3 >= FAULTY * wall.median:
                    out[part, side] = s.faults
        return out

    @property
    def fresh_sensitive(self) -> dict[tuple[str, str], tuple[float, float, float]]:
        """(part, side) -> (the figure's median, the median on fresh memory, page
        faults per fresh call) for the CPU figures whose call, right after the allocator
        gave its free memory back to the OS, ran over ``FRESHER`` slower while faulting
        in at least ``FRESH_PAGES`` pages: the call's cost depends on the allocator."""
        out = {}
        for side in ("eager", "compiled"):
            s = getattr(self.entry, f"{side}_forward")
            wall = figure(s.wall) if s is not None else None
            fresh = figure(s.fresh) if s is not None else None
            if wall is None or fresh is None or (s.fresh_faults or 0) < FRESH_PAGES:
                continue
            if fresh.median > (1 + FRESHER) * wall.median:
                out["forward", side] = (wall.median, fresh.median, s.fresh_faults)
        return out

    @property
    def memory(self) -> str:
        """Why some CPU figures are approximate: their calls touched fresh memory, or
        would run much slower if they did ("" when neither)."""
        hits, fresh = self.faulting, self.fresh_sensitive
        out = []
        if hits:
            which = ", ".join(f"{side} {part} {n:,.0f}" for (part, side), n in hits.items())
            out.append(
                f"page faults per call: {which}. Each call touched fresh memory, which the "
                "OS maps page by page at a cost that depends on the allocator's state and, "
                "on a shared machine, changes several-fold within minutes: a loop that "
                "reuses its memory can run several times faster or slower than measured "
                "here")
        if fresh:
            which = ", ".join(f"{side} {part} {a:.3f} ms as measured, {b:.3f} ms on fresh "
                              f"memory ({n:,.0f} page faults per call)"
                              for (part, side), (a, b, n) in fresh.items())
            out.append(
                f"{which}. The call's cost depends on the memory allocator: glibc gives "
                "freed memory back to the OS by thresholds that move with what the "
                "process allocated before, and a call on given-back memory pays a page "
                "fault for every page it touches, so another run of the same program can "
                "land on either figure. jemalloc or tcmalloc (LD_PRELOAD), which "
                "PyTorch's CPU performance tuning guide suggests, keep freed memory")
        return "; ".join(out)

    @property
    def cache_sensitive(self) -> dict[tuple[str, str], tuple[float, float]]:
        """(part, side) -> (median between other calls, median right after itself) for
        the CPU figures that differ by more than ``CACHED`` between the two: the call's
        cost depends on what ran before it (its data in the caches or not)."""
        e, out = self.entry, {}
        for side in ("eager", "compiled"):
            s = getattr(e, f"{side}_forward")
            wall = figure(s.wall) if s is not None else None
            again = figure(s.repeated) if s is not None else None
            if wall is None or again is None or again.median <= 0:
                continue
            if abs(wall.median / again.median - 1) > CACHED:
                out["forward", side] = (wall.median, again.median)
        return out

    @property
    def caches(self) -> str:
        """Why some CPU figures depend on what ran before the call ("" when none do)."""
        hits = self.cache_sensitive
        if not hits:
            return ""
        which = ", ".join(f"{side} {part} {a:.3f} ms between other calls, {b:.3f} ms "
                          "right after itself" for (part, side), (a, b) in hits.items())
        return (f"{which}. The call's cost depends on what ran before it (its data in the "
                "caches or not): a loop that calls it alone, as timeit does, runs near the "
                "second figure; inside a program that does other work between calls, "
                "nearer the first, which is the one compared here")

    def marks(self) -> list[tuple[str, str]]:
        """(mark, why) for the figures not to be read as the program's exact cost."""
        busy, memory, caches = self.busy, self.memory, self.caches  # each computed once
        out = []
        if busy:
            out.append(("uncertain", f"{busy}; wall times are not this program's cost"))
        if memory:
            out.append(("approximate", memory))
        if caches:
            out.append(("cache-sensitive", caches))
        return out

    def headline(self) -> str:
        """``train_step: compiled 6.42 ms vs eager 2.98 ms device per call: 2.15x
        slower`` (the device clock where there is one; forward + backward)."""
        clock = "device" if "device" in self.step else "wall"
        if clock not in self.step:
            return f"{self.entry.name}: not timed ({self.entry.note or 'no samples'})"
        eager, compiled = self.step[clock]
        ratio = eager / compiled if compiled else None
        sides = [vs[clock] for vs in (self.forward, self.backward) if clock in vs]
        noise = bool(sides) and all(v.verdict == "within noise" for v in sides)
        how = "within noise" if noise or ratio is None else ratio_text(ratio)
        if clock == "wall" and self.busy:
            how = f"uncertain, {self.busy} ({how} as measured)"
        what = "forward + backward" if self.entry.grad else "per call"
        return (f"{self.entry.name}: compiled{headline_clock(self.entry)} {compiled:.3f} ms"
                f" vs eager {eager:.3f} ms "
                f"{clock} {what}: {how}")


def explain(trace: Trace, entry: Entry) -> Explained:
    fwd = versus_clocks(entry.eager_forward, entry.compiled_forward)
    bwd = versus_clocks(entry.eager_backward, entry.compiled_backward)
    step = step_medians(fwd, bwd)
    maps = {side: module_map(trace, entry, side) for side in ("forward", "backward")}
    ex = Explained(entry, fwd, bwd, step, maps, [], [])
    ex.budget = _budget(trace, ex)
    ex.findings = [f for f in (_diverged(trace, ex), _attention_swap(ex), _copies(ex),
                               _matmuls(ex), _launch_bound(ex)) if f]
    return ex


def explain_all(trace: Trace) -> list[Explained]:
    return [explain(trace, e) for e in trace.entries]


def _budget(trace: Trace, ex: Explained) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    e = ex.entry
    if "device" in ex.step:
        eager, compiled = ex.step["device"]
        rows.append(("device kernel time", f"{compiled - eager:+.3f} ms per call "
                     f"(compiled {compiled:.3f} vs eager {eager:.3f})"))
        for side, mp in ex.maps.items():
            for what, sign in (("lost", 1), ("won", -1)):
                movers = _movers(mp, sign)
                if movers:
                    rows.append((f"  {side}: most {what} in", ", ".join(
                        f"{where} {ms_:+.3f} ms" for where, ms_ in movers)))
    if "device" in ex.step and "wall" in ex.step:
        (ew, cw), (ed, cd) = ex.step["wall"], ex.step["device"]
        launches = [s.launches for s in (e.eager_forward, e.compiled_forward) if s]
        replayed = " (replayed from CUDA graphs)" if e.compiled_cudagraphs else ""
        per_call = (f"; kernels launched per forward: eager {launches[0]:g}, compiled "
                    f"{launches[1]:g}{replayed}"
                    if len(launches) == 2 and None not in launches else "")
        rows.append(("host time beyond the device (wall - device)",
                     f"compiled {cw - cd:.3f} ms vs eager {ew - ed:.3f} ms per call{per_call}"))
    frames = len(e.compile_ids)
    if frames > 1:
        graphs = [g for g in entry_graphs(trace, e) if g.kind != "backward"]
        inside = sum(g.timing.compiled_wall_ms or 0.0 for g in graphs if g.timing)
        fwd_wall = ex.forward.get("wall")
        outside = (f"; {fwd_wall.compiled.median - inside:.3f} ms of the compiled forward's "
                   f"wall time is outside them (the eager code between them, guards)"
                   if fwd_wall and inside else "")
        rows.append(("graph breaks", f"{frames} frames compiled in one call: Dynamo "
                     f"compiled {len(graphs)} forward graphs{outside}"))
    found = _dynamo_vs_program(trace, ex)
    if found is not None:
        clock, dynamo, real = found
        rows.append(("the graph Dynamo captured, run eagerly", f"{dynamo:.3f} ms {clock} per "
                     f"forward, against your program's {real:.3f} ms (the eager shown)"))
    recompiles = sum(1 for g in entry_graphs(trace, e) if g.recompile_reasons)
    if recompiles:
        rows.append(("recompiles", f"{recompiles} graphs of its frames were recompiles "
                     "(each guard failure compiles again; guards run on every call)"))
    return rows + eager_cudagraphs.budget_rows(e, ex.step)


def _movers(mp: ModuleMap, sign: int, top: int = 3) -> list[tuple[str, float]]:
    """The modules whose own kernels lost (sign 1) or won (-1) most, repeated blocks
    summed as one (``layer.*.attention``: the 12 layers' attention together)."""
    by_shape: dict[str, float] = {}
    for m in mp.ranked(own=True):
        d = m.own_delta_ms
        if d * sign > 0.001:
            key = _SHAPE.sub(".*.", f".{m.path}.").strip(".") if m.path else "(root)"
            by_shape[key] = by_shape.get(key, 0.0) + d
    rows = sorted(by_shape.items(), key=lambda kv: -kv[1] * sign)
    return rows[:top]


_SHAPE = re.compile(r"\.\d+\.")


def _dynamo_eager(g, device: bool) -> float | None:
    t = g.timing
    if t is None:
        return None
    if t.dynamo_eager_ms is not None or t.dynamo_eager_wall_ms is not None:
        return t.dynamo_eager_device_ms if device else t.dynamo_eager_wall_ms
    if t.eager_source.startswith("Dynamo graph"):
        return t.eager_device_ms if device else t.eager_wall_ms
    return None


def _diverged(trace: Trace, ex: Explained) -> Finding | None:
    """The graph Dynamo captured, run eagerly, against the user's own eager forward."""
    found = _dynamo_vs_program(trace, ex)
    if found is None or found[0] != "device":
        return None  # on the wall clock, the graph's many small ops cost host time alone
    clock, dynamo, real = found
    if real <= 0 or (1 / DIVERGED) <= dynamo / real <= DIVERGED:
        return None
    return Finding(
        title=(f"your code takes another path under torch.compile: the graph Dynamo "
               f"captured runs {dynamo:.3f} ms eagerly, your program {real:.3f} ms "
               f"({dynamo / real:.2f}x) on the {clock} clock"),
        detail=("Code can branch on torch.compiler.is_compiling() or on tracing state "
                "(transformers builds a dense attention mask under tracing, which takes "
                "SDPA off its fused kernels). The compiled graph computes what Dynamo "
                "traced, so compare it against what your program runs, shown here as eager."),
        fix=("Look for is_compiling()/is_tracing() branches and masks built only under "
             "tracing; see the kernel map below for the modules where the work differs."))


def _dynamo_vs_program(trace: Trace, ex: Explained) -> tuple[str, float, float] | None:
    """(clock, the Dynamo graphs' eager forward summed, the program's eager forward)."""
    clock = "device" if "device" in ex.forward else "wall"
    v = ex.forward.get(clock)
    graphs = [g for g in entry_graphs(trace, ex.entry) if g.kind != "backward"]
    values = [_dynamo_eager(g, clock == "device") for g in graphs]
    if v is None or not values or None in values:
        return None
    return clock, sum(values), v.eager.median


_ATTENTION_FAMILIES = (("flash", re.compile(r"flash", re.I)),
                       ("cudnn", re.compile(r"cudnn.*(attention|sdpa|attn)|cudnn_attention",
                                            re.I)),
                       ("efficient", re.compile(r"efficient_attention|fmha|mem_eff", re.I)),
                       ("math", re.compile(r"_scaled_dot_product_attention_math", re.I)))
_DECOMPOSED = {"bmm", "baddbmm", "_safe_softmax", "softmax", "_softmax"}
_MASK_OPS = {"masked_fill", "where", "rsub"}


def _family(*texts: str) -> str:
    """The attention kernel family the first telling text names (the launching op before
    the kernel's name: cuDNN's kernels are called ``..._flash_fprop...``)."""
    for text in texts:
        name = next((n for n, rx in _ATTENTION_FAMILIES if rx.search(text)), "")
        if name:
            return name
    return ""


def _attention_swap(ex: Explained) -> Finding | None:
    """Attention took longer under compile: another kind of kernel (a fused kernel
    replaced by bmm + softmax + bmm), or the same kind given a mask that the eager
    program never built (code that builds masks only while traced)."""
    hits, lost, eager_kinds, compiled_kinds = [], 0.0, set(), set()
    eager_total = 0.0
    for mp in ex.maps.values():
        for m in mp.modules.values():
            eager = [k for k in m.eager if _family(k.launcher, k.op, k.name)]
            if not eager:
                continue
            own = [s for s in m.compiled if _family(s.kernel.name, " ".join(s.ops))
                   or set(s.ops) & _DECOMPOSED]
            families = {_family(s.kernel.name, " ".join(s.ops)) or "bmm + softmax"
                        for s in own}
            before = {_family(k.launcher, k.op, k.name) for k in eager}
            e_ms = sum(k.ms for k in eager)
            delta = sum(s.ms for s in own) - e_ms
            if not own or delta <= 0 or (families <= before and delta < 0.2 * e_ms):
                continue
            hits.append(m.path)
            lost += delta
            eager_total += e_ms
            eager_kinds |= before
            compiled_kinds |= families
    if not hits:
        return None
    where = common_module(hits) or hits[0]
    eager_masks = any(k.launcher in ("aten::masked_fill", "aten::masked_fill_", "aten::where",
                                     "aten::rsub") for mp in ex.maps.values()
                      for m in mp.modules.values() for k in m.eager)
    masked = not eager_masks and any(
        set(s.ops) & _MASK_OPS for mp in ex.maps.values() for m in mp.modules.values()
        for s in m.compiled if "scaled_dot_product" in s.kernel.name)
    mask_text = (" The compiled graph builds an attention mask (masked_fill / where kernels "
                 "fused with the attention's inputs) that the eager program never built: "
                 "eager gave SDPA no mask, so it ran its fastest kernel." if masked else "")
    if compiled_kinds <= eager_kinds:
        head = (f"attention is {(eager_total + lost) / eager_total:.2f}x slower under "
                f"compile ({' / '.join(sorted(compiled_kinds))} kernels on both sides)")
        what = "The same kind of attention kernel takes longer under compile."
    else:
        head = (f"attention runs {' / '.join(sorted(compiled_kinds))} under compile where "
                f"eager ran {' / '.join(sorted(eager_kinds))}")
        what = ("Inductor computes attention as bmm + softmax + bmm (SDPA's math path, "
                "decomposed) where eager ran one fused kernel."
                if "bmm + softmax" in compiled_kinds else
                "SDPA picked another kernel under compile than eagerly; which one depends "
                "on the mask, dtypes and layouts it is given.")
    if masked:  # the cause transformers had, and its fix
        why = (" Code can build masks only while traced (transformers did: transformers "
               "#48925), so the graph is not what your program runs.")
        fix = ("Pass attention_mask=None for unpadded input (or a transformers version "
               "that keeps the mask out under tracing); otherwise an additive float mask in "
               "the query's dtype; check with torch.nn.attention.sdpa_kernel("
               "[FLASH_ATTENTION, EFFICIENT_ATTENTION]) which kernel SDPA can keep.")
    else:  # no mask only the graph builds: what SDPA is given differs otherwise
        why = (" The compiled graph builds no mask your program lacks; SDPA's choice and "
               "speed also depend on its inputs' dtypes, shapes and layout, which the "
               "Kernel pane shows for each attention call as compiled.")
        fix = ("Compare the attention call's inputs (the Kernel pane's shapes) with your "
               "program's: a "
               "query, key or value laid out otherwise (strides) can cost SDPA a copy or a "
               "slower path; check with torch.nn.attention.sdpa_kernel which kernels SDPA "
               "can use for them.")
    return Finding(
        title=f"{head} in {len(hits)} modules ({where}): {lost:+.3f} ms per call",
        detail=what + mask_text + why, fix=fix, modules=tuple(hits))


def _totals(ex: Explained, eager_pick, compiled_pick) -> tuple[float, float, float]:
    """(eager ms, compiled ms, compiled total) of the kernels picked, both sides."""
    eager = compiled = total = 0.0
    for mp in ex.maps.values():
        total += mp.compiled_total
        for m in mp.modules.values():
            eager += sum(k.ms for k in m.eager if eager_pick(k))
            compiled += sum(s.ms for s in m.compiled if compiled_pick(s))
    return eager, compiled, total


def _copies(ex: Explained) -> Finding | None:
    eager, compiled, total = _totals(
        ex, lambda k: k.launcher in _COPY_LAUNCHERS,
        lambda s: bool(s.ops) and set(s.ops) <= _COPY_OPS and s.kernel.backend != "extern")
    extra = compiled - eager
    if total <= 0 or extra < max(0.05 * total, 0.01):
        return None
    return Finding(
        title=f"extra layout copies under compile: {extra:+.3f} ms per call",
        detail=(f"Compiled kernels that only copy, permute or clone take {compiled:.3f} ms; "
                f"eager's copies {eager:.3f} ms. Often a layout an extern kernel needs "
                "(a matmul or convolution input made contiguous) or a channels-last "
                "conversion."),
        fix="Check the strides of the copied buffers in Details; keep the memory format "
            "consistent (channels_last end to end), or try config.freezing for inference.")


def _matmuls(ex: Explained) -> Finding | None:
    eager, compiled, total = _totals(
        ex, lambda k: k.launcher in _MATMUL_OPS,
        lambda s: bool(_MATMUL_EXTERNS.search(s.kernel.name)))
    if eager <= 0 or compiled < 1.2 * eager or compiled - eager < 0.05 * max(total, 1e-9):
        return None
    return Finding(
        title=(f"matmuls and convolutions are slower compiled: {compiled:.3f} ms vs eager "
               f"{eager:.3f} ms per call"),
        detail=("The same library calls take longer: check their dtype (an fp32 GEMM where "
                "eager ran fp16/bf16 under autocast), their layouts (a transposed or "
                "non-contiguous operand) and whether matmuls were decomposed into bmm."),
        fix="Compare the extern kernels' inputs in Details with eager's; mode=\"max-autotune\" "
            "may pick a better GEMM.")


def _launch_bound(ex: Explained) -> Finding | None:
    if "device" not in ex.step or "wall" not in ex.step:
        return None
    (ew, cw), (_, cd) = ex.step["wall"], ex.step["device"]
    if cd <= 0 or cw < LAUNCH_BOUND * cd:
        return None
    slower = " and slower than eager in wall time" if cw > ew else ""
    return Finding(
        kind="launch_bound",
        title=(f"launch-bound: the compiled call takes {cw:.3f} ms wall for {cd:.3f} ms of "
               f"device work ({cw / cd:.1f}x){slower}"),
        detail=("The CPU issues the kernels more slowly than the GPU runs them: Python, "
                "guards and launch overhead per kernel set the pace, so device-time savings "
                "do not reach the wall clock."),
        fix=eager_cudagraphs.fix_text(ex.entry, ew))


def headline_clock(entry: Entry) -> str:
    """`` (CUDA graphs)`` after "compiled" where the compiled side replays them."""
    return " (CUDA graphs)" if entry.compiled_cudagraphs else ""


def launch_finding(ex: Explained) -> Finding | None:
    """The launch-bound finding of an entry, if it has one."""
    return next((f for f in ex.findings if f.kind == "launch_bound"), None)


def entry_lines(trace: Trace) -> list[str]:
    """The entries as text (``fusionviz summary``)."""
    lines: list[str] = []
    for ex in explain_all(trace):
        lines.append(f"eager vs compiled: {ex.headline()}")
        e = ex.entry
        for side, vs in (("forward", ex.forward), ("backward", ex.backward)):
            for clock, v in vs.items():
                lines.append(f"  {side:8} {clock:6} eager {v.eager.text()}; compiled "
                             f"{v.compiled.text()}: {v.how}")
        lines += eager_cudagraphs.lines(e)
        for what, text in ex.budget:
            lines.append(f"  {what}: {text}")
        for side, mp in ex.maps.items():
            if mp.coverage is not None:
                lines.append(f"  kernel map ({side}): {mp.coverage:.0%} of eager kernel time "
                             "in modules with compiled kernels")
        for f in ex.findings:
            lines.append(f"  ! {f.title}")
            lines.append(f"    {f.detail}")
            if f.fix:
                lines.append(f"    fix: {f.fix}")
        lines += [f"  {mark}: {why}" for mark, why in ex.marks()]
        if e.note:
            lines.append(f"  note: {e.note}")
        if e.restored:
            lines.append(f"  ({e.restored} tensors of the program's state put back after "
                         "the extra calls)")
    return lines

