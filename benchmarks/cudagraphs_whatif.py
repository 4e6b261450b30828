"""Is ``--what-if reduce-overhead`` right? Each model captured with it, against plain runs.

    python benchmarks/cudagraphs_whatif.py [--models mlp_train resnet50_train ...]
        [--size full|tiny] [--device cuda|cpu] [--out DIR] [--timeout SECONDS]

For every workload of ``benchmarks/eager_models/`` named:

a. Capture: ``python -m fusionviz capture SCRIPT -o DIR/NAME.json.gz --what-if
   reduce-overhead -- --size S``: the trace's first ``Entry`` holds the model timed
   eager, as compiled (default mode) and compiled again with CUDA graphs, interleaved,
   in the capturing process (wall time per forward and per backward).
b. The same capture without ``--what-if`` (``--plain`` models only): the what-if must
   add no graph, no compile id and no recompile to the trace.
c. Reference: ``python SCRIPT --size S --modes-wall DIR/NAME.modes.json``, a separate
   process without fusionviz: the module eager, ``torch.compile`` (default) and
   ``torch.compile(mode="reduce-overhead")``, steps interleaved, forward and backward
   timed apart (``benchmarks/eager_models/_harness.py``).
d. Compare each side's recorded wall median with the reference's, and the CUDA graphs
   speedup over the compiled step, recorded against reference.

With ``--user-mode`` the user compiles with ``mode="reduce-overhead"`` themselves
(``SCRIPT --compile-mode reduce-overhead``) and no what-if is asked: the entry's
compiled side then replays CUDA graphs, timed after the script has ended. Its eager and
compiled figures are compared with the reference's eager and CUDA graphs ones, and the
loss the captured script printed with the one a plain run of the same command printed
(the capture must not change it).

Printed as a table and written to DIR/cudagraphs_whatif.json (or
DIR/user_cudagraphs.json). Exits 0 whatever it finds.
"""

from __future__ import annotations

import functools
import json
import re
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from eager_fidelity import _child, _fmt, model_runs, result_row

MODELS = ("mlp_train", "resnet50_train", "gpt2_train", "bert_fp16_infer")
PLAIN = ("mlp_train",)
SIDES = (("eager", "eager"), ("compiled", "compiled"), ("cudagraphs", "cudagraphs"))
# --user-mode: the reference side, the entry's field
USER_SIDES = (("eager", "eager"), ("cudagraphs", "compiled"))
USER_MODE = ("--compile-mode", "reduce-overhead", "--steps", "5")


def _median(samples) -> float | None:
    return statistics.median(samples.wall) if samples and samples.wall else None


def compare(trace_path: Path, ref_path: Path, plain_path: Path | None,
            sides=SIDES) -> dict:
    from fusionviz.model.report.eager_cudagraphs import graphed
    from fusionviz.model.report.eager_explain import explain
    from fusionviz.model.tracefile.io import load_trace

    trace = load_trace(str(trace_path))
    ref = json.loads(ref_path.read_text())
    if not trace.entries:
        return {"error": "no entry in the trace"}
    e = trace.entries[0]
    ex = explain(trace, e)
    g = graphed(e)
    out: dict = {"entry": e.name, "note": e.note, "cudagraphs_note": e.cudagraphs_note,
                 "headline": ex.headline(), "findings": [f.title for f in ex.findings],
                 "fixes": [f.fix for f in ex.findings if f.fix],
                 "graphs": [(gr.kind, gr.compile_id) for gr in trace.graphs],
                 "recompiles": sum(1 for gr in trace.graphs if gr.recompile_reasons)}
    for side, field in sides:
        for part in ("forward", "backward"):
            samples = getattr(e, f"{field}_{part}")
            rec, want = _median(samples), ref.get(f"{side}_{part}_wall_ms")
            out[f"{side}_{part}_recorded"] = rec
            out[f"{side}_{part}_reference"] = want
            out[f"{side}_{part}_ratio"] = rec / want if rec and want else None
    if g is not None and "wall" in g.step:
        compiled, graphs_ms = g.step["wall"]
        out["speedup_recorded"] = compiled / graphs_ms
        out["verdict"] = g.verdict("wall")
    ref_c = (ref.get("compiled_forward_wall_ms") or 0) + (ref.get("compiled_backward_wall_ms")
                                                          or 0)
    ref_g = (ref.get("cudagraphs_forward_wall_ms") or 0) + (
        ref.get("cudagraphs_backward_wall_ms") or 0)
    out["speedup_reference"] = ref_c / ref_g if ref_g else None
    if plain_path is not None and plain_path.exists():
        plain = load_trace(str(plain_path))
        out["plain_graphs"] = [(gr.kind, gr.compile_id) for gr in plain.graphs]
        out["same_graphs_as_plain"] = out["plain_graphs"] == out["graphs"]
    return out


def _loss(log: Path) -> str | None:
    """The exact loss a workload printed (``done: ... (exactly X)``)."""
    found = re.findall(r"\(exactly ([^)]*)\)", log.read_text()) if log.exists() else []
    return found[-1] if found else None


def user_mode(argv: list[str]) -> int:
    """``--user-mode``: the script itself compiles with CUDA graphs."""
    opts, out, runs = model_runs(argv, MODELS[:2], "user_cudagraphs_out")
    results = {}
    for name, script in runs:
        trace, ref = out / f"{name}.json.gz", out / f"{name}.modes.json"
        args = ["--size", opts.size, *USER_MODE]
        rc_c, s_c = _child([sys.executable, "-m", "fusionviz", "capture", str(script),
                            "--device", opts.device, "-o", str(trace), "--", *args],
                           out / f"{name}.capture.log", opts.timeout)
        _child([sys.executable, str(script), "--device", opts.device, *args],
               out / f"{name}.plain.log", opts.timeout)
        rc_r, s_r = _child([sys.executable, str(script), "--size", opts.size, "--device",
                            opts.device, "--modes-wall", str(ref)],
                           out / f"{name}.modes.log", opts.timeout)
        row = result_row((rc_c, s_c), (rc_r, s_r), (trace, ref),
                         functools.partial(compare, trace, ref, None, USER_SIDES))
        row["loss_captured"] = _loss(out / f"{name}.capture.log")
        row["loss_plain"] = _loss(out / f"{name}.plain.log")
        row["same_loss"] = (row["loss_plain"] is not None
                            and row["loss_captured"] == row["loss_plain"])
        results[name] = row
        print(f"{name}: capture rc {rc_c} ({s_c:.0f} s), reference rc {rc_r} ({s_r:.0f} s)",
              flush=True)
    (out / "user_cudagraphs.json").write_text(json.dumps(results, indent=1))
    _table(results, USER_SIDES)
    for name, r in results.items():
        print(f"{name}: loss captured {r['loss_captured']}, plain {r['loss_plain']}: "
              f"{'same' if r['same_loss'] else 'DIFFERENT'}; note: {r.get('note')}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--user-mode" in argv:
        return user_mode([a for a in argv if a != "--user-mode"])
    opts, out, runs = model_runs(argv, MODELS, "cudagraphs_whatif_out")
    results = {}
    for name, script in runs:
        trace, ref = out / f"{name}.json.gz", out / f"{name}.modes.json"
        plain = out / f"{name}.plain.json.gz" if name in PLAIN else None
        capture = [sys.executable, "-m", "fusionviz", "capture", str(script), "--device",
                   opts.device]
        rc_c, s_c = _child([*capture, "-o", str(trace), "--what-if", "reduce-overhead", "--",
                            "--size", opts.size], out / f"{name}.capture.log", opts.timeout)
        if plain is not None:
            _child([*capture, "-o", str(plain), "--", "--size", opts.size],
                   out / f"{name}.plain.log", opts.timeout)
        rc_r, s_r = _child([sys.executable, str(script), "--size", opts.size, "--device",
                            opts.device, "--modes-wall", str(ref)],
                           out / f"{name}.modes.log", opts.timeout)
        results[name] = result_row((rc_c, s_c), (rc_r, s_r), (trace, ref),
                                   functools.partial(compare, trace, ref, plain))
        print(f"{name}: capture rc {rc_c} ({s_c:.0f} s), reference rc {rc_r} ({s_r:.0f} s)",
              flush=True)
    (out / "cudagraphs_whatif.json").write_text(json.dumps(results, indent=1))
    _table(results)
    return 0


def _table(results: dict, sides=SIDES) -> None:
    print("\nwall ms per call, recorded in the capture / reference run without fusionviz "
          "(ratio)")
    print(f"{'model':16} {'part':8} " + " ".join(f"{s:>24}" for s, _ in sides)
          + f" {'CUDA graphs vs compiled, rec / ref':>36}")
    for name, r in results.items():
        for i, part in enumerate(("forward", "backward")):
            cells = [f"{_fmt(r.get(f'{s}_{part}_recorded'))} / "
                     f"{_fmt(r.get(f'{s}_{part}_reference'))} "
                     f"({_fmt(r.get(f'{s}_{part}_ratio'), '{:.2f}')})" for s, _ in sides]
            speed = (f"{_fmt(r.get('speedup_recorded'), '{:.2f}x')} / "
                     f"{_fmt(r.get('speedup_reference'), '{:.2f}x')} ({r.get('verdict', '-')})"
                     if i == 0 else "")
            print(f"{name if i == 0 else '':16} {part:8} "
                  + " ".join(f"{c:>24}" for c in cells) + f" {speed:>36}")
        extra = [r.get("error") or "", r.get("cudagraphs_note") or ""]
        if "same_graphs_as_plain" in r:
            extra.append(f"graphs as without the what-if: {r['same_graphs_as_plain']} "
                         f"({len(r['graphs'])} graphs, {r['recompiles']} recompiles)")
        for text in filter(None, extra):
            print(f"{'':16}   {text}")
        for f in r.get("fixes", ()):
            if f.startswith("CUDA graphs"):
                print(f"{'':16}   fix: {f}")


if __name__ == "__main__":
    sys.exit(main())
