"""The user's objects at the end of a distributed script: let go where gloo's teardown
cannot hang.

When a DDP module dies after ``destroy_process_group()``, its Reducer drops the
group's last reference and the group's destructor joins gloo's worker threads while
holding the GIL. A worker that has just run an all-reduce is still freeing it, and
that work holds Python objects (the autograd context ``torch.autograd.graph`` keeps in
thread-local state), so the worker waits for the GIL: the rank hangs for ever
(pytorch/pytorch#56297; README, "A DDP job on gloo that hangs at exit"). It happens
when the module dies within moments of the last all-reduce, which a loaded machine
and the capture's extra work make likelier. So:

- ``destroy_process_group`` first waits a moment without the GIL, so that gloo's
  workers finish freeing their work before the group can go;
- ``runpy`` returns a copy of the script's globals, and an exception that ended it
  holds its frames: ``run_script`` keeps them, and ``let_go`` drops them only after
  the final trace and such a pause (a plain ``python script.py`` keeps them until the
  interpreter exits, not a moment after the script's last line).
"""

from __future__ import annotations

import gc
import os
import time

SETTLE_S = 0.5  # without the GIL before a process group may go: gloo's workers finish


def install(patcher) -> None:
    """Wrap ``destroy_process_group`` (torch.distributed's and distributed_c10d's)."""
    import torch.distributed as dist

    if not dist.is_available():
        return
    from torch.distributed import distributed_c10d

    for owner in (dist, distributed_c10d):
        patcher.wrap(owner, "destroy_process_group", _settled,
                     f"{owner.__name__}.destroy_process_group")


def _settled(orig):
    def destroy_process_group(*args, **kwargs):
        time.sleep(SETTLE_S)
        return orig(*args, **kwargs)

    return destroy_process_group


def let_go(held: list) -> None:
    """Drop ``held`` (what ``run_script`` kept of the script) and collect; in a rank of
    a multi-process job, only after SETTLE_S without the GIL."""
    if int(os.environ.get("WORLD_SIZE", "1") or 1) > 1:
        time.sleep(SETTLE_S)
    held.clear()
    gc.collect()
