"""Turns on the GPU for replays compiled side by side (``advise --measure``).

Compiling a graph takes seconds of CPU; timing it needs the GPU alone. Replays then
compile in parallel, and each asks for a turn before it runs kernels, so no replay is
timed while another one runs any:

- a *prep* turn (``p<ticket>``) to make its inputs and trace its graph (``make_fx``
  runs it once), given as soon as the GPU is free;
- a *timing* turn (``t<ticket>``) for its first call (Triton's autotuning, then the
  timing), given in ticket order, so a candidate is timed between the baselines
  around it. A replay whose compile benchmarks kernels (max-autotune,
  benchmark_fusion) takes its timing turn before it compiles and no prep turn.

The child writes ``ready.<turn>`` and waits for ``go.<turn>``; when done it writes
``done.<turn>`` (also when it raised). The parent (``schedule``) grants one turn at a
time and skips a ticket whose replay ended without asking; cancelled, it writes
``stop`` and the replays still waiting for a turn end. Files, not pipes: the child
is a script run by the capture runner, which passes it nothing else. No torch here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from pathlib import Path

POLL_S = 0.02
STOP = "stop"  # written when the parent gives no more turns


@contextmanager
def gpu_turn(folder: str | None, name: str):
    """In the replay: hold the GPU for the block (nothing to wait for without a folder)."""
    if not folder:
        yield
        return
    Path(folder, f"ready.{name}").touch()
    go, stop = Path(folder, f"go.{name}"), Path(folder, STOP)
    while not go.exists():
        if stop.exists():  # the measurement was cancelled: no turn will come
            raise SystemExit("fusionviz: the measurement was cancelled before this "
                             "replay's turn")
        time.sleep(POLL_S)
    try:
        yield
    finally:
        Path(folder, f"done.{name}").touch()


def schedule(folder: str | Path, tickets: Sequence[int], ended: Callable[[int], bool],
             stopped: Callable[[], bool] = lambda: False) -> None:
    """In the parent: grant the replays' turns, one at a time, until every ticket's
    timing turn was taken or its replay ended (``ended(ticket)``), or ``stopped()``.
    Prep turns go first-come first-served between timing turns."""
    folder = Path(folder)
    waiting = list(tickets)
    active: tuple[str, int] | None = None
    while waiting or active:
        if stopped():
            (folder / STOP).touch()  # replays waiting for a turn end
            return
        if active:
            name, ticket = active
            if (folder / f"done.{name}").exists() or ended(ticket):
                active = None
                continue
        elif (folder / f"ready.t{waiting[0]}").exists():
            active = (f"t{waiting[0]}", waiting.pop(0))
        elif ended(waiting[0]):
            waiting.pop(0)
            continue
        else:
            prep = next((p for p in sorted(folder.glob("ready.p*"))
                         if not (folder / f"go.{p.name[6:]}").exists()), None)
            if prep is not None:
                active = (prep.name[6:], int(prep.name[7:]))
        if active and not (folder / f"go.{active[0]}").exists():
            (folder / f"go.{active[0]}").touch()
            continue
        time.sleep(POLL_S)
