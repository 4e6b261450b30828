"""Dynamo's DDP optimizer: one Dynamo graph cut at DistributedDataParallel's bucket
boundaries before Inductor, each piece compiled (forward and backward) on its own.

``DDPOptimizer.compile_fn`` computes the buckets (walking the graph backwards, as DDP
fills its buckets), hands them to ``pretty_print_buckets`` and then compiles piece 0,
1, ... in forward order, each through the backend (``compile_fx``). The hook on
``pretty_print_buckets`` keeps the buckets of the frame being compiled; each
``compile_fx`` call of that frame then takes the next piece (``Splits.take``), and the
graphs Inductor lowers during it, and their backwards (which share AOTAutograd's graph
id), carry it as ``Graph.split``.
"""

from __future__ import annotations

import re

from fusionviz.model.capture.dynamo_reasons import compile_id
from fusionviz.model.trace import Split

BY = "DDP optimizer"


def install(patcher, splits: Splits) -> None:
    try:
        from torch._dynamo.backends import distributed
    except ImportError:  # no torch.distributed in this build
        distributed = None
    patcher.wrap(distributed, "pretty_print_buckets",
                 lambda orig: _seen(orig, patcher, splits), "DDP optimizer buckets")


def _seen(orig, patcher, splits):
    def pretty_print_buckets(buckets, *args, **kwargs):
        patcher.guard("DDP optimizer buckets", splits.found, buckets)
        return orig(buckets, *args, **kwargs)

    return pretty_print_buckets


class Splits:
    """The frames the DDP optimizer split, and how many of their pieces were taken."""

    def __init__(self) -> None:
        self.pieces: dict[str, list[Split]] = {}  # compile id -> its pieces
        self.taken: dict[str, int] = {}

    def found(self, buckets) -> None:
        if len(buckets) < 2:  # one bucket: compiled whole, no split
            return
        cid = compile_id()
        self.pieces[cid] = [Split(by=BY, piece=i, pieces=len(buckets),
                                  params=tuple(readable(str(p))
                                               for p in getattr(b, "params", ())),
                                  bytes=int(getattr(b, "size", 0) or 0))
                            for i, b in enumerate(buckets)]
        self.taken[cid] = 0

    def take(self) -> Split | None:
        """The next piece of the frame being compiled (None: it was not split)."""
        cid = compile_id()
        pieces, k = self.pieces.get(cid), self.taken.get(cid, 0)
        if not pieces or k >= len(pieces):
            return None
        self.taken[cid] = k + 1
        return pieces[k]



def readable(name: str) -> str:
    """Dynamo's name of a parameter as the module names it:
    ``L_self_modules_layers_modules_0_parameters_weight_`` -> ``layers.0.weight``."""
    core = name.removeprefix("L_self_").removeprefix("L_").rstrip("_")
    if not re.match(r"(modules|parameters|buffers)_", core):
        return name
    return re.sub(r"(^|_)(modules|parameters|buffers)_", ".", core).strip(".")
