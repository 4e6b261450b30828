"""A capture session: graph lifecycle, runtime measurement, trace writing, progress.

Runs inside the user's process. The trace file is rewritten atomically after every
graph and every measurement, so a crash, abort or kill keeps what was captured.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import platform
import sys
import time
import traceback

import torch

from fusionviz.model.capture import large_bodies
from fusionviz.model.capture.baseline import (
    Baseline,
    fake_call,
    measure_eager,
    program_baseline,
    wrap_compiled,
)
from fusionviz.model.capture.caches import cache_facts
from fusionviz.model.capture.ddp_split import Splits
from fusionviz.model.capture.dynamo_reasons import DynamoReasons, compile_id
from fusionviz.model.capture.extern_calls import matmul_settings
from fusionviz.model.capture.graph_record import GraphRecord
from fusionviz.model.capture.kernels import complete_from_module, triton_launch_facts
from fusionviz.model.capture.replay_source import replay_source
from fusionviz.model.capture.step_profile import StepProfile
from fusionviz.model.capture.timing import clone_inputs, measure
from fusionviz.model.run.protocol import encode_progress
from fusionviz.model.run.settle import write_error_text
from fusionviz.model.trace import Capabilities, Problem, Script, Trace
from fusionviz.model.tracefile import io as trace_io
from fusionviz.model.tracefile.io import json_value

CONFIG_KEYS = (
    "max_autotune", "max_autotune_gemm", "max_autotune_pointwise", "benchmark_fusion",
    "benchmark_epilogue_fusion", "epilogue_fusion", "prologue_fusion", "aggressive_fusion",
    "loop_ordering_after_fusion", "max_fusion_size", "combo_kernels", "triton.cudagraphs",
    "triton.unique_kernel_names", "cpp.descriptive_names", "triton.descriptive_names",
    "realize_opcount_threshold", "score_fusion_memory_threshold",
    "cpu_backend", "cuda_backend", "compile_threads",
)  # and the caches (caches.cache_facts)


def _config_snapshot() -> dict:
    from torch._inductor import config

    out = {}
    for key in CONFIG_KEYS:
        obj = config
        try:
            for part in key.split("."):
                obj = getattr(obj, part)
        except AttributeError:
            continue
        out[key] = json_value(obj)
    out.update(cache_facts())
    return out


# Peak DRAM bandwidth (GB/s) of known GPUs, by a piece of the name torch reports; the
# first match wins (so the more specific names come first). Vendor data sheets.
_PEAK_DRAM_GB_S = (("H200", 4800), ("H100 PCIe", 2000), ("H100 NVL", 3900), ("H100", 3350),
                   ("GH200", 4000), ("B200", 8000), ("A100-SXM4-80GB", 2039),
                   ("A100 80GB PCIe", 1935), ("A100", 1555), ("L40S", 864), ("L4", 300),
                   ("A10G", 600), ("A10", 600), ("V100", 900), ("T4", 320))


def peak_dram_gb_s(device_name: str) -> float | None:
    """The GPU's peak DRAM bandwidth, from its memory clock and bus width when torch
    reports them, else from the table of known GPUs; None when unknown."""
    try:
        props = torch.cuda.get_device_properties(0)
        clock_khz, bus_bits = props.memory_clock_rate, props.memory_bus_width
        if clock_khz and bus_bits:
            return round(2 * clock_khz * 1e3 * bus_bits / 8 / 1e9, 1)  # double data rate
    except (AttributeError, RuntimeError, AssertionError):
        pass
    return next((float(gb) for key, gb in _PEAK_DRAM_GB_S if key in device_name), None)


def environment() -> dict:
    """torch/triton/python versions and the device the capture ran on."""
    env = {"torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform()}
    try:
        import triton

        env["triton"] = triton.__version__
    except Exception:  # noqa: BLE001
        env["triton"] = ""
    if torch.cuda.is_available():
        env["device_name"] = torch.cuda.get_device_name()
        env["cuda"] = torch.version.cuda or ""
        peak = peak_dram_gb_s(env["device_name"])
        if peak:
            env["peak_dram_gb_s"] = peak
    else:
        env["device_name"] = platform.processor() or platform.machine()
    return env


class Recorder:
    """Owns the trace being built; the hooks report graph events to it."""

    def __init__(self, out: str, script: Script, *, measure_runtime: bool = True,
                 emit=None, requested: dict | None = None,
                 what_if: tuple[str, ...] = ()) -> None:
        self.out = out
        self.script = script
        self.measure_runtime = measure_runtime
        self.emit = emit or (lambda line: None)
        self.requested = requested or {}
        self.what_if = tuple(what_if)  # measurements the user asked for ("reduce-overhead")
        self.muted = 0  # > 0 while fusionviz compiles for its own measurement: not recorded
        self.graphs: list[GraphRecord] = []
        self.baselines: dict[str, Baseline] = {}  # compile id → its Dynamo graph run eagerly
        self.entries: list = []  # what the user compiled, timed eager vs compiled (Entry)
        self.after_script: list = []  # measurements that wait for the script's end
        self.reasons = DynamoReasons()  # compile id → graph-break and recompile reasons
        self.splits = Splits()  # frames the DDP optimizer split into pieces
        self.step = StepProfile(self.graphs, self.on_error)  # one train step, profiled
        self.piece = None  # the piece compile_fx is compiling now (a Split), or None
        self.current: GraphRecord | None = None
        # FX passes that changed collectives, seen before the graph they belong to starts
        # lowering (post-grad passes run before GraphLowering): the next graph takes them
        self.pending_comm_passes: list = []
        self.problems: list[Problem] = []
        self.warnings: list[str] = []
        self.config: dict = {}
        self.env = environment()
        self.capabilities = Capabilities()
        self.t0 = time.perf_counter()
        self.write_error = ""  # why the last write of the trace failed ("" when it did not)
        self.kept: int | None = None  # graphs in the file as last written (None: never)

    @contextlib.contextmanager
    def mute(self):
        """Graphs compiled inside (fusionviz's own what-if compiles) are not recorded."""
        self.muted += 1
        try:
            yield
        finally:
            self.muted -= 1

    # -- events from hooks -----------------------------------------------------
    def on_error(self, where: str, tb: str) -> None:
        last = tb.strip().splitlines()[-1] if tb.strip() else where
        self.problems.append(Problem(where=where, message=last, traceback=tb[-4000:]))

    def progress(self, event: str, **fields) -> None:
        if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:  # one rank of several
            fields["rank"] = int(os.environ.get("RANK", "0") or 0)
        self.emit(encode_progress(event, **fields))

    def graph_started(self, graph_lowering) -> GraphRecord:
        cid = compile_id()
        kind = "backward" if getattr(graph_lowering, "is_backward", False) else (
            "inference" if getattr(graph_lowering, "is_inference", False) else "forward")
        g = GraphRecord(index=len(self.graphs), compile_id=cid, kind=kind)
        g.comm_passes, self.pending_comm_passes = self.pending_comm_passes, []
        g.aot_id = getattr(graph_lowering, "graph_id", None)
        g.split = self.piece or next(  # a backward: its forward's piece
            (f.split for f in self.graphs if f.aot_id is not None and f.aot_id == g.aot_id
             and f.compile_id == g.compile_id), None)
        try:
            g.large_bodies = large_bodies.op_counts(graph_lowering)
        except Exception:  # noqa: BLE001 - said among the problems; the graph goes on
            self.on_error("large bodies", traceback.format_exc())
        try:
            g.replay, g.replay_note = replay_source(graph_lowering)
        except Exception as e:  # noqa: BLE001 - a graph not replayable is still recorded
            g.replay_note = (f"its replay source could not be recorded: "
                             f"{type(e).__name__}: {e}")[:500]
        if not self.config:
            self.config = {**_config_snapshot(), **self.requested}
        self.guarded(self._note_matmul_settings)
        self.graphs.append(g)
        self.current = g
        self.progress("graph_start", graph=g.index, compile_id=g.compile_id, kind=kind)
        return g

    def _note_matmul_settings(self) -> None:
        """How fp32 matmuls run (TF32 or not) as this graph compiles, in ``env``: the
        script sets them after the recorder starts; a change between graphs is said."""
        settings = matmul_settings()
        changed = [f"{k} {self.env[k]} -> {v}" for k, v in settings.items()
                   if k in self.env and self.env[k] != v]
        if changed:
            self.warnings.append("the fp32 matmul settings changed between compiled graphs "
                                 f"({', '.join(changed)}); env holds the latest")
        self.env.update(settings)

    def graph_failed(self, g: GraphRecord, graph_lowering) -> None:
        g.warnings.append("Inductor raised while compiling this graph; it has no kernels")
        g.device = _device(graph_lowering)
        self.current = None
        self.save()

    def graph_done(self, g: GraphRecord, graph_lowering, module) -> None:
        self.current = None
        g.device = _device(graph_lowering)
        try:
            with open(module.__file__) as f:
                complete_from_module(g.kernels, f.read())
        except Exception:  # noqa: BLE001
            self.on_error("module source", traceback.format_exc())
        if not g.nodes:
            g.warnings.append("the scheduler's pre-fusion nodes were not seen (fuse_nodes hook)")
        elif not any(n.module or n.module_class for n in g.nodes):
            g.warnings.append("no module paths: no FX node of this graph carries an "
                              "nn_module_stack (nor fwd_nn_module_stack) on this torch")
        self._wrap_call(g, graph_lowering, module)
        self.save()
        self.progress("graph_done", graph=g.index, nodes=len(g.nodes), kernels=len(g.kernels),
                      rounds=len(g.rounds), compile_s=round(g.compile_s, 3))

    # -- runtime ------------------------------------------------------------------
    def _wrap_call(self, g: GraphRecord, graph_lowering, module) -> None:
        orig = getattr(module, "call", None)
        if orig is None:
            g.warnings.append("compiled module has no call(); runtime not measured")
            return
        gm = getattr(graph_lowering, "module", None)
        state = {"done": False}

        def call(args):
            if state["done"]:
                return self.step.call(g.index, orig, args)
            if fake_call(args):
                return orig(args)
            state["done"] = True
            self.guarded(self.step.first_call, g.index)
            inputs = self.guarded(clone_inputs, args) if self.measure_runtime else None
            out = orig(args)
            self.guarded(self._after_first_call, g, module, orig, inputs, gm)
            return out

        module.call = call

    def _after_first_call(self, g, module, orig, inputs, gm) -> None:
        for rec in g.kernels:
            if rec.backend == "triton":
                triton_launch_facts(rec, module)
        if inputs is not None:
            g.timing = measure(module, orig, inputs, gm, g.kernels, g.device)
            self.progress("timing", graph=g.index, compiled_ms=g.timing.compiled_ms,
                          eager_ms=g.timing.eager_ms)
        self.save()

    # -- the eager baseline: the graph Dynamo captured ----------------------------------
    def dynamo_graph(self, gm, compiled, piece=None):
        """``compiled`` (Inductor's function for Dynamo's graph ``gm``, or for one
        ``piece`` of it), timing ``gm`` eagerly after its first call."""
        key = baseline_key(compile_id(), piece)
        return wrap_compiled(compiled, gm, lambda g, inputs, grad: self.guarded(
            self._eager_baseline, key, g, inputs, grad))

    def _eager_baseline(self, key: str, gm, inputs, grad_enabled: bool) -> None:
        cuda = any(isinstance(a, torch.Tensor) and a.is_cuda for a in inputs)
        try:
            self.baselines[key] = measure_eager(gm, inputs, grad_enabled, cuda)
        except Exception as e:  # noqa: BLE001 - measuring must never break the user's run
            self.baselines[key] = Baseline(why_not=f"{type(e).__name__}: {e}")
        self.save()

    def add_entry(self, entry, replacing=None) -> None:
        """A compiled callable's eager-vs-compiled times (``entries.py``), in place of
        the entry ``replacing`` (the same object) where that one is held."""
        at = next((i for i, e in enumerate(self.entries) if e is replacing), None)
        if at is None:
            self.entries.append(entry)
        else:
            self.entries[at] = entry
        self.save()

    def run_after_script(self) -> None:
        """The measurements that had to wait until the user's script ended (a callable
        under CUDA graphs), each guarded."""
        waiting, self.after_script = self.after_script, []
        for fn in waiting:
            self.guarded(fn)

    def _program_baselines(self) -> dict[str, object]:
        """compile id -> the entry whose first call compiled that frame alone."""
        return {e.compile_ids[0]: e for e in self.entries if len(e.compile_ids) == 1}

    def guarded(self, fn, *args):
        try:
            return fn(*args)
        except Exception:  # noqa: BLE001 - measuring must never break the user's run
            self.on_error(getattr(fn, "__name__", "runtime"), traceback.format_exc())
            return None

    # -- the trace ------------------------------------------------------------------
    def trace(self) -> Trace:
        graphs = []
        programs = self._program_baselines()
        for g in self.graphs:
            try:
                graph = g.to_graph()
                baseline = self.baselines.get(baseline_key(g.compile_id, g.split))
                if baseline is not None:  # (an untimed graph stays untimed)
                    graph = dataclasses.replace(
                        graph, timing=baseline.apply(graph.timing, graph.kind))
                if g.compile_id in programs and g.split is None:
                    graph = dataclasses.replace(graph, timing=program_baseline(
                        graph.timing, graph.kind, programs[g.compile_id]))
                reasons = self.reasons.for_graph(g.compile_id)
                if g.split is not None and g.split.piece + 1 < g.split.pieces:
                    reasons = {}  # the frame's reasons go with its last piece
                if any(reasons.values()):
                    graph = dataclasses.replace(graph, **reasons)
                graphs.append(graph)
            except Exception:  # noqa: BLE001
                self.on_error(f"graph {g.index}", traceback.format_exc())
        return Trace(
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            script=self.script,
            env=self.env,
            config=self.config or dict(self.requested),
            capabilities=self.capabilities,
            graphs=tuple(graphs),
            problems=tuple(self.problems),
            warnings=tuple(self.warnings),
            entries=tuple(self.entries),
            step=self.step.timeline,
        )

    def save(self) -> Trace:
        """Rewrite the trace file (atomically: a failed write leaves the last good one)
        and return what it holds now; a failure is noted, never raised."""
        trace = self.trace()
        try:
            trace_io.save_trace(trace, self.out)
        except Exception as e:  # noqa: BLE001 - a full disk must not break the user's run
            why = write_error_text(e)
            if why != self.write_error:
                print(f"fusionviz: could not write the trace: {why}", file=sys.stderr)
            self.write_error = why
        else:
            self.write_error, self.kept = "", len(trace.graphs)
        return trace

    def finish(self, script: Script) -> Trace:
        """Write the final trace and say so; when it could not be written, the
        message says why and how many graphs the file kept."""
        self.script = script
        self.step.close("the script's end")
        trace = self.save()
        failed = {"write_error": self.write_error, "kept": self.kept} if self.write_error else {}
        self.progress("done", status=script.status, graphs=len(trace.graphs), **failed)
        return trace


def baseline_key(compile_id: str, piece) -> str:
    """Where a frame's Dynamo graph run eagerly is kept: by compile id, and by piece
    where the DDP optimizer split it (each piece is timed on its own)."""
    return compile_id if piece is None else f"{compile_id}#{piece.piece}"


def _device(graph_lowering) -> str:
    types = set(getattr(graph_lowering, "device_types", ()) or ())
    return "cuda" if "cuda" in types else (sorted(types)[0] if types else "cpu")
