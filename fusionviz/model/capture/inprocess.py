"""Capture inside the current process (tests, benchmarks, notebooks)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fusionviz.model.capture.hooks import Hooks
from fusionviz.model.capture.session import Recorder
from fusionviz.model.trace import Capabilities, Script


@contextmanager
def capturing(out: str, *, measure_runtime: bool = False, emit=None) -> Iterator[Recorder]:
    """Record every graph Inductor compiles inside the ``with`` block.

    The caller is responsible for caches (``force_disable_caches``) and for
    ``torch._dynamo.reset()`` so that the scheduler really runs.
    """
    rec = Recorder(out, Script(path="<in-process>"), measure_runtime=measure_runtime, emit=emit)
    hooks = Hooks(rec)
    hooks.install()
    rec.capabilities = Capabilities(tuple(hooks.p.installed), tuple(hooks.p.missing))
    try:
        yield rec
        rec.run_after_script()
    finally:
        hooks.uninstall()
