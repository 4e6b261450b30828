"""Child entry point: instrument Inductor, run the user's script, write the trace.

    python -m fusionviz.model.capture --out T.json.gz [--mode M] [--benchmark-fusion]
        [--config key=value ...] [--device auto|cpu|cuda] [--no-timing]
        [--what-if reduce-overhead] -- SCRIPT [ARGS...]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import runpy
import signal
import sys
import threading
import time
import traceback
import warnings

from fusionviz.model.capture.no_graph import no_graph_message
from fusionviz.model.run.kernel_cache import CACHE_SETTINGS, kept_folder, set_cache_env
from fusionviz.model.run.protocol import ProgressWriter, progress_writer
from fusionviz.model.run.settings import parse_config
from fusionviz.model.trace import Script
from fusionviz.model.whatif import WHAT_IFS, WhatIf, parse_pair


def parse_args(argv: list[str]) -> argparse.Namespace:
    ap = argparse.ArgumentParser(prog="python -m fusionviz.model.capture")
    ap.add_argument("--out", required=True)
    ap.add_argument("--mode", default=None)
    ap.add_argument("--benchmark-fusion", action="store_true")
    ap.add_argument("--config", action="append", default=[], metavar="KEY=VALUE")
    # settings under the mode and --config (a replay's, recorded by its capture)
    ap.add_argument("--base-config", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    ap.add_argument("--no-timing", action="store_true")
    ap.add_argument("--stop-after-round", type=int, default=None, metavar="K")
    ap.add_argument("--forbid", action="append", default=[], metavar="OP_A,OP_B")
    ap.add_argument("--force", action="append", default=[], metavar="OP_A,OP_B")
    ap.add_argument("--keep-spills", action="store_true")
    ap.add_argument("--rules-graph", type=int, default=None, metavar="N")
    ap.add_argument("--what-if", action="append", default=[], choices=WHAT_IFS)
    ap.add_argument("script")
    ap.add_argument("args", nargs=argparse.REMAINDER)
    return ap.parse_args(argv)



def inductor_settings(opts: argparse.Namespace) -> dict:
    """The Inductor config to run under: the base settings (a replay's, from its
    capture), caches off (``caches.cache_settings``: kernels reused from a kept folder),
    then the mode's options and the user's overrides on top."""
    import torch

    from fusionviz.model.capture.caches import cache_settings

    settings: dict = parse_config(opts.base_config)
    settings.update(cache_settings())
    if opts.mode:
        settings.update(torch._inductor.list_mode_options(opts.mode))
    if opts.benchmark_fusion:
        settings["benchmark_fusion"] = True
    settings.update(parse_config(opts.config))
    return settings


def whatif_from(opts: argparse.Namespace) -> WhatIf:
    try:
        return WhatIf(
            stop_after_round=opts.stop_after_round,
            forbid=tuple(parse_pair(p) for p in opts.forbid),
            force=tuple(parse_pair(p) for p in opts.force),
            keep_spills=opts.keep_spills,
            graph=opts.rules_graph,
        )
    except ValueError as e:
        raise SystemExit(f"fusionviz: {e}") from e


def run_script(path: str, args: list[str], held: list | None = None
               ) -> tuple[str, int, str, str]:
    """Run ``path`` as __main__; return (status, exit code, message, traceback). What
    the script leaves (its globals, the exception that ended it) goes into ``held``,
    for ``script_objects.let_go``."""
    held = [] if held is None else held
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        held.append(runpy.run_path(path, run_name="__main__"))
    except SystemExit as e:
        held.append(e)
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if code:
            return "error", code, f"the script exited with status {code}", ""
    except BaseException as e:  # noqa: BLE001 - the user's error is data, not ours
        held.append(e)
        tb = traceback.format_exc()
        return "error", 1, f"{type(e).__name__}: {e}", tb
    return "ok", 0, "", ""


class Orphaned:
    """Stops the user's script when fusionviz, which reads its progress, is gone (a
    SIGKILL cannot be caught, so no one else ends this child): then the script's output
    goes to /dev/null (its pipes are broken: every write would raise BrokenPipeError),
    the main thread gets SIGINT (KeyboardInterrupt, as Ctrl+C), and the trace is
    written ``cancelled``. Only while ``armed`` (the script runs): after it, the child
    finishes its trace as usual."""

    MESSAGE = ("fusionviz ended (its progress pipe closed); graphs captured before are "
               "kept")

    def __init__(self, emit: ProgressWriter) -> None:
        self.emit, self.stopped, self._armed = emit, False, False
        self._lock = threading.Lock()

    def _watch(self) -> None:
        if not self.emit.wait_closed():
            return
        devnull = os.open(os.devnull, os.O_WRONLY)
        for fd in (1, 2):
            os.dup2(devnull, fd)
        with self._lock:
            if self._armed:
                self.stopped = True
                signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    @contextlib.contextmanager
    def armed(self):
        with self._lock:
            self._armed = True
        threading.Thread(target=self._watch, name="fusionviz-orphaned", daemon=True).start()
        try:
            yield self
        finally:
            with self._lock:
                self._armed = False
            if self.stopped:  # its KeyboardInterrupt may still be on its way: take it here
                with contextlib.suppress(KeyboardInterrupt):
                    time.sleep(1.0)


def main(argv: list[str] | None = None) -> int:
    emit = progress_writer()  # first: its pipe is out of the environment before all else
    opts = parse_args(sys.argv[1:] if argv is None else argv)
    # Under torchrun every rank runs this: "{rank}" in --out gives each its own trace.
    opts.out = opts.out.replace("{rank}", os.environ.get("RANK", "0"))
    if opts.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # before torch initialises CUDA
    os.environ["FUSIONVIZ_DEVICE"] = opts.device
    if kept_folder():  # torch reads the variables forcing caches on or off at import
        set_cache_env(os.environ, "", kept_folder())

    import torch

    # fusionviz turns Inductor's caches off (so every scheduler runs); torch warns that
    # this disables profile-guided dynamic shapes: our doing, not the user's to act on.
    warnings.filterwarnings("ignore", message="dynamo_pgo force disabled by",
                            category=UserWarning)
    from fusionviz.model.capture.caches import other_caches_off
    from fusionviz.model.capture.hooks import Hooks
    from fusionviz.model.capture.script_objects import let_go
    from fusionviz.model.capture.session import Recorder

    settings = inductor_settings(opts)
    whatif = whatif_from(opts)
    script = Script(path=os.path.abspath(opts.script), argv=tuple(opts.args))
    # the caches as they were go in the trace (session.cache_facts), not as asked
    requested = {k: v for k, v in settings.items() if _plain(v) and k not in CACHE_SETTINGS}
    measured = {"fusionviz.what_if": " ".join(opts.what_if)} if opts.what_if else {}
    rec = Recorder(opts.out, script, measure_runtime=not opts.no_timing, emit=emit,
                   requested={**requested, **whatif.to_config(), **measured},
                   what_if=tuple(opts.what_if))
    hooks = Hooks(rec, whatif)
    hooks.install()
    from fusionviz.model.trace import Capabilities

    rec.capabilities = Capabilities(tuple(hooks.p.installed), tuple(hooks.p.missing))
    rec.progress("start", script=script.path)
    rec.save()
    t0 = time.perf_counter()
    orphaned = Orphaned(emit)
    held: list = []  # the script's objects: they die in let_go, not at its last line
    with torch._inductor.config.patch(settings), other_caches_off():
        with orphaned.armed():
            status, code, message, tb = run_script(opts.script, opts.args, held)
        if orphaned.stopped:
            status, code, message, tb = "cancelled", 128 + signal.SIGINT, orphaned.MESSAGE, ""
        elif status == "ok":  # (else the waiting entries say it did not end normally)
            rec.run_after_script()
    hooks.uninstall()
    if status == "ok" and not rec.graphs:
        status, message = "no_graphs", no_graph_message(getattr(rec, "reasons", None),
                                                        limit=MAX_MESSAGE)
    rec.finish(Script(path=script.path, argv=script.argv, status=status, exit_code=code,
                      message=message[:MAX_MESSAGE], traceback=_tail(tb),
                      duration_s=time.perf_counter() - t0))
    let_go(held)  # after the final trace: were the teardown to hang, nothing is lost
    if tb:
        sys.stderr.write(tb)
    return code


MAX_MESSAGE = 2_000  # characters of the script's error message kept in the trace
MAX_TRACEBACK = 16_000  # characters of its traceback kept (the end: where it raised)


def _tail(text: str) -> str:
    if len(text) <= MAX_TRACEBACK:
        return text
    return f"[… {len(text) - MAX_TRACEBACK} characters cut …]\n" + text[-MAX_TRACEBACK:]


def _plain(v) -> bool:
    return isinstance(v, bool | int | float | str)


if __name__ == "__main__":
    sys.exit(main())
