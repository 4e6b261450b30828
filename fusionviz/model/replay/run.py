"""Running one replay: the graph's script written to a temporary folder and captured
like any user script (a fresh process), with the capture's recorded Inductor settings
under the caller's (``fusionviz replay``, ``fusionviz advise --measure``). Where a graph
cannot be replayed, ``rerun`` runs the user's script again instead, with the change, and
takes its graph of the same index: slower (the whole script), but it needs nothing the
trace could not hold."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fusionviz.model.replay.script import replay_script
from fusionviz.model.run.kernel_cache import CACHE_SETTINGS
from fusionviz.model.run.runner import run_capture, write_failure
from fusionviz.model.trace import Graph, Trace
from fusionviz.model.whatif import WhatIf

MACHINE_SETTINGS = ("compile_threads", *CACHE_SETTINGS)
# settings under which Inductor runs kernels while it compiles (it times choices)
BENCHMARKING = ("max_autotune", "max_autotune_gemm", "max_autotune_pointwise",
                "benchmark_fusion", "benchmark_epilogue_fusion")


def _device(graph: Graph) -> str:
    """The capture's --device for a graph compiled for ``graph.device``."""
    return "cuda" if graph.device.startswith("cuda") else "cpu"


def captured_settings(config: dict) -> dict:
    """The trace's recorded Inductor settings a replay applies: scalar values, without
    the ones of the machine or the capture itself (threads, caches)."""
    return {k: v for k, v in config.items() if k not in MACHINE_SETTINGS
            and isinstance(v, bool | int | float | str)}


def replay(trace: Trace, trace_path: str, graph: Graph, out: str, *,
           whatif: WhatIf | None = None, config: dict | None = None, mode: str | None = None,
           timing: bool = True, timeout: float | None = None, on_progress=None,
           on_output=None, poll=None, turns: str | None = None,
           ticket: int = 0, kernel_cache: str = "") -> tuple[Graph | None, str]:
    """(the replayed graph, "") or (None, why the replay failed); its trace is ``out``.
    ``replay_problems(graph)`` must be empty. With ``turns`` (a folder), it runs kernels
    only in the turns ``turns.schedule`` gives ticket ``ticket``. ``kernel_cache``: a
    kept kernel folder (``run_capture``)."""
    captured = captured_settings(trace.config)
    # the capture's settings go under a mode's options (else its max_autotune=False would
    # undo mode="max-autotune"); the caller's config goes over both
    early = bool((mode or "").startswith("max-autotune")
                 or any({**captured, **(config or {})}.get(k) is True for k in BENCHMARKING))
    with tempfile.TemporaryDirectory(prefix="fusionviz-replay-") as folder:
        script = Path(folder) / f"replay_graph_{graph.index}.py"
        script.write_text(replay_script(graph, trace_path, turns, ticket, early),
                          encoding="utf-8")
        replayed = run_capture(str(script), out, timeout=timeout, on_progress=on_progress,
                               on_output=on_output, poll=poll, mode=mode, config=config or {},
                               base_config=captured,
                               device=_device(graph), timing=timing,
                               whatif=whatif or WhatIf(), kernel_cache=kernel_cache)
    failure = write_failure(replayed.script)
    if replayed.script.status != "ok" or not replayed.graphs or failure:
        detail = replayed.script.message or failure or "no graph"
        return None, f"{replayed.script.status}: {detail}"
    return replayed.graphs[-1], ""


def rerun_problem(trace: Trace) -> str:
    """Why the trace's script cannot be run again ("" when it can)."""
    if not trace.script.path:
        return "the trace does not name its script"
    if not Path(trace.script.path).is_file():
        return f"its script {trace.script.path} is not there any more"
    return ""


def rerun(trace: Trace, graph: Graph, out: str, *, whatif: WhatIf | None = None,
          config: dict | None = None, mode: str | None = None,
          timeout: float | None = None, poll=None,
          kernel_cache: str = "") -> tuple[Graph | None, str]:
    """(the script's graph of ``graph``'s index and kind, "") or (None, why not): the
    user's script captured again with the change (a forced pair: ``whatif.graph`` names
    the graph), under the capture's recorded settings, its trace ``out``."""
    problem = rerun_problem(trace)
    if problem:
        return None, problem
    again = run_capture(trace.script.path, out, timeout=timeout, poll=poll, mode=mode,
                        config=config or {}, base_config=captured_settings(trace.config),
                        device=_device(graph), whatif=whatif or WhatIf(),
                        script_args=list(trace.script.argv), kernel_cache=kernel_cache)
    failure = write_failure(again.script)
    if again.script.status != "ok" or failure:
        return None, f"{again.script.status}: {again.script.message or failure}"
    same = [g for g in again.graphs if g.index == graph.index and g.kind == graph.kind]
    if not same:
        return None, f"the script's run had no graph {graph.index} ({graph.kind})"
    return same[0], ""
