"""Running one replay: the graph's script written to a temporary folder and captured
like any user script (a fresh process), with the capture's recorded Inductor settings
under the caller's (``fusionviz replay``, ``fusionviz advise --measure``)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from fusionviz.model.replay.script import replay_script
from fusionviz.model.run.runner import run_capture, write_failure
from fusionviz.model.trace import Graph, Trace
from fusionviz.model.whatif import WhatIf

MACHINE_SETTINGS = ("compile_threads", "force_disable_caches", "fx_graph_cache")
# settings under which Inductor runs kernels while it compiles (it times choices)
BENCHMARKING = ("max_autotune", "max_autotune_gemm", "max_autotune_pointwise",
                "benchmark_fusion", "benchmark_epilogue_fusion")


def captured_settings(config: dict) -> dict:
    """The trace's recorded Inductor settings a replay applies: scalar values, without
    the ones of the machine or the capture itself (threads, caches)."""
    return {k: v for k, v in config.items() if k not in MACHINE_SETTINGS
            and isinstance(v, bool | int | float | str)}


def replay(trace: Trace, trace_path: str, graph: Graph, out: str, *,
           whatif: WhatIf | None = None, config: dict | None = None, mode: str | None = None,
           timing: bool = True, timeout: float | None = None, on_progress=None,
           on_output=None, poll=None, turns: str | None = None,
           ticket: int = 0) -> tuple[Graph | None, str]:
    """(the replayed graph, "") or (None, why the replay failed); its trace is ``out``.
    ``replay_problems(graph)`` must be empty. With ``turns`` (a folder), it runs kernels
    only in the turns ``turns.schedule`` gives ticket ``ticket``."""
    captured = captured_settings(trace.config)
    # the capture's settings go under a mode's options (else its max_autotune=False would
    # undo mode="max-autotune"); the caller's config goes over both
    early = bool((mode or "").startswith("max-autotune")
                 or any({**captured, **(config or {})}.get(k) is True for k in BENCHMARKING))
    with tempfile.TemporaryDirectory(prefix="fusionviz-replay-") as folder:
        script = Path(folder) / f"replay_graph_{graph.index}.py"
        script.write_text(replay_script(graph, trace_path, turns, ticket, early),
                          encoding="utf-8")
        device = "cuda" if graph.device.startswith("cuda") else "cpu"
        replayed = run_capture(str(script), out, timeout=timeout, on_progress=on_progress,
                               on_output=on_output, poll=poll, mode=mode, config=config or {},
                               base_config=captured,
                               device=device, timing=timing, whatif=whatif or WhatIf())
    failure = write_failure(replayed.script)
    if replayed.script.status != "ok" or not replayed.graphs or failure:
        detail = replayed.script.message or failure or "no graph"
        return None, f"{replayed.script.status}: {detail}"
    return replayed.graphs[-1], ""
