"""The fusion advisor measured on real models (issue #20, items 1, 3 and 4).

    python benchmarks/advisor_measured.py [--device cuda|cpu] [--size full|tiny]
        [--models gpt2_train,...] [--measure K] [--budget SECONDS] [--out DIR]

Per model of ``benchmarks/eager_models``:

1. ``fusionviz capture`` of the script (timed, as a user runs it);
2. ``fusionviz advise TRACE --measure K --budget B --json``: the best K candidates of
   every graph replayed side by side and timed in turns beside baseline replays;
3. replay fidelity: each graph's baseline replays against the capture's own time of
   that graph, on the same clock (a graph with nothing to measure is replayed once);
4. every claimed win checked independently, away from the replays that found it:
   - a fresh capture of the whole script with the change (a setting, a mode, or the
     forced pair as a what-if), the graph's time against the first capture's;
   - for a setting or mode, a plain run with no fusionviz at all
     (``--compiled-profile``: the profiler's device time per step, three blocks),
     with and without the change, in separate processes.
   A win is confirmed when the fresh capture's gain is over half the measured one and
   the plain run's gain is positive beyond its blocks' spread.

Prints one line per graph and per checked win, and writes the advise documents and
every number to ``DIR/advisor_measured.json``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionviz.model.advisor.document import candidate_from_args  # noqa: E402
from fusionviz.model.replay.compare import decision_differences  # noqa: E402
from fusionviz.model.run.runner import run_capture  # noqa: E402
from fusionviz.model.tracefile.io import load_trace  # noqa: E402
from fusionviz.model.whatif import WhatIf  # noqa: E402

MODELS = ("gpt2_train", "llama_train", "resnet50_train", "bert_fp16_infer")


def _run(argv: list[str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def _fusionviz(*argv: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return _run([sys.executable, "-m", "fusionviz", *argv], timeout)


def _graph_ms(trace_path: Path, index: int) -> float | None:
    graphs = [g for g in load_trace(trace_path).graphs if g.index == index]
    return graphs[0].timing.compiled_ms if graphs and graphs[0].timing else None


def _plain(model: str, opts, change: list[str], out: Path) -> dict | None:
    argv = [sys.executable, f"benchmarks/eager_models/{model}.py", "--device", opts.device,
            "--size", opts.size, "--compiled-profile", str(out)]
    for flag, value in zip(change[::2], change[1::2], strict=True):
        argv += ["--inductor" if flag == "--config" else "--compile-mode", value]
    done = _run(argv, 900)
    if done.returncode != 0 or not out.exists():
        print(f"    plain run failed: {(done.stderr or done.stdout)[-300:]}")
        return None
    return json.loads(out.read_text())


def _is_baseline(path: Path, gdoc: dict) -> bool:
    """A replay of the advise folder that is a baseline (not a candidate's replay)."""
    return not any(Path(r.get("replay") or "").name == path.name for r in gdoc["measured"])


def _change_options(change: list[str], graph: int) -> dict:
    """run_capture options of a candidate's replay arguments."""
    c = candidate_from_args(tuple(change))
    if c is None:
        raise SystemExit(f"not a change fusionviz replay makes: {change}")
    return {"whatif": WhatIf(force=c.force, graph=graph if graph >= 0 else None)
            if c.force else None, "config": dict(c.config), "mode": c.mode}


def check_win(model: str, opts, out: Path, trace_path: Path, graph: int, row: dict) -> dict:
    change = row["try"][5:]
    check: dict = {"graph": graph, "what": row["what"], "measured_gain_ms": row["gain_ms"],
                   "measured_base_ms": row["baseline_ms"], "change": change}
    fresh = out / f"{model}_check_{graph}_{len(list(out.glob(model + '_check_*')))}.json.gz"
    t0 = time.monotonic()
    run_capture(f"benchmarks/eager_models/{model}.py", str(fresh), device=opts.device,
                script_args=["--size", opts.size, "--steps", "2"], timeout=900,
                **_change_options(change, graph))
    before, after = _graph_ms(trace_path, graph), _graph_ms(fresh, graph) \
        if fresh.exists() else None
    check["capture_ms"] = [before, after]
    check["capture_gain_ms"] = before - after if before and after else None
    check["capture_s"] = round(time.monotonic() - t0)
    if "--force" not in change:
        a = _plain(model, opts, [], out / f"{model}_plain_base.json")
        b = _plain(model, opts, change, out / f"{model}_plain_{graph}.json")
        if a and b:
            spread = max(max(a["blocks_ms"]) - min(a["blocks_ms"]),
                         max(b["blocks_ms"]) - min(b["blocks_ms"]))
            check["plain_ms"] = [a["step_device_ms"], b["step_device_ms"]]
            check["plain_gain_ms"] = a["step_device_ms"] - b["step_device_ms"]
            check["plain_spread_ms"] = spread
    else:
        check["plain"] = "a forced pair has no setting a plain run could apply"
    capture_ok = check["capture_gain_ms"] is not None and \
        check["capture_gain_ms"] > 0.5 * row["gain_ms"]
    plain_ok = "plain_gain_ms" not in check or \
        check["plain_gain_ms"] > check["plain_spread_ms"]
    check["confirmed"] = bool(capture_ok and plain_ok)
    return check


def check_change(opts, out: Path) -> int:
    """``--check CHANGE``: the independent check of one change on one machine, away from
    the replays that measured it: two fresh captures of the whole script (without and
    with the change, each graph's time) and/or two plain runs with no fusionviz
    (``--compiled-profile``: device time per step), in separate processes."""
    change = opts.check.split()
    report: dict = {"change": change, "models": {}}
    for model in opts.models.split(","):
        entry = report["models"].setdefault(model, {})
        if opts.stage in ("captures", "both"):
            times = []
            for label, options in (("default", {}), ("changed", _change_options(change, -1))):
                path = out / f"{model}_fresh_{label}.json.gz"
                t0 = time.monotonic()
                trace = run_capture(f"benchmarks/eager_models/{model}.py", str(path),
                                    device=opts.device, timeout=900,
                                    script_args=["--size", opts.size, "--steps", "1"],
                                    **options)
                times.append({g.index: g.timing.compiled_ms if g.timing else None
                              for g in trace.graphs})
                print(f"{model} fresh capture {label}: {round(time.monotonic() - t0)} s, "
                      + ", ".join(f"graph {i} {ms or 0:.3f} ms" for i, ms in times[-1].items())
                      + f" ({trace.script.status})")
            entry["captures_ms"] = times
        if opts.stage in ("plain", "both"):
            plain = [_plain(model, opts, c, out / f"{model}_plain_{label}.json")
                     for label, c in (("default", []), ("changed", change))]
            entry["plain"] = plain
            if all(plain):
                a, b = plain
                print(f"{model} plain runs: {a['step_device_ms']:.3f} -> "
                      f"{b['step_device_ms']:.3f} ms device per step (blocks "
                      f"{a['blocks_ms']} / {b['blocks_ms']})")
        (out / "advisor_check.json").write_text(json.dumps(report, indent=1))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--size", default="full", choices=("full", "tiny"))
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--measure", type=int, default=3)
    ap.add_argument("--budget", type=float, default=300, help="seconds of replays per model")
    ap.add_argument("--no-check", action="store_true", help="skip the independent checks")
    ap.add_argument("--out", default=None)
    ap.add_argument("--check", default=None, metavar="CHANGE",
                    help='only check one change, e.g. "--mode max-autotune-no-cudagraphs"')
    ap.add_argument("--stage", default="both", choices=("captures", "plain", "both"))
    opts = ap.parse_args()
    out = Path(opts.out or tempfile.mkdtemp(prefix="advisor-measured-"))
    out.mkdir(parents=True, exist_ok=True)
    if opts.check:
        return check_change(opts, out)
    report: dict = {"device": opts.device, "size": opts.size, "models": {}}
    for model in opts.models.split(","):
        entry: dict = report["models"].setdefault(model, {})
        trace_path = out / f"{model}.json.gz"
        t0 = time.monotonic()
        done = _fusionviz("capture", f"benchmarks/eager_models/{model}.py", "--device",
                          opts.device, "-o", str(trace_path), "--", "--size", opts.size,
                          "--steps", "2")
        entry["capture_s"] = round(time.monotonic() - t0)
        if done.returncode != 0 or not trace_path.exists():
            print(f"{model}: capture failed ({done.returncode}): {done.stderr[-300:]}")
            continue
        t0 = time.monotonic()
        done = _fusionviz("advise", str(trace_path), "--measure", str(opts.measure),
                          "--budget", str(opts.budget), "--json", "-o",
                          str(out / f"{model}_advise"))
        entry["advise_s"] = round(time.monotonic() - t0)
        try:  # exit 1 (a baseline failed) still writes the document: keep what it says
            doc = json.loads(done.stdout)
        except json.JSONDecodeError:
            print(f"{model}: advise failed ({done.returncode}): {done.stderr[-500:]}")
            continue
        if done.returncode != 0:
            print(f"{model}: advise exited {done.returncode}: {done.stderr[-300:]}")
        entry["advise"] = doc
        trace = load_trace(trace_path)
        print(f"{model}: capture {entry['capture_s']} s, advise {entry['advise_s']} s")
        for g, gdoc in zip(trace.graphs, doc["graphs"], strict=True):
            captured = g.timing.compiled_ms if g.timing else None
            replayed = gdoc["baselines_ms"]
            if not replayed:
                again = out / f"{model}_replay_{g.index}.json.gz"
                _fusionviz("replay", str(trace_path), "--graph", str(g.index), "-o", str(again))
                replayed = [_graph_ms(again, 0)] if again.exists() and _graph_ms(again, 0) \
                    else []
            ratio = statistics.median(replayed) / captured if replayed and captured else None
            baselines = [r for r in sorted((out / f"{model}_advise" / f"graph_{g.index}")
                                           .glob("replay_*.json.gz"))
                         if _is_baseline(r, gdoc)] or sorted(
                             out.glob(f"{model}_replay_{g.index}.json.gz"))
            differ = [d for r in baselines[:1] for d in decision_differences(
                g, load_trace(r).graphs[-1])]
            gdoc["fidelity"] = {"captured_ms": captured, "replayed_ms": replayed,
                                "ratio": ratio, "decisions": "same" if baselines and not differ
                                else differ or "no baseline replay"}
            verdicts = ", ".join(f"{r['verdict']} {r['gain_ms']:+.3f}" if r["gain_ms"]
                                 is not None else r["verdict"] for r in gdoc["measured"])
            said = f"{100 * (ratio - 1):+.1f}%" if ratio else "not compared"
            print(f"  graph {g.index} {g.kind:9} captured {captured or 0:.3f} ms, replayed "
                  f"{', '.join(f'{v:.3f}' for v in replayed) or '-'} ms ({said}); "
                  f"baseline replay's decisions: {gdoc['fidelity']['decisions']}")
            print(f"    measured: {verdicts or gdoc['problem']}")
            if opts.no_check:
                continue
            for row in gdoc["measured"]:
                if row["verdict"] == "win":
                    check = check_win(model, opts, out, trace_path, g.index, row)
                    entry.setdefault("checks", []).append(check)
                    print(f"    check {row['what']}: measured {row['gain_ms']:+.3f} ms; "
                          f"fresh capture {check['capture_gain_ms'] or 0:+.3f} ms; plain "
                          + (f"{check['plain_gain_ms']:+.3f} ms per step (spread "
                             f"{check['plain_spread_ms']:.3f})" if "plain_gain_ms" in check
                             else check.get("plain", "failed"))
                          + f" -> {'confirmed' if check['confirmed'] else 'NOT confirmed'}")
        (out / "advisor_measured.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
