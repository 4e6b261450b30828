"""The ``eager`` section of ``fusionviz query --json``: each compiled callable timed
eager vs compiled, its budget, findings and kernel map (``docs/query.schema.json``,
``$defs/eager_entry``)."""

from __future__ import annotations

from fusionviz.model.report import eager_cudagraphs
from fusionviz.model.report.eager_explain import Explained, explain_all
from fusionviz.model.report.eager_figures import Figure, Versus
from fusionviz.model.report.eager_map import ModuleMap
from fusionviz.model.trace import Trace

MAP_ROWS = 50  # modules per side in the kernel map, by time lost or won


def eager_json(trace: Trace) -> list[dict]:
    return [_entry(ex) for ex in explain_all(trace)]


def _figure(f: Figure) -> dict:
    return {"median_ms": f.median, "q1_ms": f.q1, "q3_ms": f.q3, "min_ms": f.low,
            "max_ms": f.high, "samples": f.n, "noisy": f.noisy}


def _versus(vs: dict[str, Versus]) -> dict:
    return {clock: {"eager": _figure(v.eager), "compiled": _figure(v.compiled),
                    "speedup": v.speedup, "verdict": v.verdict} for clock, v in vs.items()}


def _map(mp: ModuleMap) -> dict:
    rows = sorted(mp.ranked(own=True), key=lambda m: -abs(m.own_delta_ms))[:MAP_ROWS]
    return {
        "coverage": mp.coverage, "eager_ms": mp.eager_total, "compiled_ms": mp.compiled_total,
        "modules": [{
            "path": m.path, "module_class": m.module_class, "eager_ms": m.own_eager_ms,
            "compiled_ms": m.own_compiled_ms, "delta_ms": m.own_delta_ms,
            "eager_kernels": [{"name": k.name, "op": k.op, "launcher": k.launcher,
                               "ms": k.ms, "calls": k.calls} for k in m.eager],
            "compiled_kernels": [{"graph": s.graph, "name": s.kernel.name, "ms": s.ms,
                                  "ops": list(s.ops)} for s in m.compiled],
        } for m in rows]}


def _entry(ex: Explained) -> dict:
    e = ex.entry
    launches = {side: s.launches for side, s in (("eager", e.eager_forward),
                                                 ("compiled", e.compiled_forward)) if s}
    return {
        "name": e.name, "kind": e.kind, "compile_ids": list(e.compile_ids), "grad": e.grad,
        "headline": ex.headline(), "method": e.method, "note": e.note,
        "restored_tensors": e.restored, "load": dict(e.load or {}), "uncertain": ex.busy,
        "approximate": ex.memory, "cache_sensitive": ex.caches,
        "fresh_memory": {side: {"ms": a, "fresh_ms": b, "fresh_faults": n}
                         for (_, side), (a, b, n) in ex.fresh_sensitive.items()},
        "forward": _versus(ex.forward), "backward": _versus(ex.backward),
        "step": {clock: {"eager_ms": a, "compiled_ms": b} for clock, (a, b) in ex.step.items()},
        "launches_per_forward": launches, "compiled_cudagraphs": e.compiled_cudagraphs,
        "budget": [{"what": w, "text": t} for w, t in ex.budget],
        "findings": [{"title": f.title, "detail": f.detail, "fix": f.fix,
                      "modules": list(f.modules)} for f in ex.findings],
        "kernel_map": {side: _map(mp) for side, mp in ex.maps.items()},
        "cudagraphs": eager_cudagraphs.as_json(e, _figure),
    }
