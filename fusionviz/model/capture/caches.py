"""Torch's compile caches in a capture: every cache that would skip the scheduler or a
measurement off; compiled kernels reused only from a kept folder
(``model.run.kernel_cache``). Each key is feature-detected (torch versions differ)."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

from fusionviz.model.run.kernel_cache import CACHES_OFF, CACHES_ON, KEPT, kept_folder

_MODULES = {"inductor": "torch._inductor.config", "functorch": "torch._functorch.config",
            "dynamo": "torch._dynamo.config"}


def _present(prefix: str) -> dict[str, bool]:
    """{key: False} for this torch's keys of ``CACHES_OFF`` in the ``prefix`` config."""
    config = importlib.import_module(_MODULES[prefix])
    return {key: False for name in CACHES_OFF
            for p, _, key in [name.partition(".")] if p == prefix and hasattr(config, key)}


def cache_settings(kept: bool | None = None) -> dict:
    """The Inductor settings of a capture's caches: all forced off, or (``kept``,
    default: ``FUSIONVIZ_KERNEL_CACHE`` is set) only the kernel binaries reused."""
    kept = bool(kept_folder()) if kept is None else kept
    return {"force_disable_caches": not kept, **_present("inductor")}


@contextmanager
def other_caches_off() -> Iterator[None]:
    """AOTAutograd's cache and dynamo's profile-guided shapes off in the block."""
    with ExitStack() as stack:
        for prefix in ("functorch", "dynamo"):
            config = importlib.import_module(_MODULES[prefix])
            stack.enter_context(config.patch(_present(prefix)))
        yield


def cache_facts() -> dict:
    """What the caches were while a graph compiled, for the trace's config (short:
    every graph's file holds it): ``force_disable_caches``, ``fx_graph_cache``,
    ``fusionviz.kernel_cache`` (kernels reused from a kept folder) and
    ``fusionviz.caches_on``: the caches of ``CACHES_OFF`` that were on ("" when none)."""
    on = []
    for prefix, module in _MODULES.items():
        config = importlib.import_module(module)
        on += [f"{prefix}.{key}" for key in _present(prefix) if getattr(config, key)]
    inductor = importlib.import_module(_MODULES["inductor"])
    kept, folder = kept_folder(), os.environ.get("TORCHINDUCTOR_CACHE_DIR", "")
    return {"force_disable_caches": inductor.force_disable_caches,
            "fx_graph_cache": inductor.fx_graph_cache,
            KEPT: bool(kept) and folder.startswith(kept) and not inductor.force_disable_caches,
            CACHES_ON: " ".join(on)}
