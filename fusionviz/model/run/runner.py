"""Start the capture child process and follow it to its end (no torch, no Qt here).

The GUI drives the child through QProcess with ``capture_argv``/``capture_env`` and
calls ``finalize_trace`` (``settle``) when it exits (then loads the trace, once); the
CLI and the tests use ``run_capture``.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Collection
from importlib import resources
from pathlib import Path

from fusionviz.model.errors import TraceError
from fusionviz.model.run.kernel_cache import set_cache_env
from fusionviz.model.run.process_tree import descendants, kill_tree, new_run_id, tag_env
from fusionviz.model.run.protocol import CHANNEL_ENV, open_channel, parse_progress
from fusionviz.model.run.settle import finalize_trace, write_failure
from fusionviz.model.run.streams import Tail, pump
from fusionviz.model.trace import Trace
from fusionviz.model.tracefile import io as tracefile
from fusionviz.model.whatif import WhatIf

__all__ = [
    "capture_argv", "capture_env", "default_example", "examples", "finalize_trace",
    "output_problem", "rank_paths", "ranks_running", "run_capture", "run_ranks",
    "settle_traces", "write_failure",
]


def examples() -> dict[str, str]:
    """Bundled example scripts: name → path (works from a plain install)."""
    root = resources.files("fusionviz.assets") / "examples"
    return {
        p.name[:-3]: str(p)
        for p in sorted(root.iterdir(), key=lambda p: p.name)
        if p.name.endswith(".py") and not p.name.startswith("_")
    }


def default_example() -> str:
    """The example the app captures when started with no argument."""
    return examples()["mlp_block"]


def capture_argv(
    script: str,
    out: str,
    *,
    mode: str | None = None,
    benchmark_fusion: bool = False,
    config: dict | None = None,
    base_config: dict | None = None,
    device: str = "auto",
    script_args=(),
    timing: bool = True,
    whatif: WhatIf | None = None,
    nproc: int = 1,
    what_if: tuple[str, ...] = (),
) -> list[str]:
    """The command line that runs ``script`` under capture, writing ``out``. With
    ``nproc`` > 1, PyTorch's launcher (``torch.distributed.run --standalone``) starts
    that many ranks, each captured, each writing ``out/rank<k>.json.gz``."""
    if nproc > 1:
        argv = [sys.executable, "-m", "torch.distributed.run", "--standalone",
                f"--nproc-per-node={nproc}", "-m", "fusionviz.model.capture",
                "--out", str(Path(out) / RANK_FILE.format(rank="{rank}")), "--device", device]
    else:
        argv = [sys.executable, "-u", "-m", "fusionviz.model.capture", "--out", str(out),
                "--device", device]
    if mode:
        argv += ["--mode", mode]
    if benchmark_fusion:
        argv.append("--benchmark-fusion")
    for flag, settings in (("--base-config", base_config), ("--config", config)):
        for key, value in (settings or {}).items():
            argv += [flag, f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}"]
    if not timing:
        argv.append("--no-timing")
    if whatif is not None:
        argv += whatif.to_argv()
    for measurement in what_if:  # WHAT_IFS: measured beside the user's compile
        argv += ["--what-if", measurement]
    return [*argv, "--", str(script), *map(str, script_args)]


def capture_env(cache_dir: str, run_id: str = "", kernel_cache: str = "") -> dict[str, str]:
    """The child's environment: a fresh Inductor/Triton cache in ``cache_dir`` so the
    scheduler runs (or the kept kernel folder, ``kernel_cache.set_cache_env``: the
    ``kernel_cache`` argument or ``FUSIONVIZ_KERNEL_CACHE``), and the run's cookie
    (``process_tree.tag_env``) that ``kill_tree`` finds.

    ``TEARDOWN_CUPTI=1`` (unless the user set it): Kineto then finalizes CUPTI after each
    of the capture's profiler sessions, which otherwise stays active and slows the
    launches of the user's later steps (pytorch/pytorch#144455;
    benchmarks/profiler_aftereffect.py). torch turns it off itself under CUDA graphs.
    """
    env = dict(os.environ)
    env.setdefault("TEARDOWN_CUPTI", "1")
    set_cache_env(env, cache_dir, kernel_cache)
    env["PYTHONUNBUFFERED"] = "1"
    src = str(Path(__file__).resolve().parents[3])  # make the package importable as-is
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, env.get("PYTHONPATH")) if p)
    return tag_env(env, run_id) if run_id else env


def output_problem(out: str) -> str:
    """Why the trace cannot be written to ``out`` ("" when it can): checked before the
    script runs, so a long run does not end in a traceback and no trace."""
    path = Path(out)
    if path.is_dir():
        return f"{out} is a folder; give a file name for the trace"
    parent = path.parent
    if not parent.exists():
        return f"the folder {parent} does not exist"
    if not parent.is_dir():
        return f"{parent} is not a folder"
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".fusionviz-probe-"):
            pass
    except OSError as e:
        return f"cannot write in {parent}: {e.strerror or e}"
    return ""


def run_capture(script: str, out: str, **options) -> Trace:
    """Run the capture child to the end (or ``timeout`` seconds) and return the trace
    (its script as settled: ``write_failure`` tells when the file could not hold it).
    With ``nproc`` > 1: rank 0's (``run_ranks`` gives them all)."""
    return run_ranks(script, out, **options)[0]


def run_ranks(
    script: str,
    out: str,
    *,
    timeout: float | None = None,
    on_progress: Callable[[dict], None] | None = None,
    on_output: Callable[[str], None] | None = None,
    poll: Callable[[], None] | None = None,
    **options,
) -> list[Trace]:
    """``run_capture``, returning every rank's trace: with ``nproc`` > 1 (an option),
    ``out`` is a folder where every rank writes its own trace (``rank_paths``), each
    settled; the caller compares them (``experiment.ranks.finish_ranks``). ``poll`` is
    called every ``POLL_S`` while the child runs, silent or not: when it raises (the
    caller cancelled), the child is ended and its trace settled ``cancelled``.
    ``kernel_cache``: a kept kernel folder (``capture_env``)."""
    kernel_cache = options.pop("kernel_cache", "") or ""
    nproc = int(options.get("nproc", 1) or 1)
    outs = rank_paths(out, nproc) if nproc > 1 else [Path(out)]
    if nproc > 1:
        Path(out).mkdir(parents=True, exist_ok=True)
    run_id, tail, failed, ended = new_run_id(), Tail(), [], {}
    finished: list[float] = []  # when each rank said "done" (its trace is final)
    # The launcher closes the fds its workers do not ask for: ranks report on stdout.
    channel = open_channel() if nproc == 1 else None
    with tempfile.TemporaryDirectory(prefix="fusionviz-cache-") as cache:
        env = capture_env(cache, run_id, kernel_cache)
        if channel:
            env[CHANNEL_ENV] = str(channel[1])
        try:
            proc = subprocess.Popen(
                capture_argv(script, out, **options), env=env, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
                pass_fds=channel[1:] if channel else (),  # the write end only: a child
                # holding the read end too would block for ever on a full pipe once
                # this parent is gone, instead of seeing EPIPE
            )
        except BaseException:
            for fd in channel or ():
                os.close(fd)
            raise
        if channel:
            os.close(channel[1])  # the child's now: its end is the pipe's only writer
        deadline = None if timeout is None else time.monotonic() + timeout
        timer = _killer(proc, run_id, timeout)

        def stop(e: BaseException) -> None:
            failed.append(e)
            _kill_group(proc, run_id)

        def progress_line(line: str) -> None:
            msg = parse_progress(line)
            if msg is not None and msg["event"] == "done":
                ended.update(msg)
                finished.append(time.monotonic())
            if msg is not None and on_progress:
                on_progress(msg)
            elif msg is None and on_output and not channel:  # stdout: the script's
                on_output(line)

        # With the private pipe, stdout is only the script's; else progress is on it.
        streams = [(proc.stdout, (on_output or _ignore) if channel else progress_line),
                   (proc.stderr, tail.add)]
        if channel:
            streams.append((os.fdopen(channel[0], "rb"), progress_line))
        readers = [(stream, pump(stream, on_line, stop)) for stream, on_line in streams]
        def lingering() -> bool:
            """Every rank finished its trace long ago, yet the process runs on (a
            thread or worker the script left behind blocks its exit): end it."""
            return (len(finished) >= nproc
                    and time.monotonic() - finished[-1] > EXIT_AFTER_DONE_S)

        try:
            code = _wait(proc, poll, lingering)
            stayed, lingered = code is None, set()
            if stayed:  # which ranks' traces say so: those still running
                lingered = ranks_running(proc.pid) if nproc > 1 else {0}
                _kill_group(proc, run_id)
                code = proc.wait()
            # The child is gone; what it started (a forked worker, a daemon) may hold
            # its output open and run on: after its last lines, end the whole tree.
            grace = time.monotonic() + EXIT_GRACE_S
            for _stream, reader in readers:
                reader.join(max(0.0, grace - time.monotonic()))
            _kill_group(proc, run_id)
            for _stream, reader in readers:
                reader.join(5)
        except BaseException:  # Ctrl+C, a poll that raised: never leave the child behind
            _kill_group(proc, run_id)
            proc.wait()
            for _stream, reader in readers:  # the pipes end with the tree: close them
                reader.join(5)
            for path in outs:
                _settle_stopped(str(path), script, tail)
            raise
        finally:
            if timer:
                timer.cancel()
            for stream, reader in readers:
                if not reader.is_alive():  # else a process out of reach still holds it
                    stream.close()
        if failed:  # a callback raised: the child was stopped
            for path in outs:
                _settle_stopped(str(path), script, tail)
            raise failed[0]
        timed_out = (deadline is not None and time.monotonic() >= deadline and code != 0
                     and not stayed)
        return settle_traces(outs, exit_code=code, status="timeout" if timed_out else None,
                             stderr_tail=tail.text(), script=str(script),
                             ended=ended if nproc == 1 else {}, lingered=lingered)


EXIT_GRACE_S = 2.0  # after the child exits, time for its last output lines
EXIT_AFTER_DONE_S = 30.0  # after its final trace, time for the child to exit by itself
POLL_S = 0.25  # how often run_ranks asks its caller's poll while the child runs
RANK_FILE = "rank{rank}.json.gz"  # each rank's trace in the folder of a multi-rank capture


def _wait(proc: subprocess.Popen, poll: Callable[[], None] | None,
          lingering: Callable[[], bool]) -> int | None:
    """The child's exit code, or None once ``lingering()`` says it outstayed its final
    trace; ``poll()`` asked every POLL_S meanwhile (it may raise)."""
    while True:
        try:
            return proc.wait(timeout=POLL_S)
        except subprocess.TimeoutExpired:
            if poll is not None:
                poll()
            if lingering():
                return None


def rank_paths(folder: str | os.PathLike, nproc: int) -> list[Path]:
    """The trace of every rank of a capture with ``nproc`` ranks, rank 0 first."""
    return [Path(folder) / RANK_FILE.format(rank=r) for r in range(nproc)]


def settle_traces(paths: list[Path], *, lingered: Collection[int] = (),
                  **how) -> list[Trace]:
    """Settle each trace file (``finalize_trace(path, **how)``: a missing one gets a
    trace of how the run ended) and read it, its script as settled, written or not.
    ``lingered``: the indexes of the paths whose process was ended after its final
    trace (``finalize_trace``'s ``lingered``)."""
    traces = []
    for i, path in enumerate(paths):
        settled = finalize_trace(str(path), lingered=i in lingered, **how)
        try:
            trace = tracefile.load_trace(path)
        except (TraceError, OSError):  # nothing could be written (write_failure: why)
            trace = Trace()
        traces.append(dataclasses.replace(trace, script=settled))
    return traces


def ranks_running(launcher: int) -> set[int]:
    """The ranks whose capture process still runs below ``launcher`` (torchrun), by the
    RANK in its environment (Linux /proc; empty elsewhere)."""
    ranks = set()
    for pid in descendants(launcher):
        try:  # a zombie's cmdline reads empty: that rank has exited
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
        except OSError:
            continue
        rank = next((v[5:] for v in env if v.startswith(b"RANK=")), b"")
        if b"fusionviz.model.capture" in argv and rank.isdigit():
            ranks.add(int(rank))
    return ranks


def _ignore(_line: str) -> None:
    pass


def _settle_stopped(out: str, script: str, tail: Tail) -> None:
    """The trace of a run stopped by the caller (Ctrl+C, a callback that raised)."""
    finalize_trace(out, exit_code=None, status="cancelled", stderr_tail=tail.text(),
                   script=str(script))


def _kill_group(proc: subprocess.Popen, run_id: str) -> None:
    """Kill the child and everything it started, daemons included (``kill_tree``)."""
    kill_tree(proc.pid, run_id)
    proc.kill()  # where there are no sessions; a no-op on a child already gone


def _killer(proc: subprocess.Popen, run_id: str, timeout: float | None):
    if timeout is None:
        return None
    timer = threading.Timer(timeout, _kill_group, args=(proc, run_id))
    timer.daemon = True
    timer.start()
    return timer
