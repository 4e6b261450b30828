"""The kept kernel cache (opt-in): ``FUSIONVIZ_KERNEL_CACHE=<folder>``.

By default every capture compiles in a fresh cache with Inductor's caches forced off,
so the scheduler runs and every kernel is compiled anew. With a kept folder, compiled
kernels (C++ ``.so`` files, Triton binaries) are reused from earlier captures; every
cache that would skip the scheduler or a measurement stays off (``CACHES_OFF``), so a
capture records the same graphs, rounds and kernels, only its compile is shorter.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager
from pathlib import Path

KERNEL_CACHE_ENV = "FUSIONVIZ_KERNEL_CACHE"
# Off in every capture, kept folder or not: "module.key" (inductor: torch._inductor).
CACHES_OFF = (
    "inductor.fx_graph_cache", "inductor.fx_graph_remote_cache",
    "inductor.autotune_local_cache", "inductor.autotune_remote_cache",
    "inductor.bundled_autotune_remote_cache", "inductor.remote_gemm_autotune_cache",
    "functorch.enable_autograd_cache", "functorch.enable_remote_autograd_cache",
    "dynamo.automatic_dynamic_local_pgo", "dynamo.automatic_dynamic_remote_pgo",
)
KEPT = "fusionviz.kernel_cache"  # the trace config's key: True when kernels were reused
CACHES_ON = "fusionviz.caches_on"  # and the caches of CACHES_OFF that were on, "" if none
# A trace config's keys about caches: the machine's, not settings a replay takes over.
CACHE_SETTINGS = ("force_disable_caches", KEPT, CACHES_ON,
                  *(k.removeprefix("inductor.") for k in CACHES_OFF))
# Environment variables that force a cache on or off over any setting (torch reads
# them at import): in a kept capture, the ones that would turn a cache above on are
# set to 0, and the ones forcing every cache off are removed.
_FORCED_OFF = ("TORCHINDUCTOR_FX_GRAPH_CACHE", "TORCHINDUCTOR_AUTOGRAD_CACHE",
               "TORCH_DYNAMO_AUTOMATIC_DYNAMIC_LOCAL_PGO")
_FORCE_ALL_OFF = ("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCH_COMPILE_FORCE_DISABLE_CACHES")


def kept_folder(env: MutableMapping[str, str] | None = None) -> str:
    """The kept kernel folder ``env`` (default: this process's) names, or ""."""
    return (os.environ if env is None else env).get(KERNEL_CACHE_ENV, "")


def set_cache_env(env: MutableMapping[str, str], scratch: str, kept: str = "") -> None:
    """Point the child's Inductor and Triton caches into ``kept`` (reused kernels, the
    other caches off) or, without one, into ``scratch`` with every cache forced off."""
    kept = kept or kept_folder(env)
    folder = Path(kept).resolve() if kept else Path(scratch)
    env["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "inductor")
    env["TRITON_CACHE_DIR"] = str(folder / "triton")
    if not kept:
        env["TORCHINDUCTOR_FORCE_DISABLE_CACHES"] = "1"
        return
    env[KERNEL_CACHE_ENV] = str(folder)
    for name in _FORCE_ALL_OFF:
        env.pop(name, None)
    for name in _FORCED_OFF:
        env[name] = "0"


@contextmanager
def shared_kernels(prefix: str = "fusionviz-kernels-") -> Iterator[str]:
    """A kernel folder for captures that compile the same graphs again (an
    experiment's variants): the kept one when set, else a temporary one, deleted after."""
    if kept_folder():
        yield kept_folder()
        return
    folder = tempfile.mkdtemp(prefix=prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)
