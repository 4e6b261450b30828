"""Does a damaged trace open safely, and say that it is damaged? (issue #19)

    python benchmarks/fuzz_traces.py [--cases 11000] [--workers 2] [--seed 0]

Seeded mutations of every committed trace (``tests/data``, multi-rank and experiment
folders included; ``tests/model/trace_fuzz.py``): blind damage (byte flips, cuts, lines
deleted, duplicated or swapped, values of another type, deep nesting) and damage to
the meaning that stays valid JSON (a node name that is nowhere, a NaN, infinite,
negative or absurd number, an unknown enumerated value). Each case is loaded the two
ways fusionviz loads a file, each in a worker process held to 10 s and 2 GB per load:

- ``eager``: as the command line does (``summary``, ``query``, ``why``): the whole file
  built at once, then what ``summary`` lists (warnings, ``validate``'s problems);
- ``lazy``: as the window does: the bulk built on first read, every such field read
  (a part that cannot be built is a notice naming the file), then the same problems.

Each load ends in one outcome:

- ``clean error naming the file``: a TraceError whose message starts with the path;
- ``accepted with problems listed``: it opened, and it lists a warning, problem or
  unreadable part that the undamaged trace does not;
- ``accepted and unchanged``: it opened, nothing new listed, the same trace as the
  undamaged one (the damage was to something not kept, or a no-op);
- ``accepted, changed, plausible``: it opened, nothing new listed, another trace, in
  which the independent judge (``trace_fuzz.clearly_broken``) finds nothing that
  cannot be (a digit changed in a time, say);
- ``clearly broken, opened silently``: as above, but the judge finds something that
  cannot be (a node that is nowhere, a NaN time, an unknown status): must be 0;
- ``anything else``: another exception, an error not naming the file, over 10 s or
  2 GB, a worker that died: must be 0.

Exit status 1 when either of the last two is not 0; each such case is printed with
its source, seed and mutation, so ``trace_fuzz.mutant`` rebuilds it.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures as futures
import random
import resource
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "model"))

from trace_fuzz import BREAKS, MUTATIONS, clearly_broken, mutant  # noqa: E402

from fusionviz.model.errors import TraceError  # noqa: E402
from fusionviz.model.tracefile.io import load_trace  # noqa: E402
from fusionviz.model.validate import detail_problems, graph_problems, trace_problems  # noqa: E402

DATA = ROOT / "tests" / "data"
SECONDS, MEMORY = 10, 2 << 30  # per load
OUTCOMES = ("clean error naming the file", "accepted with problems listed",
            "accepted and unchanged", "accepted, changed, plausible",
            "clearly broken, opened silently", "anything else")
ERROR, LISTED, SAME, PLAUSIBLE, SILENT, OTHER = OUTCOMES


class _OverTime(BaseException):
    """A load ran past ``SECONDS`` (a BaseException: no ``except Exception`` eats it)."""


def _alarm(signum, frame):
    raise _OverTime


def _limit_worker() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    signal.signal(signal.SIGALRM, _alarm)


def listed(trace, lazy_errors: list[str] = ()) -> set[str]:
    """What fusionviz lists about ``trace``: warnings and problems, as ``summary``."""
    lines = {*trace.warnings, *trace_problems(trace), *lazy_errors}
    for g in trace.graphs:
        lines |= {*g.warnings, *graph_problems(g),
                  *detail_problems(g, quiet_if_unreadable=bool(lazy_errors))}
    return lines


def _read_lazy(trace, path: Path) -> list[str]:
    """Reads every lazily built field; the messages of those that cannot be built."""
    errors = []
    for g in trace.graphs:
        for obj in (*g.rounds, *g.nodes):
            for name in type(obj).__lazy_fields__:
                try:
                    getattr(obj, name)
                except TraceError as e:
                    if not str(e).startswith(f"{path}: "):
                        raise AssertionError(f"a lazy error not naming the file: {e}") from e
                    errors.append(str(e).split(": ", 1)[1])
    return errors


_BASE: dict[str, tuple] = {}  # per source: (trace, listed) of the undamaged file


def _base(source: Path) -> tuple:
    if str(source) not in _BASE:
        trace = load_trace(source)
        _BASE[str(source)] = (trace, listed(trace))
    return _BASE[str(source)]


def _one_load(path: Path, base: tuple, lazy: bool) -> tuple[str, str]:
    signal.alarm(SECONDS)
    try:
        try:
            trace = load_trace(path, lazy=lazy)
        except TraceError as e:
            return (ERROR, "") if str(e).startswith(f"{path}: ") else (OTHER, f"{e}"[:300])
        errors = _read_lazy(trace, path) if lazy else []
        new = listed(trace, errors) - base[1]
        if new:
            return LISTED, sorted(new)[0][:200]
        if trace == base[0]:
            return SAME, ""
        broken = clearly_broken(trace)
        return (SILENT, "; ".join(broken[:3])) if broken else (PLAUSIBLE, "")
    except _OverTime:
        return OTHER, f"over {SECONDS} s"
    except MemoryError:
        return OTHER, f"over {MEMORY >> 30} GB"
    except BaseException as e:  # noqa: BLE001 (what the table counts)
        return OTHER, f"{type(e).__name__}: {e}"[:300]
    finally:
        signal.alarm(0)


def run_case(source: str, seed: int, folder: str) -> tuple:
    source_path = Path(source)
    base = _base(source_path)
    rng = random.Random(seed)
    blind = rng.random() < 0.6
    path, what = mutant(source_path, seed, Path(folder),
                        mutations=MUTATIONS if blind else BREAKS)
    try:
        return (source_path.relative_to(DATA).as_posix(), seed, what,
                _one_load(path, base, False), _one_load(path, base, True))
    finally:
        path.unlink(missing_ok=True)


def sources() -> list[Path]:
    return sorted(p for p in DATA.rglob("*.json.gz"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cases", type=int, default=11_000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0, help="first seed")
    args = ap.parse_args()
    files = sources()
    plan = [(str(files[i % len(files)]), args.seed + i) for i in range(args.cases)]
    counts = {"eager": collections.Counter(), "lazy": collections.Counter()}
    odd: list[str] = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as folder:
        with futures.ProcessPoolExecutor(args.workers, initializer=_limit_worker) as pool:
            jobs = {pool.submit(run_case, s, seed, folder): (s, seed) for s, seed in plan}
            for n, job in enumerate(futures.as_completed(jobs), 1):
                try:
                    source, seed, what, eager, lazy = job.result()
                except futures.process.BrokenProcessPool:  # a worker died: no result
                    source, seed = jobs[job]
                    what, eager = "?", (OTHER, "a worker died (this case or another)")
                    lazy = eager
                for side, (outcome, detail) in (("eager", eager), ("lazy", lazy)):
                    counts[side][outcome] += 1
                    if outcome in (SILENT, OTHER):
                        odd.append(f"{side}: {source} seed {seed} ({what}): "
                                   f"{outcome}: {detail}")
                if n % 1000 == 0:
                    print(f"  {n:,} of {len(plan):,} cases, {time.monotonic() - start:.0f} s",
                          file=sys.stderr)
    seconds = time.monotonic() - start
    blind = sum(random.Random(seed).random() < 0.6 for _, seed in plan)
    print(f"fuzz_traces: {len(plan):,} cases from {len(files)} committed traces "
          f"({blind:,} blind damage, {len(plan) - blind:,} damage to the meaning), "
          f"seeds {args.seed}-{args.seed + len(plan) - 1}, {args.workers} workers, "
          f"{SECONDS} s and {MEMORY >> 30} GB per load; {seconds:.0f} s")
    print(f"{'outcome':34} {'eager (CLI)':>12} {'lazy (window)':>14}")
    for outcome in OUTCOMES:
        print(f"{outcome:34} {counts['eager'][outcome]:>12,} {counts['lazy'][outcome]:>14,}")
    for line in odd[:40]:
        print("  " + line)
    if len(odd) > 40:
        print(f"  (+{len(odd) - 40} more)")
    return 1 if odd else 0


if __name__ == "__main__":
    sys.exit(main())
