"""Are fusionviz's CPU eager and compiled figures right, with and without a CPU load?

    python benchmarks/cpu_timing.py [--runs 3] [--scripts NAME ...] [--no-load | --load-only]
        [--out benchmarks/results/cpu_timing_2core.txt] [--workdir DIR] [--quiet-wait S]

For each workload in ``benchmarks/cpu_timing_scripts/`` and each condition (no load;
``LOAD_WORKERS`` busy-loop processes running beside it), ``--runs`` times:
a. ``python -m fusionviz capture SCRIPT -o T.json.gz --device cpu`` (timeout 300 s);
   the trace's first entry gives the eager and compiled forward figures
   (``eager_figures.figure``: median, q1, noisy) and the verdict (``versus``);
b. ``python SCRIPT --timeit``, a separate process under the same condition: eager and
   compiled timed with ``timeit`` (median of 15 repeats per side, interleaved), once
   before the capture and once after it: on a shared virtual machine the same function
   can run at another speed a minute later, and the two say by how much.
Ratios: fusionviz's median and q1 over timeit's median (the one after), per side; the
summary also counts each figure against the band the two timeits span (± 20%). The load workers
run for the whole run and are killed afterwards, on error or Ctrl+C too. Each run
first waits for other processes to go quiet; the CPU they used during the run is
measured from /proc and printed ("other-cpu").
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import datetime
import importlib.metadata
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fusionviz.model.report.eager_explain import explain  # noqa: E402
from fusionviz.model.report.eager_figures import versus  # noqa: E402
from fusionviz.model.tracefile.io import load_trace  # noqa: E402

SCRIPT_DIR = ROOT / "benchmarks" / "cpu_timing_scripts"
SCRIPTS = ("small_pointwise", "large_pointwise", "chain8", "graph_break", "mlp")
LOAD_WORKERS = 2
CLOSE = 0.20  # a figure within 20% of timeit is right
CLEAR = 1.2  # timeit's speedup beyond this either way has a sign
QUIET = 0.25  # cores other processes may use before a run starts (--quiet-wait)
TICKS = os.sysconf("SC_CLK_TCK")


def _die_with_parent() -> None:  # the load workers die if this process is killed -9
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def cpu_load(n: int):
    procs = []
    try:
        for _ in range(n):
            procs.append(subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                          preexec_fn=_die_with_parent))
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def run_child(cmd: list[str], timeout: float, log: Path) -> int:
    """Run ``cmd`` in its own process group, output to ``log``; kill the group on
    timeout, error or Ctrl+C. Returns the exit code (-9 on timeout)."""
    with open(log, "w") as fh:
        p = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, cwd=ROOT,
                             start_new_session=True)
        try:
            return p.wait(timeout=timeout)
        except BaseException as e:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
            p.wait()
            if isinstance(e, subprocess.TimeoutExpired):
                return -9
            raise


def snapshot() -> tuple[float, dict[int, tuple[str, float, float]]]:
    """CPU seconds all cores were busy (/proc/stat), and per process: pid -> (name,
    its own CPU seconds, its waited-for children's)."""
    cpu = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    procs = {}
    for d in filter(str.isdigit, os.listdir("/proc")):
        with contextlib.suppress(OSError):
            s = Path(f"/proc/{d}/stat").read_text()
            f = [int(v) for v in s[s.rindex(")") + 2:].split()[11:15]]
            procs[int(d)] = (s[s.index("(") + 1:s.rindex(")")], (f[0] + f[1]) / TICKS,
                             (f[2] + f[3]) / TICKS)
    return (sum(cpu) - cpu[3] - cpu[4]) / TICKS, procs


def other_load(a, b, mine: set[int], wall: float) -> tuple[float, str]:
    """Cores' worth of CPU used by processes that are not ours (``mine`` and their
    waited-for children) between snapshots ``a`` and ``b``, ``wall`` s apart; the
    busiest others by name (their own time: an orphan reaped meanwhile is unnamed)."""
    (busy0, p0), (busy1, p1) = a, b
    ours = sum(p1[pid][1] + p1[pid][2] - p0[pid][1] - p0[pid][2]
               for pid in mine if pid in p0 and pid in p1)
    total = max(0.0, busy1 - busy0 - ours) / wall
    used = {pid: (n, p1[pid][1] - t) for pid, (n, t, _) in p0.items()
            if pid in p1 and pid not in mine and p1[pid][0] == n}
    top = sorted(used.items(), key=lambda kv: -kv[1][1])[:2]
    names = ", ".join(f"{n}[{pid}] {t / wall:.2f}" for pid, (n, t) in top if t / wall >= 0.05)
    return total, f"{total:.2f}" + (f" ({names})" if names else "")


def wait_quiet(limit: float) -> str:
    """Wait (up to ``limit`` s) until other processes use under ``QUIET`` cores."""
    t0 = time.monotonic()
    while True:
        before = snapshot()
        time.sleep(2)
        cores, text = other_load(before, snapshot(), {os.getpid()}, 2)
        waited = time.monotonic() - t0
        if cores < QUIET or waited >= limit:
            return f"{waited:.0f}s" + ("" if cores < QUIET else f", still {text}")


def one_run(name: str, loaded: bool, run: int, work: Path, quiet_wait: float) -> dict:
    script, tag = SCRIPT_DIR / f"{name}.py", f"{name}.{'load' if loaded else 'idle'}.{run}"
    row: dict = {"script": name, "run": run, "error": "",
                 "waited": wait_quiet(quiet_wait) if quiet_wait > 0 else "-"}
    with cpu_load(LOAD_WORKERS if loaded else 0) as procs:
        before, t0 = snapshot(), time.monotonic()
        rc0 = run_child([sys.executable, str(script), "--timeit"], 300,
                        work / f"{tag}.timeit0.log")
        trace = work / f"{tag}.json.gz"
        rc = run_child([sys.executable, "-m", "fusionviz", "capture", str(script), "-o",
                        str(trace), "--device", "cpu", "--timeout", "300"], 330,
                       work / f"{tag}.capture.log")
        rc2 = run_child([sys.executable, str(script), "--timeit"], 300,
                        work / f"{tag}.timeit.log")
        mine = {os.getpid(), *(p.pid for p in procs)}
        row["other"] = other_load(before, snapshot(), mine, time.monotonic() - t0)[1]
    if rc2 != 0 or rc0 != 0:
        row["error"] += f"timeit exit {rc0}/{rc2}; "
    if rc != 0:
        row["error"] += f"capture exit {rc}; "
    return read_run(row, work, tag)


def read_run(row: dict, work: Path, tag: str) -> dict:
    """The figures of one run from its files in ``work`` (``tag``: script.idle|load.run):
    the trace's entry and the direct timing."""
    trace = work / f"{tag}.json.gz"
    for key, log in (("timeit", work / f"{tag}.timeit.log"),
                     ("timeit0", work / f"{tag}.timeit0.log")):
        lines = log.read_text().splitlines() if log.exists() else []
        direct = [json.loads(ln) for ln in lines if ln.startswith("{")]
        if direct:
            row[key] = direct[-1]
    if not trace.exists():
        return row
    loaded_trace = load_trace(trace)
    entries = loaded_trace.entries
    e = entries[0] if entries else None
    v = e and e.eager_forward and e.compiled_forward and versus(
        "wall", e.eager_forward.wall, e.compiled_forward.wall)
    if not v:
        row["error"] += f"no entry timing ({e.note if e else 'no entry'}); "
        return row
    # "uncertain": fusionviz says other processes kept cores busy while it timed
    ex = explain(loaded_trace, e)
    # "approximate": the calls touched fresh memory, paying page faults (fusionviz says);
    # "cache-sensitive": the call right after itself reads another time (fusionviz says);
    # "approximate" too: a call on memory given back to the OS is much slower (the range)
    row.update(v=v, frames=len(e.compile_ids), loadavg=e.load.get("loadavg_1m"),
               uncertain=bool(ex.busy),
               faulting={side for part, side in ex.faulting if part == "forward"},
               fresh={side: (a, b) for (part, side), (a, b, _) in ex.fresh_sensitive.items()
                      if part == "forward"},
               cached={side for part, side in ex.cache_sensitive if part == "forward"})
    return row


def verdict(row: dict) -> str:
    """What fusionviz tells the user: its verdict, or "uncertain" where it says so."""
    return "uncertain" if row.get("uncertain") else row["v"].verdict


def marked(row: dict, side: str) -> bool:
    """Flagged for the user: the figure is noisy, approximate (page faults, paid or
    on fresh memory) or cache-sensitive, or the entry is uncertain."""
    return (getattr(row["v"], side).noisy or bool(row.get("uncertain"))
            or side in row.get("faulting", ()) or side in row.get("cached", ())
            or side in row.get("fresh", ()))


def fresh_lines(ok: list[dict]) -> list[str]:
    """The figures fusionviz says depend on the allocator (as measured .. on fresh
    memory): is every timeit of them (before and after the capture) inside that range,
    widened by ``CLOSE``? The mark is a claim that can be checked."""
    figs = [(r, s) for r in ok for s in r.get("fresh", {})]
    if not figs:
        return ["fresh-memory marks: none"]
    misses = []
    for r, s in figs:
        lo, hi = r["fresh"][s]
        refs = [r[k][f"{s}_ms"] for k in ("timeit0", "timeit") if k in r]
        if not all(lo * (1 - CLOSE) <= ref <= hi * (1 + CLOSE) for ref in refs):
            misses.append(f"  timeit outside the stated range: {r['script']} run {r['run']} "
                          f"{s}: {lo:.3f}..{hi:.3f} ms, timeit "
                          + "/".join(f"{x:.3f}" for x in refs))
    return [f"fresh-memory marks (the call's cost depends on the allocator): {len(figs)} "
            f"figures; every timeit inside the stated range (± {CLOSE:.0%}): "
            f"{len(figs) - len(misses)} of {len(figs)}", *misses]


def ratios(row: dict, side: str) -> tuple[float, float]:
    fig, ref = getattr(row["v"], side), row["timeit"][f"{side}_ms"]
    return fig.median / ref, fig.q1 / ref


def in_band(row: dict, side: str) -> bool | None:
    """The figure's median within the span of the timeits before and after the
    capture, widened by ``CLOSE`` (None: no timeit before it)."""
    if "timeit0" not in row:
        return None
    refs = [row[k][f"{side}_ms"] for k in ("timeit0", "timeit")]
    fig = getattr(row["v"], side).median
    return min(refs) * (1 - CLOSE) <= fig <= max(refs) * (1 + CLOSE)


def band_lines(ok: list[dict]) -> list[str]:
    """The figures against the timeit band, and how far timeit moved by itself."""
    figs = [(r, s, in_band(r, s)) for r in ok for s in ("eager", "compiled")]
    figs = [f for f in figs if f[2] is not None]
    if not figs:
        return []
    moved = [(r, s) for r, s, _ in figs
             if abs(r["timeit0"][f"{s}_ms"] / r["timeit"][f"{s}_ms"] - 1) > CLOSE]
    out_ = [(r, s) for r, s, inside in figs if not inside]
    unmarked = [(r, s) for r, s in out_ if not marked(r, s)]
    lines = [f"timeit before vs after the capture: {len(moved)} of {len(figs)} figures "
             f"moved by more than {CLOSE:.0%} on their own",
             f"band (timeit before..after, ± {CLOSE:.0%}): {len(figs) - len(out_)} of "
             f"{len(figs)} figures inside; outside: {len(out_)}, of them marked noisy or "
             f"uncertain: {len(out_) - len(unmarked)}"]
    lines += [f"  NOT marked, outside the band: {r['script']} run {r['run']} {s}: "
              f"{getattr(r['v'], s).median:.3f} ms vs timeit {r['timeit0'][s + '_ms']:.3f} "
              f"before, {r['timeit'][s + '_ms']:.3f} after" for r, s in unmarked]
    both = [r for r in ok if "timeit0" in r]
    opposite = 0
    for r in both:
        signs = {_timeit_sign(r[k]) for k in ("timeit0", "timeit")}
        if len(signs) == 1 and (want := signs.pop()) and sign(verdict(r)) == -want:
            opposite += 1
            lines.append(f"  DISAGREES with both timeits: {r['script']} run {r['run']}")
    lines.append(f"sign vs timeit before and after (both beyond {CLEAR}x the same way): "
                 f"{opposite} opposite")
    return lines


def _timeit_sign(t: dict) -> int:
    x = t["eager_ms"] / t["compiled_ms"]
    return 1 if x > CLEAR else -1 if x < 1 / CLEAR else 0


def sign(verdict: str) -> int:
    return {"faster": 1, "slower": -1}.get(verdict, 0)


HEAD = (f"{'script':<16}{'run':>3} | {'eager med':>9} {'q1':>8} {'nz':>2} {'timeit':>8} "
        f"{'r.med':>5} {'r.q1':>5} | {'comp med':>9} {'q1':>8} {'nz':>2} {'timeit':>8} "
        f"{'r.med':>5} {'r.q1':>5} | {'x fv':>5} {'x ti':>5} | {'verdict':<12} | "
        "fr loadavg waited other-cpu | timeit before: eager/compiled")


def row_text(r: dict) -> str:
    out = f"{r['script']:<16}{r['run']:>3} | "
    if "v" not in r or "timeit" not in r:
        return out + "ERROR: " + r["error"]
    for side in ("eager", "compiled"):
        f, ref, (rm, rq) = getattr(r["v"], side), r["timeit"][f"{side}_ms"], ratios(r, side)
        flag = ("U" if r.get("uncertain") else "Y" if f.noisy else
                "F" if side in r.get("faulting", ()) else
                "M" if side in r.get("fresh", ()) else
                "C" if side in r.get("cached", ()) else "-")
        out += (f"{f.median:9.3f} {f.q1:8.3f} {flag:>2} {ref:8.3f} "
                f"{rm:5.2f} {rq:5.2f} | ")
    ti = r["timeit"]["eager_ms"] / r["timeit"]["compiled_ms"]
    before = (f" | {r['timeit0']['eager_ms']:.3f}/{r['timeit0']['compiled_ms']:.3f}"
              if "timeit0" in r else "")
    return out + (f"{r['v'].speedup:5.2f} {ti:5.2f} | {verdict(r):<12} | "
                  f"{r['frames']:>2} {r['loadavg'] or 0:7.2f} {r['waited']:>6} {r['other']}"
                  + before)


def summary(rows: list[dict], runs: int) -> list[str]:
    ok = [r for r in rows if "v" in r and "timeit" in r]
    out = [f"runs with both figures: {len(ok)} of {len(rows)}"]
    for k, what in enumerate(("median", "q1")):
        figs = [(r, s, ratios(r, s)[k]) for r in ok for s in ("eager", "compiled")]
        far = [(r, s, x) for r, s, x in figs if abs(x - 1) > CLOSE]
        noisy = [f for f in far if marked(f[0], f[1])]
        out.append(f"{what}: {len(figs) - len(far)} of {len(figs)} figures within "
                   f"{CLOSE:.0%} of timeit; outside: {len(far)}, of them marked noisy or "
                   f"uncertain: {len(noisy)}")
        out += [f"  NOT marked, {what} off: {r['script']} run {r['run']} {s}: "
                f"{getattr(r['v'], s).median:.3f} ms (q1 {getattr(r['v'], s).q1:.3f}) vs "
                f"timeit {r['timeit'][s + '_ms']:.3f} ms, ratio {x:.2f}"
                for r, s, x in far if (r, s, x) not in noisy]
    for name in dict.fromkeys(r["script"] for r in rows):
        mine = [r for r in ok if r["script"] == name]
        verdicts = [verdict(r) for r in mine]
        if {1, -1} <= {sign(v) for v in verdicts}:
            out.append(f"SIGN FLIP across runs: {name}: {verdicts}")
    clash = miss = 0
    for r in ok:
        ti = r["timeit"]["eager_ms"] / r["timeit"]["compiled_ms"]
        want = 1 if ti > CLEAR else -1 if ti < 1 / CLEAR else 0
        got = sign(verdict(r))
        if want and got == -want:
            clash += 1
            out.append(f"DISAGREES with timeit: {r['script']} run {r['run']}: fusionviz "
                       f"{verdict(r)} {r['v'].speedup:.2f}x, timeit {ti:.2f}x")
        miss += bool(want and not got)
    out.append(f"sign vs timeit (timeit beyond {CLEAR}x): {clash} opposite, "
               f"{miss} 'within noise' or 'uncertain'")
    flips = sum(ln.startswith("SIGN FLIP") for ln in out)
    out += band_lines(ok)
    out += fresh_lines(ok)
    return out + [f"scripts whose verdict flipped between their {runs} runs: {flips}"]


def summarize(work: Path, conds, scripts, runs: int) -> int:
    for loaded in conds:
        print(f"== with {LOAD_WORKERS} busy-loop workers" if loaded else "== no load")
        print(HEAD)
        rows = []
        for name in scripts:
            for i in range(1, runs + 1):
                row = {"script": name, "run": i, "error": "", "waited": "-", "other": "-"}
                rows.append(read_run(row, work, f"{name}.{'load' if loaded else 'idle'}.{i}"))
                print(row_text(rows[-1]))
        print("\n".join(["summary:", *("  " + s for s in summary(rows, runs))]))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--scripts", nargs="+", choices=SCRIPTS, default=list(SCRIPTS))
    cond = ap.add_mutually_exclusive_group()
    cond.add_argument("--no-load", action="store_true", help="only the unloaded runs")
    cond.add_argument("--load-only", action="store_true", help="only the loaded runs")
    ap.add_argument("--out", default="benchmarks/results/cpu_timing_2core.txt")
    ap.add_argument("--workdir", help="keep traces and logs here (default: a temp dir)")
    ap.add_argument("--summarize", metavar="WORKDIR",
                    help="run nothing: print the tables of the runs kept in WORKDIR (its "
                         "waited and other-cpu columns are not kept: '-')")
    ap.add_argument("--quiet-wait", type=float, default=300, metavar="S",
                    help="before each run, wait up to S s for other processes to go "
                         f"under {QUIET} cores (0: don't)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    nproc = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    head = [f"date: {datetime.datetime.now().isoformat(timespec='seconds')}",
            f"torch: {importlib.metadata.version('torch')}   nproc: {nproc}",
            "command: " + shlex.join([Path(sys.executable).name, *sys.argv]),
            "ratios: fusionviz median (r.med) and q1 (r.q1) over timeit's median; nz: "
            "noisy (U: the entry says uncertain: other processes kept cores busy; F: "
            "approximate: the calls paid page faults for fresh memory; M: approximate: a "
            "call on memory given back to the OS runs over 20% slower; C: cache-sensitive: "
            "the call right after itself reads over 20% apart); x fv / x ti: "
            "speedups; fr: Dynamo frames of the entry; loadavg: "
            "recorded by the capture; waited: for other processes to go quiet before the run; "
            "other-cpu: cores used by processes not ours during the run", ""]
    conds = [c for c, skip in ((False, args.load_only), (True, args.no_load)) if not skip]
    if args.summarize:
        return summarize(Path(args.summarize), conds, args.scripts, args.runs)
    body: list[str] = []
    (out := Path(args.out)).parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        work = Path(args.workdir or stack.enter_context(tempfile.TemporaryDirectory()))
        work.mkdir(parents=True, exist_ok=True)
        rows: list[dict] = []
        try:
            for loaded in conds:
                title = (f"== with {LOAD_WORKERS} busy-loop workers" if loaded
                         else "== no load")
                print(title + "\n" + HEAD, flush=True)
                rows = []
                for name in args.scripts:
                    for i in range(1, args.runs + 1):
                        rows.append(one_run(name, loaded, i, work, args.quiet_wait))
                        print(row_text(rows[-1]), flush=True)
                lines = ["summary:", *("  " + s for s in summary(rows, args.runs))]
                print("\n".join(lines), flush=True)
                body += [title, HEAD, *map(row_text, rows), "", *lines, ""]
                rows = []
        finally:
            if rows:  # interrupted: the finished runs of this condition
                body += ["== interrupted", HEAD, *map(row_text, rows)]
            if body:
                out.write_text("\n".join(head + body) + "\n")
                print(f"written: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
