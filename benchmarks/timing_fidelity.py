"""How faithful are fusionviz's recorded times? Each workload's trace against torch.profiler.

    python benchmarks/timing_fidelity.py [--workloads gpt2 llama mlp_block hub_branches]
        [--size full|tiny] [--device cuda|cpu|auto] [--out DIR] [--timeout SECONDS]

For every workload, three steps, each in its own process where it matters:

a. Capture: ``python -m fusionviz capture benchmarks/timing_fidelity.py -o
   DIR/NAME.json.gz --device D -- --step-child NAME ...`` (a child process; its output
   goes to DIR/NAME.capture.log). The captured script is this one, building the
   workload exactly as the reference child does (below): gpt2 and llama through
   ``benchmarks/workloads/{gpt2,llama}_train.py``'s ``make_step``, the bundled examples
   ``assets/examples/mlp_block.py`` and ``hub_branches.py`` rebuilt as their ``main()``
   does. It runs 3 compiled steps (the capture records the first) and then profiles
   more steps the way the reference child does (below), in the same process, so of
   the very kernels the trace timed, with the same autotuning choices:
   DIR/NAME.inprocess.json. On the GPU this is the reference the per-kernel and
   whole-graph ratios are taken against; the separate process's figures are printed
   after them (a separate compile may autotune a kernel differently: a consistent
   difference of one kernel there is a different kernel, not a timing error).
b. Reference: this script re-run as a second child (``--profile-child NAME``), so none
   of the capture's hooks are installed, with a fresh Inductor cache. It builds the same
   workload (gpt2/llama through their ``make_step``; the examples' model and inputs are
   rebuilt the way their ``main()`` does, from the classes/functions read with
   ``runpy.run_path``), compiled with default ``torch.compile``, then:
   3 warm-up steps; wall time per step = median of 20 steps, ``perf_counter`` around
   each step + ``torch.cuda.synchronize()``; then 5 steps under
   ``torch.profiler.profile(activities=[CPU, CUDA])``. Per kernel name: device ms per
   step = sum of ``device_time_total`` of the events whose ``device_type`` is CUDA / 5,
   launches per step = their count / 5; total device time per step = the sum over all
   of them (and "busy" = the union of their intervals). CPU-side ranges are kept too
   (calls, CPU ms, device ms of the kernels they launched): the extern kernels are
   found there. The same wall/device numbers are taken for the uncompiled workload
   (``compiled=False``): the eager reference. Written to DIR/NAME.profile.json.
   On the CPU there are no device events: the child compiles with
   ``torch._inductor.config.cpp.enable_kernel_profile = True`` so every C++ kernel
   runs inside a profiler range named ``graph_<id>_<kernel name>``, and the per-kernel
   reference is that range's CPU time (the range is a few ns of extra work per call).
c. Compare (here): the trace is read with ``fusionviz.model.tracefile.io.load_trace``.
   Trace kernel times (``Kernel.ms``: recorded ms per graph call, ``Kernel.calls``:
   launches per graph call; each graph runs once per step here) are SUMMED OVER GRAPHS
   BY KERNEL NAME, because the forward and backward graphs reuse names
   (``triton_poi_fused__to_copy_3`` can be in both) and the profiler only sees names.
   Triton (and, on the CPU, C++) kernels are matched by name. Extern kernels
   (``backend == "extern"``, named like ``extern_kernels.mm:op5``) run library kernels
   (cuBLAS, ...) under other names: they are matched only where the profiler has a
   CPU range named exactly the trace kernel's name (a ``record_function`` label, as
   fusionviz's newer capture adds around each extern call), else listed as "extern,
   unmatched by name"; and, as an approximate cross-check, all externs of one op are
   summed and compared with the profiler's ``aten::<op>`` ranges (the outermost ones).
   Printed per workload: the kernel table, the share of the profiler's device time
   covered by kernels whose recorded time is within 5% of the profiler's (target
   >= 95%), the whole-graph times (``Graph.timing`` fields, summed over graphs, read
   with getattr because they are being added) against the profiler's per-step device
   time and wall time, and eager (trace's eager vs the uncompiled reference).
   Everything goes to DIR/fidelity.json as well.

The script exits 0 whatever it finds (a failed capture or profile is reported and the
other workloads still run). It needs the repository checkout: fusionviz is run from
it (``PYTHONPATH`` is set to the repository root for the children).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
EXAMPLES = ROOT / "assets" / "examples"

WARMUP_STEPS = 3
PROFILED_STEPS = 5
WALL_STEPS = 20
TOLERANCE = 0.05  # "within 5%": |recorded / profiler - 1| <= TOLERANCE
TARGET_COVERAGE = 0.95
# Inductor's C++ kernel profile ranges are named graph_<id>_<kernel name>
CPP_RANGE = re.compile(r"^graph_\d+_(?P<kernel>(cpp|triton)_\w+)$")


@dataclass(frozen=True)
class Workload:
    """A workload: the script fusionviz captures, and how to pass it the size."""

    name: str
    script: Path
    how: str  # make_step (gpt2/llama modules) | mlp_block | hub_branches


WORKLOADS = {
    w.name: w
    for w in (
        Workload("gpt2", BENCH / "workloads" / "gpt2_train.py", "make_step"),
        Workload("llama", BENCH / "workloads" / "llama_train.py", "make_step"),
        Workload("mlp_block", EXAMPLES / "mlp_block.py", "mlp_block"),
        Workload("hub_branches", EXAMPLES / "hub_branches.py", "hub_branches"),
    )
}


# --------------------------------------------------------------------------------------
# b. The profile child: builds the workload without fusionviz and profiles it.
# --------------------------------------------------------------------------------------


def build_steps(w: Workload, device: str, size: str, compiled: bool):
    """A zero-arg step of the workload, compiled with default torch.compile or eager."""
    import importlib.util
    import runpy

    import torch

    if w.how == "make_step":
        spec = importlib.util.spec_from_file_location(w.script.stem, w.script)
        mod = importlib.util.module_from_spec(spec)
        sys.modules[w.script.stem] = mod  # dataclasses look their module up
        spec.loader.exec_module(mod)
        return mod.make_step(device, compiled=compiled, size=size)
    # The bundled examples expose their model but run it only in main(): read their
    # definitions (not as __main__) and rebuild the model and inputs as main() does.
    g = runpy.run_path(str(w.script))
    torch.manual_seed(0)
    if w.how == "mlp_block":
        dim, hidden, tokens = (1024, 4096, 8192) if device == "cuda" else (64, 256, 128)
        model = g["GatedMLPBlock"](dim, hidden).to(device)
        x = torch.randn(tokens, dim, device=device, requires_grad=True)
        fn = torch.compile(model) if compiled else model

        def mlp_step():
            model.zero_grad(set_to_none=True)
            x.grad = None
            out = fn(x)
            out.sum().backward()  # as in main(): the sum is outside the compiled module
            return out.detach()

        return mlp_step
    n = 256 if size == "tiny" else (4096 if device == "cuda" else 256)
    x = torch.randn(n, n, device=device)
    wt = torch.randn(n, device=device)
    fn = torch.compile(g["hub_model"]) if compiled else g["hub_model"]
    return lambda: fn(x, wt)


def _outermost(evt) -> bool:
    """True unless a CPU ancestor has the same name (no double count of nested ranges)."""
    p = evt.cpu_parent
    while p is not None:
        if p.name == evt.name:
            return False
        p = p.cpu_parent
    return True


def _union_ms(intervals: list[tuple[float, float]]) -> float:
    """Length (ms) of the union of [start, end] µs intervals: time any kernel ran."""
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total / 1e3


def measure_step(step, device: str) -> dict:
    """Warm-up, wall-time median and a profiled run of ``step`` (see the docstring)."""
    import torch
    from torch.autograd import DeviceType
    from torch.profiler import ProfilerActivity, profile

    cuda = device == "cuda"

    def sync():
        if cuda:
            torch.cuda.synchronize()

    load = os.getloadavg()[0]  # a busy machine (other processes) makes CPU times unreliable
    for _ in range(WARMUP_STEPS):
        step()
    sync()
    walls = []
    for _ in range(WALL_STEPS):
        t0 = time.perf_counter()
        step()
        sync()
        walls.append((time.perf_counter() - t0) * 1e3)
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        for _ in range(PROFILED_STEPS):
            step()
        sync()
    n = PROFILED_STEPS
    kernels: dict[str, dict] = defaultdict(lambda: {"ms": 0.0, "launches": 0.0})
    ranges: dict[str, dict] = defaultdict(
        lambda: {"calls": 0.0, "cpu_ms": 0.0, "device_ms": 0.0})
    spans = []
    for e in prof.events():
        if e.device_type == DeviceType.CUDA:  # a device kernel, copy or memset
            k = kernels[e.name]
            k["ms"] += e.device_time_total / 1e3 / n
            k["launches"] += 1 / n
            spans.append((e.time_range.start, e.time_range.end))
        elif e.device_type == DeviceType.CPU and not e.is_async and _outermost(e):
            r = ranges[e.name]
            r["calls"] += 1 / n
            r["cpu_ms"] += e.cpu_time_total / 1e3 / n
            r["device_ms"] += e.device_time_total / 1e3 / n if cuda else 0.0
    if not cuda:
        # CPU: the C++ kernels' own profiler ranges stand in for device kernels
        for name, r in ranges.items():
            m = CPP_RANGE.match(name)
            if m:
                k = kernels[m["kernel"]]
                k["ms"] += r["cpu_ms"]
                k["launches"] += r["calls"]
    return {
        "wall_ms": statistics.median(walls),
        "wall_ms_all": walls,
        "device_ms": sum(k["ms"] for k in kernels.values()) if cuda else None,
        "device_busy_ms": _union_ms(spans) / n if cuda else None,
        "kernel_ms_sum": sum(k["ms"] for k in kernels.values()),
        "profiled_steps": n,
        "loadavg_1m": load,
        "cores": os.cpu_count(),
        "kernels": dict(kernels),
        "ranges": dict(ranges),
    }


def profile_child(opts: argparse.Namespace) -> int:
    """Entry point of the reference child: writes DIR/NAME.profile.json."""
    import gc

    import torch

    w = WORKLOADS[opts.profile_child]
    device = opts.device
    torch._inductor.config.force_disable_caches = True  # as the capture does
    notes = []
    if device == "cpu":
        torch._inductor.config.cpp.enable_kernel_profile = True
        notes.append("CPU: per-kernel times are the CPU time of Inductor's C++ kernel "
                     "profiler ranges (config.cpp.enable_kernel_profile); no device time")
    result = {
        "workload": w.name,
        "device": device,
        "size": opts.size,
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name() if device == "cuda" else None,
        "method": {
            "warmup_steps": WARMUP_STEPS,
            "wall": f"median of {WALL_STEPS} steps, perf_counter + cuda synchronize",
            "profile": f"{PROFILED_STEPS} steps under torch.profiler (CPU"
                       + (", CUDA)" if device == "cuda" else ")"),
            "kernel ms": "sum of device_time_total of device_type CUDA events / steps"
                         if device == "cuda" else "CPU time of graph_<id>_<kernel> ranges",
        },
        "notes": notes,
    }
    for label, compiled in (("compiled", True), ("eager", False)):
        t0 = time.perf_counter()
        step = build_steps(w, device, opts.size, compiled)
        result[label] = measure_step(step, device)
        result[label]["total_s"] = time.perf_counter() - t0
        del step
        gc.collect()
        if device == "cuda":
            torch.cuda.empty_cache()
        print(f"{w.name} {label}: wall {result[label]['wall_ms']:.3f} ms/step", flush=True)
    path = Path(opts.out) / f"{w.name}.profile.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"profile written to {path}")
    return 0


def step_child(opts: argparse.Namespace) -> int:
    """Entry point of the capture child (run by ``fusionviz capture``): three compiled
    steps (the capture records the first), then the same profile as the reference
    child, of the same compiled kernels, written to DIR/NAME.inprocess.json."""
    w = WORKLOADS[opts.step_child]
    step = build_steps(w, opts.device, opts.size, compiled=True)
    for i in range(3):
        out = step()
        print(f"step {i}: {out.float().sum().item():.4f}", flush=True)
    result = {"workload": w.name, "device": opts.device, "compiled": measure_step(step, opts.device)}
    path = Path(opts.out) / f"{w.name}.inprocess.json"
    path.write_text(json.dumps(result, indent=1))
    print(f"in-process profile written to {path}")
    return 0


# --------------------------------------------------------------------------------------
# a. and b. from the parent: run the children.
# --------------------------------------------------------------------------------------


def run_child(argv: list[str], log: Path, timeout: float, cache_dir: str) -> tuple[int, str]:
    """Run ``argv`` from the repository root, output to ``log``; (exit code, tail)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH")) if p)
    env["TORCHINDUCTOR_CACHE_DIR"] = cache_dir  # fresh: nothing served from a cache
    env["TRITON_CACHE_DIR"] = os.path.join(cache_dir, "triton")
    with open(log, "w") as f:
        f.write("$ " + " ".join(argv) + "\n")
        f.flush()
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=f, stderr=subprocess.STDOUT,
                                start_new_session=True)
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # our own child's process group
            proc.wait()
            code = -9
    lines = log.read_text(errors="replace").splitlines()
    return code, "\n".join(lines[-15:])


def capture(w: Workload, opts, out: Path) -> dict:
    trace = out / f"{w.name}.json.gz"
    # The captured script is this one as a step child: it builds the workload as the
    # reference child does, and profiles its compiled steps after the capture.
    argv = [sys.executable, "-m", "fusionviz", "capture", str(Path(__file__).resolve()),
            "-o", str(trace), "--device", opts.device, "--timeout", str(opts.timeout),
            "--", "--step-child", w.name, "--device", opts.device, "--size", opts.size,
            "--out", str(out)]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fid-cache-") as cache:
        code, tail = run_child(argv, out / f"{w.name}.capture.log", opts.timeout + 120, cache)
    info = {"argv": argv, "exit_code": code, "seconds": time.perf_counter() - t0,
            "trace": str(trace)}
    print(f"  capture: exit {code} in {info['seconds']:.0f} s -> {trace}")
    if code != 0:
        print("  capture output (tail):\n    " + tail.replace("\n", "\n    "))
    return info


def reference(w: Workload, opts, out: Path) -> dict:
    argv = [sys.executable, str(Path(__file__).resolve()), "--profile-child", w.name,
            "--device", opts.device, "--size", opts.size, "--out", str(out)]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="fid-cache-") as cache:
        code, tail = run_child(argv, out / f"{w.name}.profile.log", opts.timeout, cache)
    path = out / f"{w.name}.profile.json"
    print(f"  profile: exit {code} in {time.perf_counter() - t0:.0f} s -> {path}")
    if code != 0 or not path.exists():
        print("  profile output (tail):\n    " + tail.replace("\n", "\n    "))
        return {}
    return json.loads(path.read_text())


# --------------------------------------------------------------------------------------
# c. Compare.
# --------------------------------------------------------------------------------------


TIMING_FIELDS = ("compiled_device_ms", "compiled_wall_ms", "compiled_ms",
                 "eager_device_ms", "eager_wall_ms", "eager_ms")


def extern_op(name: str) -> str:
    """The aten op an extern kernel runs: ``extern_kernels.mm:op5`` -> ``aten::mm``."""
    base = name.rsplit(":", 1)[0].removeprefix("torch.ops.")
    if base.startswith("extern_kernels."):
        return "aten::" + base.split(".")[1]
    if base.startswith("aten."):
        return "aten::" + base.split(".")[1]
    return base


def main_ref(measured: dict, cuda: bool):
    """What ``Timing.compiled_ms``/``eager_ms`` mean: device-busy time per call on the
    GPU, wall time per call on the CPU; the reference to compare each with."""
    return measured.get("device_busy_ms") if cuda else measured.get("wall_ms")


def ratio(a, b):
    return a / b if a is not None and b else None


def within(r) -> bool:
    return r is not None and abs(r - 1.0) <= TOLERANCE


def trace_kernels(trace) -> dict[str, dict]:
    """Trace kernels summed over graphs by name: ms, launches, backend, graphs."""
    out: dict[str, dict] = {}
    for g in trace.graphs:
        for k in g.kernels:
            row = out.setdefault(k.name, {"ms": None, "launches": 0, "backend": k.backend,
                                          "kind": k.kind, "graphs": [], "spread": ()})
            if len(k.ms_spread) == 2:  # one launch's (min, max), over graphs
                lo, hi = row["spread"] or k.ms_spread
                row["spread"] = (min(lo, k.ms_spread[0]), max(hi, k.ms_spread[1]))
            if k.ms is not None:
                row["ms"] = (row["ms"] or 0.0) + k.ms
            row["launches"] += k.calls
            row["graphs"].append(g.index)
    return out


def graph_timing(trace) -> dict:
    """Each Timing field summed over graphs (None where no graph has it)."""
    sums: dict = {}
    for f in TIMING_FIELDS:
        values = [getattr(g.timing, f, None) if g.timing is not None else None
                  for g in trace.graphs]
        have = [v for v in values if v is not None]
        sums[f] = sum(have) if have else None
        sums[f + "_graphs"] = f"{len(have)}/{len(values)}"
    return sums


def compare(trace, prof: dict, device: str) -> dict:
    """Match the trace's kernels to the profiler's, and whole graphs to whole steps."""
    cuda = device == "cuda"
    comp = prof["compiled"]
    pk, pr = comp["kernels"], comp["ranges"]
    tk = trace_kernels(trace)
    rows, extern_unmatched = [], []
    for name, t in tk.items():
        if t["backend"] == "extern":
            r = pr.get(name)  # a record_function label named exactly like the kernel
            if r is None:
                extern_unmatched.append(name)
                continue
            p_ms = r["device_ms"] if cuda else r["cpu_ms"]
            p_launch, how = r["calls"], "label"
        elif name in pk:
            p_ms, p_launch, how = pk[name]["ms"], pk[name]["launches"], "name"
        else:
            p_ms, p_launch, how = None, None, "not in profile"
        rows.append({"name": name, "backend": t["backend"], "graphs": t["graphs"],
                     "launches_trace": t["launches"], "launches_profiler": p_launch,
                     "recorded_ms": t["ms"], "profiler_ms": p_ms,
                     "ratio": ratio(t["ms"], p_ms), "matched_by": how,
                     "launch_spread": t["spread"]})
    # Externs grouped by aten op against the profiler's outermost aten::<op> ranges.
    by_op: dict[str, dict] = {}
    for name in extern_unmatched:
        t = tk[name]
        op = by_op.setdefault(extern_op(name), {"kernels": [], "recorded_ms": None,
                                                "launches_trace": 0})
        op["kernels"].append(name)
        op["launches_trace"] += t["launches"]
        if t["ms"] is not None:
            op["recorded_ms"] = (op["recorded_ms"] or 0.0) + t["ms"]
    for op_name, op in by_op.items():
        r = pr.get(op_name)
        op["profiler_ms"] = (r["device_ms"] if cuda else r["cpu_ms"]) if r else None
        op["launches_profiler"] = r["calls"] if r else None
        op["ratio"] = ratio(op["recorded_ms"], op["profiler_ms"])
    matched = {r["name"] for r in rows if r["profiler_ms"] is not None}
    # Denominator: all device time per step on CUDA; on the CPU, the C++ kernels' ranges.
    total = comp["device_ms"] if cuda else comp["kernel_ms_sum"]
    close = sum(r["profiler_ms"] for r in rows if within(r["ratio"]))
    close_ops = sum(o["profiler_ms"] for o in by_op.values() if within(o["ratio"]))
    by_name = sum(r["profiler_ms"] for r in rows if r["profiler_ms"] is not None)
    # profiler kernels no trace kernel has the name of (eager work, library kernels)
    only_prof = sorted(((n, k["ms"], k["launches"]) for n, k in pk.items()
                        if n not in matched), key=lambda x: -x[1])
    gt = graph_timing(trace)
    eager = prof.get("eager", {})
    whole = {
        "trace": gt,
        "profiler_compiled_wall_ms": comp["wall_ms"],
        "profiler_compiled_device_ms": comp["device_ms"],
        "profiler_compiled_busy_ms": comp["device_busy_ms"],
        "profiler_eager_wall_ms": eager.get("wall_ms"),
        "profiler_eager_device_ms": eager.get("device_ms"),
        "profiler_eager_busy_ms": eager.get("device_busy_ms"),
    }
    whole["ratios"] = {
        "compiled_device_ms / profiler device": ratio(gt["compiled_device_ms"],
                                                      comp["device_ms"]),
        "compiled_wall_ms / profiler wall": ratio(gt["compiled_wall_ms"], comp["wall_ms"]),
        "compiled_ms / reference": ratio(gt["compiled_ms"], main_ref(comp, cuda)),
        "eager_device_ms / eager device": ratio(gt["eager_device_ms"], eager.get("device_ms")),
        "eager_wall_ms / eager wall": ratio(gt["eager_wall_ms"], eager.get("wall_ms")),
        "eager_ms / reference": ratio(gt["eager_ms"], main_ref(eager, cuda)),
    }
    load, cores = comp.get("loadavg_1m"), comp.get("cores") or 1
    busy = ""
    if load is not None and load > 0.5 * cores + 1:
        busy = (f"the machine was busy while profiling (1-minute load {load:.1f} on "
                f"{cores} cores): CPU-side times are unreliable")
    return {
        "busy_machine": busy,
        "kernels": sorted(rows, key=lambda r: -(r["profiler_ms"] or 0.0)),
        "extern_unmatched_by_name": extern_unmatched,
        "extern_by_op": by_op,
        "profiler_only": [{"name": n, "ms": ms, "launches": la} for n, ms, la in only_prof],
        "reference_total_ms": total,
        "coverage_within_5pct": close / total if total else None,
        "coverage_within_5pct_with_extern_ops": (close + close_ops) / total if total else None,
        "coverage_matched_by_name": by_name / total if total else None,
        "whole_graph": whole,
        "graphs": [{"index": g.index, "kind": g.kind, "compile_id": g.compile_id,
                    "kernels": len(g.kernels),
                    "method": getattr(g.timing, "method", None)} for g in trace.graphs],
    }


# --------------------------------------------------------------------------------------
# Printing.
# --------------------------------------------------------------------------------------


def fmt(v, spec=".4f") -> str:
    return "-" if v is None else format(v, spec)


def pct(v) -> str:
    return "-" if v is None else f"{100 * v:.1f}%"


def short(name: str, width: int = 58) -> str:
    return name if len(name) <= width else name[: width - 3] + "..."


def print_report(name: str, res: dict, device: str, brief: bool = False) -> None:
    cuda = device == "cuda"
    if brief:
        print_totals(res, device)
        return
    unit = "device ms" if cuda else "CPU ms"
    print("\n  graphs in the trace: " + ", ".join(
        f"{g['index']} {g['kind']} ({g['compile_id']}, {g['kernels']} kernels)"
        for g in res["graphs"]))
    methods = {g["method"] for g in res["graphs"] if g["method"]}
    print(f"  trace timing method: {', '.join(sorted(methods)) or '-'}")
    print(f"  kernels (trace ms summed over graphs by name; profiler {unit} per step):")
    print(f"    {'name':<58} {'launch t/p':>11} {'recorded':>9} {'profiler':>9} {'ratio':>7}"
          "   one launch (trace min-max)")
    for r in res["kernels"]:
        lp = r["launches_profiler"]
        launches = f"{r['launches_trace']}/{'-' if lp is None else f'{lp:g}'}"
        flag = " ok" if within(r["ratio"]) else ""
        tag = "" if r["matched_by"] == "name" else f"  [{r['matched_by']}]"
        print(f"    {short(r['name']):<58} {launches:>11} {fmt(r['recorded_ms']):>9} "
              f"{fmt(r['profiler_ms']):>9} {fmt(r['ratio'], '.2f'):>7}{flag:3}{tag}"
              + ("   {:.4f}-{:.4f}".format(*r["launch_spread"]) if r["launch_spread"] else ""))
    if res["extern_unmatched_by_name"]:
        print(f"  extern, unmatched by name ({len(res['extern_unmatched_by_name'])} kernels; "
              "no profiler range carries their name). Summed by aten op, approximate:")
        for op, o in sorted(res["extern_by_op"].items()):
            lp = o["launches_profiler"]
            launches = f"{o['launches_trace']}/{'-' if lp is None else f'{lp:g}'}"
            label = f"{op} ({len(o['kernels'])} externs)"
            print(f"    {short(label):<58} {launches:>11} "
                  f"{fmt(o['recorded_ms']):>9} {fmt(o['profiler_ms']):>9} "
                  f"{fmt(o['ratio'], '.2f'):>7}{' ok' if within(o['ratio']) else ''}")
    if res["busy_machine"]:
        print(f"  NOTE: {res['busy_machine']}")
    if res["profiler_only"]:
        top = res["profiler_only"][:8]
        print(f"  in the profile only ({len(res['profiler_only'])} names; eager work "
              "around the graphs, library kernels of externs), largest:")
        for p in top:
            print(f"    {short(p['name']):<58} {p['launches']:>11g} {'':>9} "
                  f"{fmt(p['ms']):>9}")
    print_totals(res, device)


def print_totals(res: dict, device: str) -> None:
    """Coverage and whole-graph lines of a comparison."""
    cuda = device == "cuda"
    cov = res["coverage_within_5pct"]
    verdict = "-" if cov is None else ("PASS" if cov >= TARGET_COVERAGE else "FAIL")
    denom = ("all device time per step" if device == "cuda"
             else "CPU time of the C++ kernel ranges per step")
    print(f"  coverage: {pct(cov)} of {fmt(res['reference_total_ms'], '.3f')} ms "
          f"({denom}) is in kernels within 5% [target >= 95%: {verdict}]; "
          f"{pct(res['coverage_within_5pct_with_extern_ops'])} counting extern ops "
          f"within 5%; {pct(res['coverage_matched_by_name'])} matched by name at all")
    w = res["whole_graph"]
    t = w["trace"]
    print("  whole graphs (trace: sum over graphs of graph.timing; reference: per step; "
          "compiled_ms/eager_ms are device-busy on the GPU, wall on the CPU):")
    lines = [
        ("compiled device", "compiled_device_ms", w["profiler_compiled_device_ms"]),
        ("compiled wall", "compiled_wall_ms", w["profiler_compiled_wall_ms"]),
        ("compiled (compiled_ms)", "compiled_ms", w["profiler_compiled_busy_ms"] if cuda
         else w["profiler_compiled_wall_ms"]),
        ("eager device", "eager_device_ms", w["profiler_eager_device_ms"]),
        ("eager wall", "eager_wall_ms", w["profiler_eager_wall_ms"]),
        ("eager (eager_ms)", "eager_ms", w["profiler_eager_busy_ms"] if cuda
         else w["profiler_eager_wall_ms"]),
    ]
    for label, field, ref in lines:
        print(f"    {label:<24} trace {fmt(t[field], '.3f'):>9} ms "
              f"({t[field + '_graphs']} graphs)   reference {fmt(ref, '.3f'):>9} ms   "
              f"ratio {fmt(ratio(t[field], ref), '.2f')}")
    if device == "cuda":
        print(f"    (profiler device time is the sum of kernel durations; busy time, the "
              f"union of their intervals: {fmt(w['profiler_compiled_busy_ms'], '.3f')} ms)")
    else:
        print("    (CPU: no device events; device rows compare nothing)")


def print_method(opts) -> None:
    print(f"timing fidelity: fusionviz trace vs torch.profiler, device {opts.device}, "
          f"size {opts.size}")
    print(f"  reference: separate process without capture hooks; {WARMUP_STEPS} warm-up "
          f"steps, wall = median of {WALL_STEPS} steps (perf_counter + synchronize), "
          f"{PROFILED_STEPS} profiled steps")
    if opts.device == "cuda":
        print("  per-kernel reference: device_time_total of CUDA events by name / steps")
    else:
        print("  per-kernel reference (CPU): CPU time of Inductor's C++ kernel ranges "
              "(cpp.enable_kernel_profile); device time is CUDA-only")
    print("  trace kernels with the same name in several graphs are summed before "
          "comparing; ratio = recorded / profiler; 'ok' = within 5%")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workloads", nargs="+", choices=tuple(WORKLOADS),
                    default=list(WORKLOADS))
    ap.add_argument("--size", choices=("full", "tiny"), default="full")
    ap.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    ap.add_argument("--out", default="fidelity-out", help="folder for traces and results")
    ap.add_argument("--timeout", type=float, default=3600.0,
                    help="seconds allowed to each capture and each profile child")
    ap.add_argument("--profile-child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--step-child", default=None, help=argparse.SUPPRESS)
    opts = ap.parse_args()
    if opts.device == "auto":
        import torch

        opts.device = "cuda" if torch.cuda.is_available() else "cpu"
    out = Path(opts.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    opts.out = str(out)
    if opts.profile_child:
        return profile_child(opts)
    if opts.step_child:
        return step_child(opts)

    if str(ROOT) not in sys.path:  # run from the checkout: fusionviz need not be installed
        sys.path.insert(0, str(ROOT))
    from fusionviz.model.tracefile.io import load_trace

    print_method(opts)
    results: dict = {"device": opts.device, "size": opts.size, "tolerance": TOLERANCE,
                     "target_coverage": TARGET_COVERAGE, "workloads": {}}
    for name in opts.workloads:
        w = WORKLOADS[name]
        print(f"\n=== {name}: {w.script.relative_to(ROOT)} (size {opts.size})")
        entry: dict = {"capture": capture(w, opts, out)}
        prof = reference(w, opts, out)
        entry["profile"] = str(out / f"{name}.profile.json") if prof else None
        results["workloads"][name] = entry
        try:
            trace = load_trace(entry["capture"]["trace"])
        except Exception as e:  # noqa: BLE001 - report and go on with the next workload
            print(f"  cannot read the trace: {e}")
            entry["error"] = f"trace: {e}"
            continue
        entry["script_status"] = trace.script.status
        if trace.script.status != "ok":
            print(f"  note: the captured script ended '{trace.script.status}': "
                  f"{trace.script.message}")
        if not prof:
            entry["error"] = "profile child failed (see its log)"
            continue
        inproc = out / f"{name}.inprocess.json"
        same = (json.loads(inproc.read_text())["compiled"]
                if opts.device == "cuda" and inproc.exists() else None)
        try:
            res = compare(trace, prof if same is None else {**prof, "compiled": same},
                          opts.device)
            other = compare(trace, prof, opts.device) if same is not None else None
        except Exception as e:  # noqa: BLE001
            print(f"  comparison failed: {type(e).__name__}: {e}")
            entry["error"] = f"compare: {e}"
            continue
        entry.update(res)
        entry["reference"] = "capture's process" if same is not None else "separate process"
        print(f"  reference: {entry['reference']}")
        print_report(name, res, opts.device)
        if other is not None:
            entry["separate_process"] = other
            print("  against the separate process (its own compile and autotuning):")
            print_report(name, other, opts.device, brief=True)
    path = out / "fidelity.json"
    path.write_text(json.dumps(results, indent=1, default=str))
    print("\nsummary:")
    for name, e in results["workloads"].items():
        if "error" in e:
            print(f"  {name:<14} {e['error']}")
            continue
        wg = e["whole_graph"]
        print(f"  {name:<14} coverage within 5%: {pct(e['coverage_within_5pct']):>6}  "
              f"(+extern ops {pct(e['coverage_within_5pct_with_extern_ops']):>6})  "
              f"compiled wall ref {fmt(wg['profiler_compiled_wall_ms'], '.3f')} ms, "
              f"eager wall ref {fmt(wg['profiler_eager_wall_ms'], '.3f')} ms")
    print(f"results written to {path}")
    return 0


if __name__ == "__main__":
    main()
    sys.exit(0)  # always 0: the report is the result
