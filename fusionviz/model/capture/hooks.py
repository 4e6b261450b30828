"""Instrument Inductor: wrap the scheduler, codegen and module hooks that record fusion.

Every wrapper calls the original unchanged and records around it through
``Patcher.guard``, so a recording error is kept in the trace and never breaks the
user's compile. Hooks are found by name; what a torch version lacks is listed in
the trace's capabilities. The hook map, and what each torch version has: docs/inductor-hooks.md.
"""

from __future__ import annotations

import importlib
import inspect
import time
from contextlib import contextmanager

from fusionviz.model.capture import (
    comm_reorders,
    ddp_split,
    entries,
    fx_comm_passes,
    large_bodies,
    script_objects,
    step_profile,
)
from fusionviz.model.capture.graph_record import GraphRecord
from fusionviz.model.capture.nodes import members
from fusionviz.model.capture.patcher import Patcher
from fusionviz.model.capture.rounds import BenchRecord, ReasonSink, RoundRecorder
from fusionviz.model.trace import BenchKernel, Reason
from fusionviz.model.whatif import WhatIf, matches

# Backend checks that reject pairs silently (no WhyNoFuse): record which said False.
_SILENT_CHECKS = (
    ("torch._inductor.codegen.simd", "SIMDScheduling", ("can_fuse", "can_fuse_vertical", "can_fuse_horizontal")),
    ("torch._inductor.codegen.cpp", "CppScheduling", ("can_fuse_vertical", "can_fuse_horizontal")),
    ("torch._inductor.scheduler", "Scheduler", ("can_fuse_vertical",)),
)
# Heuristics "not needed for correctness" (Inductor's words): a forced pair skips them.
_HEURISTIC_CHECKS = ("can_fuse", "can_fuse_vertical", "can_fuse_horizontal")
_HEURISTIC_VETOES = ("can_fusion_increase_peak_memory", "are_long_distant_nodes")
_KERNEL_BACKENDS = (
    ("torch._inductor.codegen.triton", "TritonScheduling", "triton"),
    ("torch._inductor.codegen.cpp", "CppScheduling", "cpp"),
    ("torch._inductor.codegen.halide", "HalideScheduling", "halide"),
)
_FUSE_BACKENDS = (
    ("torch._inductor.scheduler", "BaseScheduling"),
    ("torch._inductor.codegen.cpp", "CppScheduling"),
)


def _module(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - e.g. no triton on a CPU-only box
        return None


def _cls(module: str, name: str):
    return getattr(_module(module), name, None)


class Hooks:
    """Installs the wrappers and routes their events to a ``Recorder``."""

    def __init__(self, recorder, whatif: WhatIf | None = None) -> None:
        self.rec = recorder  # session.Recorder: graph lifecycle, errors, progress
        self.whatif = whatif or WhatIf()
        self.p = Patcher(recorder.on_error)
        self.sinks: list[ReasonSink] = []
        self.benches: list[BenchRecord] = []
        self.can_fuse_depth = 0
        self.forcing = 0  # > 0 while can_fuse runs for a forced pair
        self.internal = 0  # > 0 inside fuse_two_nodes / speedup_by_fusion / cycle checks

    # -- installation ---------------------------------------------------------
    def install(self) -> None:
        sched = _cls("torch._inductor.scheduler", "Scheduler")
        graph = _cls("torch._inductor.graph", "GraphLowering")
        why = _cls("torch._inductor.scheduler", "WhyNoFuse")
        w = self.p.wrap
        if self.rec.measure_runtime:
            w(_module("torch._inductor.compile_fx"), "compile_fx", self._compile_fx,
              "torch._inductor.compile_fx.compile_fx")
            if hasattr(self.rec, "add_entry"):
                entries.install(self.p, self.rec)
        w(graph, "compile_to_module", self._compile_to_module)
        w(sched, "__init__", self._scheduler_init)
        w(sched, "fuse_nodes", self._fuse_nodes)
        w(sched, "fuse_nodes_once", self._fuse_nodes_once)
        w(sched, "get_possible_fusions", self._get_possible_fusions)
        w(sched, "score_fusion_key", self._score_fusion_key)
        w(sched, "can_fuse", self._can_fuse)
        w(why, "__call__", self._why_no_fuse)
        w(sched, "will_fusion_create_cycle", self._cycle)
        w(sched, "speedup_by_fusion", self._speedup_by_fusion)
        w(sched, "benchmark_codegened_module", self._benchmark_module)
        w(sched, "codegen_extern_call", self._extern_call)
        if not w(sched, "fuse_two_nodes", self._fuse_two_nodes):
            for mod, name in _FUSE_BACKENDS:  # torch <= 2.8: the backend's fuse()
                w(_cls(mod, name), "fuse", self._backend_fuse)
        for mod, name, backend in _KERNEL_BACKENDS:
            w(_cls(mod, name), "define_kernel", self._define_kernel(backend))
        for mod, name, methods in _SILENT_CHECKS:
            owner = _cls(mod, name)
            for m in methods:
                w(owner, m, self._silent_check(f"{name}.{m}"))
        choices = _cls("torch._inductor.choices", "InductorChoices")
        for m in _HEURISTIC_CHECKS:
            w(choices, m, self._silent_check(f"InductorChoices.{m}", bypass=True))
        if self.whatif.force:
            for m in _HEURISTIC_VETOES:
                w(sched, m, self._veto_unless_forced)
        if self.whatif.keep_spills:
            w(_cls("torch._inductor.codegen.triton", "TritonScheduling"),
              "benchmark_codegened_module", self._keep_spills)
        comm_reorders.install(self.p, lambda: self.rec.current)
        large_bodies.install(self.p)
        script_objects.install(self.p)  # a DDP teardown that cannot hang
        if hasattr(self.rec, "step"):  # the profiled step ends where the group goes
            step_profile.install(self.p, self.rec.step)
        if hasattr(self.rec, "pending_comm_passes"):
            fx_comm_passes.install(self.p, self.rec)
        if hasattr(self.rec, "splits"):
            ddp_split.install(self.p, self.rec.splits)
        reasons = getattr(self.rec, "reasons", None)  # Dynamo: why several graphs
        if reasons is not None:
            reasons.install(self.p)

    def uninstall(self) -> None:
        self.p.undo()

    # -- graph lifecycle --------------------------------------------------------
    def _compile_fx(self, orig):
        depth = {"n": 0}  # compile_fx calls itself once to apply config patches

        def compile_fx(model, example_inputs, *args, **kwargs):
            if self.rec.muted:
                return orig(model, example_inputs, *args, **kwargs)
            outer = depth["n"] == 0
            if outer:  # a piece of a frame the DDP optimizer split, or None
                self.rec.piece = self.p.guard("DDP optimizer piece", self.rec.splits.take)
            piece = self.rec.piece
            depth["n"] += 1
            try:
                compiled = orig(model, example_inputs, *args, **kwargs)
            finally:
                depth["n"] -= 1
                if outer:
                    self.rec.piece = None
            if depth["n"] or not callable(compiled):
                return compiled
            wrapped = self.p.guard("eager baseline", self.rec.dynamo_graph, model, compiled,
                                   piece)
            return compiled if wrapped is None else wrapped

        return compile_fx

    def _compile_to_module(self, orig):
        def compile_to_module(graph_lowering, *args, **kwargs):
            if self.rec.muted:
                return orig(graph_lowering, *args, **kwargs)
            g = self.p.guard("graph start", self.rec.graph_started, graph_lowering)
            t0 = time.perf_counter()
            try:
                module = orig(graph_lowering, *args, **kwargs)
            except BaseException:
                if g is not None:
                    self.p.guard("graph failed", self.rec.graph_failed, g, graph_lowering)
                raise
            if g is not None:
                g.compile_s = time.perf_counter() - t0
                self.p.guard("graph done", self.rec.graph_done, g, graph_lowering, module)
            return module

        return compile_to_module

    def _scheduler_init(self, orig):
        def init(scheduler, *args, **kwargs):
            orig(scheduler, *args, **kwargs)
            g = self.rec.current
            if g is not None and g.scheduler is scheduler:
                from fusionviz.model.capture.nodes import members

                g.final_groups = tuple(members(n) for n in scheduler.nodes)

        return init

    def _fuse_nodes(self, orig):
        def fuse_nodes(scheduler, nodes, *args, **kwargs):
            g = self.rec.current
            if g is None or g.scheduler is not None:  # only the first call is the main fusion
                return orig(scheduler, nodes, *args, **kwargs)
            self.p.guard("pre-fusion nodes", g.snapshot_nodes, scheduler, nodes)
            g.scheduler, g.in_fuse_nodes = scheduler, True
            t0 = time.perf_counter()
            try:
                return orig(scheduler, nodes, *args, **kwargs)
            finally:
                g.fusion_s, g.in_fuse_nodes = time.perf_counter() - t0, False

        return fuse_nodes

    def _fuse_nodes_once(self, orig):
        def fuse_nodes_once(scheduler, nodes, *args, **kwargs):
            g = self.rec.current
            if g is None or not g.in_fuse_nodes or g.round is not None:
                return orig(scheduler, nodes, *args, **kwargs)
            stop = self.whatif.stop_after_round
            if stop is not None and len(g.rounds) >= stop:
                return nodes  # unchanged: fuse_nodes sees no progress and stops
            reorder = bool(kwargs.get("is_reorder_round", args[0] if args else False))
            g.round = RoundRecorder(len(g.rounds) + 1, reorder, nodes)
            try:
                result = orig(scheduler, nodes, *args, **kwargs)
            except BaseException as e:
                # keep what the round recorded before Inductor raised
                g.warnings.append(f"round {g.round.index} raised {type(e).__name__}: {e}"[:500])
                self._end_round(g, None)
                raise
            self._end_round(g, result)
            return result

        return fuse_nodes_once

    def _end_round(self, g: GraphRecord, nodes) -> None:
        rnd = self.p.guard("round", g.round.finish, nodes)
        g.round = None
        if rnd is not None:
            g.rounds.append(rnd)
            self.rec.progress("round", graph=g.index, round=rnd.index, nodes=len(rnd.groups_after))

    # -- candidates, scores, verdicts ------------------------------------------
    def _round(self) -> RoundRecorder | None:
        g = self.rec.current
        return g.round if g is not None else None

    def _get_possible_fusions(self, orig):
        def get_possible_fusions(scheduler, *args, **kwargs):
            pairs = orig(scheduler, *args, **kwargs)
            rnd = self._round()
            if rnd is not None:
                if self.whatif.force and args:
                    pairs = self.p.guard("force", self._inject_forced, args[0], pairs) or pairs
                self.p.guard("candidates", rnd.on_candidates, pairs)
            return pairs

        return get_possible_fusions

    def _score_fusion_key(self, orig):
        def score_fusion_key(scheduler, nodes, *args, **kwargs):
            key = orig(scheduler, nodes, *args, **kwargs)
            rnd = self._round()
            if rnd is not None:
                self.p.guard("score", rnd.on_score, nodes[0], nodes[1], key)
            return key

        return score_fusion_key

    def _can_fuse(self, orig):
        def can_fuse(scheduler, node1, node2, *args, **kwargs):
            if self.can_fuse_depth or self.internal:
                # nested: its reasons belong to the outer call; internal: Inductor's own
                # check while fusing, benchmarking or cycle-testing, not a candidate's try
                return orig(scheduler, node1, node2, *args, **kwargs)
            sink = ReasonSink(asked=(node1.get_name(), node2.get_name()))
            rule = self._rule(node1, node2)
            if rule and rule[0] == "forbid":
                sink.reasons.append(Reason(f"forbidden by a fusionviz rule ({','.join(rule[1])})",
                                           "fusionviz.forbid"))
                rnd = self._round()
                if rnd is not None:
                    self.p.guard("can_fuse", rnd.on_can_fuse, node1, node2, False, sink)
                return False
            forced = rule is not None
            self.sinks.append(sink)
            self.can_fuse_depth += 1
            self.forcing += forced
            try:
                ok = orig(scheduler, node1, node2, *args, **kwargs)
            finally:
                self.forcing -= forced
                self.can_fuse_depth -= 1
                self.sinks.pop()
            rnd = self._round()
            if rnd is not None:
                self.p.guard("can_fuse", rnd.on_can_fuse, node1, node2, bool(ok), sink)
            return ok

        return can_fuse

    def _why_no_fuse(self, orig):
        hooks = self

        def why_call(why, reason, *args):
            orig(why, reason, *args)
            if hooks.sinks:
                sink = hooks.sinks[-1]
                hooks.p.guard("WhyNoFuse", sink.reasons.append,
                              _why_reason(reason, args, _swapped(why, sink.asked)))

        return why_call

    def _silent_check(self, label: str, bypass: bool = False):
        def factory(orig):
            def check(*args, **kwargs):
                if bypass and self.forcing:
                    return True  # a forced pair skips Inductor's fusion heuristics
                ok = orig(*args, **kwargs)
                if not ok and self.sinks:
                    self.sinks[-1].checks.append(label)
                return ok

            return check

        return factory

    def _cycle(self, orig):
        def will_fusion_create_cycle(scheduler, node1, node2, *args, **kwargs):
            with self._inside():
                cycle = orig(scheduler, node1, node2, *args, **kwargs)
            rnd = self._round()
            att = rnd.attempt_for(node1, node2) if rnd is not None else None
            if att is not None and cycle:
                att.cycle = True
            return cycle

        return will_fusion_create_cycle

    # -- benchmark fusion -------------------------------------------------------
    def _speedup_by_fusion(self, orig):
        def speedup_by_fusion(scheduler, node1, node2, *args, **kwargs):
            if self.whatif.force and self._rule(node1, node2):
                return _fuse_now(orig)
            rnd = self._round()
            att = rnd.attempt_for(node1, node2) if rnd is not None else None
            bench = BenchRecord(template=_is_template(node1) or _is_template(node2))
            self.benches.append(bench)
            self.sinks.append(bench.sink)
            try:
                with self._inside():
                    res = orig(scheduler, node1, node2, *args, **kwargs)
            except BaseException as e:
                if att is not None:
                    att.ok = False
                    att.reasons += (Reason(f"speedup_by_fusion raised {type(e).__name__}: {e}"[:300],
                                           "speedup_by_fusion"),)
                raise
            finally:
                self.sinks.pop()
                self.benches.pop()
            return self.p.guard("speedup_by_fusion", self._bench_result, res, att, bench) or res

        return speedup_by_fusion

    def _bench_result(self, res, att, bench: BenchRecord):
        fn = getattr(res, "callable_fn", None)
        if fn is None and callable(res):  # torch 2.8: a bare callable
            fn = res
        if fn is not None:
            bench.deferred = True
            wrapped = self._deferred(fn, bench)
            if res is fn:
                res = wrapped
            else:
                res.callable_fn = wrapped
        else:
            bench.decision = bool(getattr(res, "should_fuse", res))
        if att is not None and (bench.kernels or bench.deferred or not bench.decision):
            att.bench = bench
        return res

    def _deferred(self, fn, bench: BenchRecord):
        def decide():
            self.benches.append(bench)
            self.sinks.append(bench.sink)
            try:
                with self._inside():
                    bench.decision = bool(fn())
            finally:
                self.sinks.pop()
                self.benches.pop()
            return bench.decision

        return decide

    def _benchmark_module(self, orig):
        def benchmark_codegened_module(scheduler, module, *args, **kwargs):
            ms, path = orig(scheduler, module, *args, **kwargs)
            if self.benches:
                self.p.guard("benchmark", _add_bench_kernel, self.benches[-1], module, ms)
            return ms, path

        return benchmark_codegened_module

    @contextmanager
    def _inside(self):
        self.internal += 1
        try:
            yield
        finally:
            self.internal -= 1

    # -- what-if rules ----------------------------------------------------------------
    def _rule(self, node1, node2):
        """("forbid"|"force", pair) when a rule joins these two nodes, else None."""
        w = self.whatif
        if not (w.forbid or w.force) or not self._rules_apply():
            return None
        a, b = set(members(node1)), set(members(node2))
        for kind, rules in (("forbid", w.forbid), ("force", w.force)):
            for rule in rules:
                if matches(rule, a, b):
                    return kind, rule
        return None

    def _rules_apply(self) -> bool:
        """Forbid/force rules can be limited to one graph (node names repeat per graph)."""
        g = self.rec.current
        return self.whatif.graph is None or (g is not None and g.index == self.whatif.graph)

    def _inject_forced(self, nodes, pairs):
        """Put each forced pair first in the candidate list (adding it if absent)."""
        pairs = list(pairs)
        if not self._rules_apply():
            return pairs
        rnd = self._round()
        for rule in reversed(self.whatif.force):
            side = {}
            for n in nodes:
                names = set(members(n))
                for name in rule:
                    if name in names:
                        side[name] = n
            n1, n2 = side.get(rule[0]), side.get(rule[1])
            if n1 is None or n2 is None or n1 is n2:
                continue
            if getattr(n2, "min_order", 0) < getattr(n1, "min_order", 0):
                n1, n2 = n2, n1
            pairs = [p for p in pairs if {id(p[0]), id(p[1])} != {id(n1), id(n2)}]
            pairs.insert(0, (n1, n2))
            rnd.forced.add((id(n1), id(n2)))
        return pairs

    def _veto_unless_forced(self, orig):
        def veto(*args, **kwargs):
            return False if self.forcing else orig(*args, **kwargs)

        return veto

    def _keep_spills(self, orig):
        params = inspect.signature(orig).parameters

        def benchmark_codegened_module(*args, **kwargs):
            if "n_spills_threshold" in params:
                kwargs["n_spills_threshold"] = 2**30  # time spilling kernels too
            if "skip_perf_cache" in params:
                kwargs["skip_perf_cache"] = True  # an old memo may hold the veto
            return orig(*args, **kwargs)

        return benchmark_codegened_module

    # -- fusions and kernels ------------------------------------------------------
    def _fuse_two_nodes(self, orig):
        def fuse_two_nodes(scheduler, node1, node2, *args, **kwargs):
            with self._inside():
                fused = orig(scheduler, node1, node2, *args, **kwargs)
            rnd = self._round()
            if rnd is not None:
                self.p.guard("fusion", rnd.on_fused, node1, node2, fused)
            return fused

        return fuse_two_nodes

    def _backend_fuse(self, orig):
        return self._fuse_two_nodes(orig)

    def _define_kernel(self, backend: str):
        def factory(orig):
            def define_kernel(scheduling, src_code, node_schedule, *args, **kwargs):
                name = orig(scheduling, src_code, node_schedule, *args, **kwargs)
                g = self.rec.current
                if g is not None and not g.in_fuse_nodes:  # not a benchmark module
                    self.p.guard("kernel", self._kernel, g, backend, src_code, node_schedule, name, args)
                return name

            return define_kernel

        return factory

    def _kernel(self, g: GraphRecord, backend, src_code, node_schedule, name, args) -> None:
        from torch._inductor.virtualized import V

        if not isinstance(name, str):
            name = V.graph.wrapper_code.src_to_kernel.get(src_code, "")
        snodes = [n for n in node_schedule if hasattr(n, "get_nodes")]
        kernel = args[0] if args else None
        nbytes = None
        if hasattr(kernel, "estimate_kernel_num_bytes"):
            try:
                nbytes = int(kernel.estimate_kernel_num_bytes())
            except Exception:  # noqa: BLE001 - symbolic sizes
                nbytes = None
        g.add_kernel(name, backend, snodes, nbytes)

    def _extern_call(self, orig):
        def codegen_extern_call(scheduler, snode, *args, **kwargs):
            out = orig(scheduler, snode, *args, **kwargs)
            g = self.rec.current
            if g is not None:
                self.p.guard("extern", _add_extern, g, snode)
            return out

        return codegen_extern_call


def _is_template(snode) -> bool:
    try:
        return bool(snode.is_template())
    except Exception:  # noqa: BLE001
        return False


def _fuse_now(speedup_by_fusion):
    """'Fuse, no benchmark' in the return type of this torch's speedup_by_fusion."""
    result_cls = getattr(inspect.getmodule(speedup_by_fusion), "FusionResult", None)
    return result_cls.fuse(True) if result_cls is not None else True


def _why_reason(reason: str, args: tuple, swapped: bool = False) -> Reason:
    try:
        text = reason % args if args else reason
    except (TypeError, ValueError):
        text = f"{reason} {args}"
    return Reason(text=text, check="WhyNoFuse", swapped=swapped)


def _swapped(why, asked: tuple[str, str]) -> bool:
    """Whether this WhyNoFuse names the pair asked the other way round (its log line
    reads "cannot fuse b with a" for the scheduler's can_fuse(a, b))."""
    names = (getattr(why, "name1", None), getattr(why, "name2", None))
    return asked[0] != asked[1] and names == (asked[1], asked[0])


def _add_bench_kernel(bench: BenchRecord, module, ms: float) -> None:
    launchers = getattr(getattr(module, "triton_", None), "launchers", None) or []
    n_regs = getattr(launchers[0], "n_regs", None) if launchers else None
    n_spills = getattr(launchers[0], "n_spills", None) if launchers else None
    roles = ("a", "b", "fused")
    i = len(bench.kernels)
    role = f"fused choice {i}" if bench.template else (roles[i] if i < 3 else f"k{i}")
    bench.kernels.append(
        BenchKernel(
            role=role,
            ms=None if ms == float("inf") else float(ms),
            n_regs=None if n_regs is None else int(n_regs),
            n_spills=None if n_spills is None else int(n_spills),
        )
    )


def _add_extern(g: GraphRecord, snode) -> None:
    from fusionviz.model.capture.kernels import KernelRecord

    ir_node = getattr(snode, "node", None)
    py_name = str(getattr(ir_node, "python_kernel_name", "") or type(ir_node).__name__)
    name = f"{py_name}:{snode.get_name()}"
    g.kernels.append(KernelRecord(name=name, backend="extern", nodes=[snode.get_name()], extern=py_name))
