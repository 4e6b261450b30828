"""Shared by the cpu_timing workload scripts: run the compiled callable a few times
(what ``fusionviz capture`` records), or with ``--timeit`` time eager against compiled
directly in this process and print one JSON line."""

from __future__ import annotations

import json
import statistics
import sys
import timeit

REPEAT = 15
TARGET_S = 0.05  # each repeat runs k calls, k chosen so a repeat takes about this long


def _calls_per_repeat(call) -> int:
    k = 1
    while True:
        t = timeit.timeit(call, number=k)
        if t >= TARGET_S or k >= 1 << 16:
            return k
        k = max(k * 2, int(k * TARGET_S / max(t, 1e-9) * 1.2))


def timeit_pair(f, cf, args) -> dict:
    """Median (and lower quartile) ms per call of eager ``f`` and compiled ``cf``:
    ``REPEAT`` repeats per side, the sides interleaved and the order alternating."""
    calls = {"eager": lambda: f(*args), "compiled": lambda: cf(*args)}
    for _ in range(3):  # warm-up (cf is compiled by now)
        for call in calls.values():
            call()
    ks = {name: _calls_per_repeat(call) for name, call in calls.items()}
    times: dict[str, list[float]] = {name: [] for name in calls}
    for i in range(REPEAT):
        order = ("eager", "compiled") if i % 2 == 0 else ("compiled", "eager")
        for name in order:
            t = timeit.timeit(calls[name], number=ks[name])
            times[name].append(t / ks[name] * 1e3)
    out = {}
    for name, ts in times.items():
        out[f"{name}_ms"] = statistics.median(ts)
        out[f"{name}_q1_ms"] = statistics.quantiles(ts, n=4, method="inclusive")[0]
        out[f"{name}_calls_per_repeat"] = ks[name]
    return out


def run(f, cf, *args) -> None:
    """Call ``cf`` three times (the first compiles), or with ``--timeit`` print the
    direct timing of ``f`` against ``cf`` as a JSON line."""
    for _ in range(3):
        cf(*args)
    if "--timeit" in sys.argv:
        print(json.dumps(timeit_pair(f, cf, args)), flush=True)
