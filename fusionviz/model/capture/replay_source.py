"""What a graph needs to be compiled again on its own (``fusionviz replay``, #20): the
graph Inductor received, as code, and the specs of its inputs, as data.

The route is PyTorch's after-AOT repro files (``torch._dynamo.repro.after_aot``): the
FX graph's code with the shapes, strides, dtypes and devices of its inputs, rebuilt
and handed to ``compile_fx_inner``. Values are not kept: the replay fills its inputs
(floats random, integers and booleans zero: in range for any index), which is enough
to compile the same graph and run it. A graph that cannot be rebuilt so (symbolic
shapes, tensor constants, inputs of other kinds) gets a note saying why instead.
"""

from __future__ import annotations

import torch

MAX_CODE = 4 << 20  # characters of graph code kept (a 12-layer GPT-2 step: ~0.3 MB)


def replay_source(graph_lowering) -> tuple[dict, str]:
    """(``{"code", "inputs", "donated"}``, "") for this GraphLowering, or ({}, why
    not)."""
    gm = getattr(graph_lowering, "orig_gm", None)
    inputs = getattr(graph_lowering, "example_inputs", None)
    if gm is None or inputs is None:
        return {}, "this torch's GraphLowering keeps no orig_gm or example_inputs"
    if any(n.op == "get_attr" for n in gm.graph.nodes):
        return {}, "the graph holds tensor constants (get_attr), which are not recorded"
    specs = []
    for i, x in enumerate(inputs):
        spec = _spec(x)
        if isinstance(spec, str):
            return {}, f"input {i}: {spec}"
        specs.append(spec)
    code = gm.code
    if len(code) > MAX_CODE:
        return {}, f"the graph's code is {len(code):,} characters (over {MAX_CODE:,})"
    # a backward's saved tensors that Inductor may reuse (DonatedBuffer): they change
    # its memory-aware order of the kernels
    donated = [int(i) for i in getattr(graph_lowering, "bw_donated_idxs", None) or ()
               if getattr(graph_lowering, "is_backward", False)]  # (the forward's: none)
    return {"code": code, "inputs": specs, "donated": donated}, ""


def _spec(x) -> dict | str:
    if isinstance(x, torch.Tensor):
        if any(not isinstance(d, int) for d in (*x.shape, *x.stride(), x.storage_offset())):
            return "a symbolic shape (dynamic shapes are not replayed)"
        return {"shape": list(x.shape), "stride": list(x.stride()),
                "offset": x.storage_offset(), "dtype": str(x.dtype).removeprefix("torch."),
                "device": str(x.device), "requires_grad": bool(x.requires_grad)}
    if isinstance(x, torch.SymInt | torch.SymFloat | torch.SymBool):
        return "a symbolic size (dynamic shapes are not replayed)"
    if isinstance(x, bool | int | float) or x is None:
        return {"value": x}
    return f"a {type(x).__name__}, not a tensor or a number"
