"""Loading traces within bounds (#11): the memory estimate against real traces, what
bombs cost, and the load time of a 20k-node trace.

Run: ``python benchmarks/bench_load.py [--repeats 5]``. Three tables:

- every committed trace and a synthetic 20k-node one: its JSON, the estimate of
  ``bounded.estimate_memory``, the memory an eager load really keeps (``tracemalloc``,
  with the JSON text it parsed) and its peak, and the estimate as a share of the file's
  budget (``memory_budget``): a real trace must stay far below 1;
- decompression bombs (~100 KB to 750 KB of gzip, 100 MB to 500 MB of JSON, each of
  ``[],``, ``{},``, ``0.5,`` and ``"ab",``), loaded in a fresh process each: the outcome
  and the process's peak resident memory (``VmHWM``, Linux); they took 1.6 to 3 GB at
  100 MB before;
- the 20k-node trace (``.json.gz`` and ``.json``) loaded eagerly and lazily: median and
  fastest of ``--repeats`` loads, and of its reading alone (``bounded.read_bytes``).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
import zlib
from pathlib import Path

from fusionviz.model.synthetic import synthetic_trace
from fusionviz.model.tracefile import bounded
from fusionviz.model.tracefile.io import load_trace, save_trace

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
BOMB_UNITS = {"lists": b"[],", "dicts": b"{},", "floats": b"0.5,", "strings": b'"ab",'}


def bomb(path: Path, unit: bytes, megabytes: int) -> Path:
    """A gzip file of one JSON list of ``megabytes`` of ``unit``."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, 31)
    block = unit * (1024 * 1024 // len(unit))
    with open(path, "wb") as f:
        f.write(deflate.compress(b"["))
        for _ in range(megabytes):
            f.write(deflate.compress(block))
        f.write(deflate.compress(b"[]]") + deflate.flush())
    return path


_CHILD = """
import sys
from fusionviz.model.errors import TraceError
from fusionviz.model.tracefile.io import load_trace
try:
    load_trace(sys.argv[1], lazy=sys.argv[2] == "lazy")
    outcome = "loaded"
except TraceError as e:
    outcome = "TraceError: " + str(e).split(": ", 1)[1][:60]
except BaseException as e:
    outcome = f"{type(e).__name__}: {e}"[:70]
with open("/proc/self/status") as f:  # VmHWM: this process's peak, not its parent's
    peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
print(peak // 1024, outcome)
"""


def peak_of_load(path: Path, how: str) -> tuple[int, str]:
    """(peak resident MB, outcome) of loading ``path`` in a fresh process."""
    out = subprocess.run([sys.executable, "-c", _CHILD, str(path), how], capture_output=True,
                         text=True, check=False).stdout.split(" ", 1)
    return int(out[0]), out[1].strip()


def estimates(paths: list[Path]) -> None:
    print(f"{'trace':<34} {'file KB':>8} {'JSON MB':>8} {'est MB':>7} {'kept MB':>8} "
          f"{'peak MB':>8} {'est/kept':>8} {'est/peak':>8} {'est/budget':>10}")
    for path in paths:
        raw = bounded.read_bytes(path)
        estimate = bounded.estimate_memory(raw)
        budget = bounded.memory_budget(path.stat().st_size)
        gc.collect()
        tracemalloc.start()
        trace = load_trace(path)
        kept, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        kept += len(raw)  # the text, held while it is parsed
        del trace
        print(f"{path.name:<34} {path.stat().st_size / 1024:>8.0f} {len(raw) / 2**20:>8.2f} "
              f"{estimate / 2**20:>7.1f} {kept / 2**20:>8.1f} {peak / 2**20:>8.1f} "
              f"{estimate / kept:>8.2f} {estimate / peak:>8.2f} {estimate / budget:>10.4f}")


def bombs(folder: Path) -> None:
    print(f"\n{'bomb':<24} {'file KB':>8} {'how':>6} {'peak MB':>8}  outcome")
    for shape, unit in BOMB_UNITS.items():
        for megabytes in (100, 500):
            path = bomb(folder / f"{shape}_{megabytes}MB.json.gz", unit, megabytes)
            for how in ("eager", "lazy"):
                peak, outcome = peak_of_load(path, how)
                print(f"{path.name:<24} {path.stat().st_size / 1024:>8.0f} {how:>6} "
                      f"{peak:>8}  {outcome}")


def timed(fn, repeats: int) -> str:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return f"{1000 * statistics.median(times):>9.1f} {1000 * min(times):>8.1f}"


def load_times(paths: list[Path], repeats: int) -> None:
    print(f"\n{'20k-node trace':<28} {'median ms':>9} {'min ms':>8}")
    for path in paths:
        for how in ("eager", "lazy"):
            print(f"{path.name + ' ' + how:<28} "
                  f"{timed(lambda p=path, h=how: load_trace(p, lazy=h == 'lazy'), repeats)}")
        print(f"{path.name + ' read_bytes':<28} "
              f"{timed(lambda p=path: bounded.read_bytes(p), repeats)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        trace = synthetic_trace(20_000, seed=1, rounds=3)
        big = [folder / "synthetic_20k.json.gz", folder / "synthetic_20k.json"]
        for path in big:
            save_trace(trace, path)
        del trace
        estimates([*sorted(DATA.glob("*.json.gz")), *big])
        bombs(folder)
        load_times(big, args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
