"""FX passes before lowering that change a graph's collectives (Inductor's bucketing:
``bucket_all_gathers``, ``bucket_reduce_scatters``, ``bucket_all_reduce``), recorded as
``trace.CommPass``: the count of each collective kind before and after the pass.

Inductor applies its graph passes through ``GraphTransformObserver.apply_graph_pass``
and ``apply_gm_pass``; both are wrapped to count the ``_c10d_functional`` calls of the
graph around each pass (only graphs that have any are counted after it). The passes
run before the graph's lowering starts, so the records wait in the Recorder for it.
"""

from __future__ import annotations

from collections import Counter

from fusionviz.model.capture.patcher import Patcher
from fusionviz.model.trace import CommPass

_MODULE = "torch.fx.passes.graph_transform_observer"
_MARK = "functional."  # _c10d_functional.all_reduce_.default, c10d_functional.…


def install(p: Patcher, rec) -> None:
    """Wrap the observer's pass runners; records go to ``rec.pending_comm_passes``."""
    try:
        import importlib

        owner = getattr(importlib.import_module(_MODULE), "GraphTransformObserver", None)
    except Exception:  # noqa: BLE001 - a torch without it: listed as missing
        owner = None

    def factory(orig):
        def apply(observer, pass_fn, *args, **kwargs):
            before = p.guard("collective count", _counts, observer)
            out = orig(observer, pass_fn, *args, **kwargs)
            if before:
                p.guard("collective pass", _record, rec, observer, before)
            return out

        return apply

    for method in ("apply_graph_pass", "apply_gm_pass"):
        p.wrap(owner, method, factory, f"{_MODULE}.GraphTransformObserver.{method}")


def _counts(observer) -> dict[str, int]:
    """Collective kind -> count in the observed graph (an attribute read per node: this
    runs around every graph pass of every compile)."""
    counts: Counter = Counter()
    for node in observer.gm.graph.nodes:
        if getattr(node.target, "namespace", None) in _NAMESPACES:
            target = str(node.target)
            counts[target.split(_MARK, 1)[-1].split(".")[0].rstrip("_")] += 1
    return dict(counts)


_NAMESPACES = frozenset({"_c10d_functional", "c10d_functional"})


def _record(rec, observer, before: dict[str, int]) -> None:
    after = _counts(observer)
    if after != before:
        rec.pending_comm_passes.append(CommPass(str(observer.passname), before, after))
