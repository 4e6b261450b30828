"""Where a Dynamo frame starts, when no graph break made it: the code Dynamo began
tracing and, where that is a module's ``forward``, the module.

Dynamo compiles a frame for every Python function its frame callback meets while the
code calling it runs eagerly: the function handed to ``torch.compile``, the code after
a graph break (a resume function: ``dynamo_reasons``), and any function or module's
``forward`` called from code Dynamo did not trace. FSDP2 makes the last kind
common: ``fully_shard``'s forward hooks are ``torch.compiler.disable``d, so Dynamo
cannot inline a wrapped module's call (the parent's frame breaks there, or is skipped
whole when the call sits in a loop), the hooks run eagerly and the module's
``forward`` starts a frame of its own, compiled once and reused by every module of
that class whose call its guards accept (e.g. each ``LlamaDecoderLayer``).

Read in ``OutputGraph.compile_subgraph`` (hooked by ``dynamo_reasons``) from the
root instruction translator's code and locals (``f_code``, ``f_locals``: private
API, feature-detected: a missing attribute leaves the frame unrecorded). The
module's path is looked up in the outermost module on the Python stack (the model the
user called); only strings are kept, no reference to a module or frame.
"""

from __future__ import annotations

import os
import sys

from fusionviz.model.capture.dynamo_events import is_library
from fusionviz.model.trace import Frame

MAX_MODULES = 64  # paths of same-class modules kept
_WRAPPERS = ("_wrapped_call_impl", "_call_impl", "__call__")  # nn.Module's call path
_NN_MODULE = os.sep + os.path.join("torch", "nn", "modules", "module.py")
_CONVERT = os.sep + os.path.join("torch", "_dynamo", "convert_frame.py")
_EVAL_FRAME = os.sep + os.path.join("torch", "_dynamo", "eval_frame.py")


def frame_start(output_graph, tx) -> Frame | None:
    """The frame Dynamo is compiling (``compile_subgraph``'s ``self`` and ``tx``), or
    None when its code cannot be read."""
    root = getattr(output_graph, "root_tx", None) or tx
    code = getattr(root, "f_code", None)
    if code is None:
        return None
    import torch

    local = _self_of(code, getattr(root, "f_locals", None) or {})
    name = str(getattr(code, "co_name", "") or "")
    function = str(getattr(code, "co_qualname", "") or name)
    file, line = str(getattr(code, "co_filename", "") or ""), int(
        getattr(code, "co_firstlineno", 0) or 0)
    callers = _callers(code)
    entry = _called_by_compile(callers)
    caller = next((f"{f.f_code.co_filename}:{f.f_lineno} in {f.f_code.co_name}"
                   for f in callers if not is_library(f.f_code.co_filename)), "")
    module = local if isinstance(local, torch.nn.Module) else None
    if module is None:
        return Frame(function=function, file=file, line=line, caller=caller, entry=entry)
    cls = user_class(type(module))
    if name in _WRAPPERS and file.endswith(_NN_MODULE):
        function = f"{cls.__name__}.forward"  # the call of the module: hooks and forward
    path, same = _paths(module, callers)
    return Frame(function=function, file=file, line=line,
                 module=path or "", module_class=cls.__name__, modules=same,
                 wrapped_by="fully_shard" if _fsdp2(module) else "", caller=caller,
                 entry=entry)


def _callers(code) -> list:
    """The Python frames that called ``code`` (the frame being compiled), innermost
    first: those above Dynamo's frame callback (``convert_frame``'s ``__call__``),
    or, where no such frame is found, every frame above this one."""
    frames, frame = [], sys._getframe(1)
    while frame is not None:
        frames.append(frame)
        frame = frame.f_back
    callback = [i for i, f in enumerate(frames) if f.f_code.co_filename.endswith(_CONVERT)]
    above = frames[callback[-1] + 1:] if callback else frames
    return [f for f in above if f.f_code is not code]


def _called_by_compile(callers) -> bool:
    """Whether torch.compile's wrapper called the code (through nn.Module's call, for
    a module): it is what the user compiled, not a frame nested in it."""
    for f in callers:
        name = f.f_code.co_filename
        if name.endswith(_NN_MODULE) and f.f_code.co_name in (*_WRAPPERS, "inner"):
            continue
        return name.endswith(_EVAL_FRAME)
    return False


def _self_of(code, f_locals: dict):
    """The frame's first argument (``self`` of a method), or None."""
    names = getattr(code, "co_varnames", ())
    if not getattr(code, "co_argcount", 0) or not names:
        return None
    return f_locals.get(names[0])


def _fsdp2(module) -> bool:
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:  # a torch without FSDP2 (or without torch.distributed)
        return False
    return isinstance(module, FSDPModule)


def user_class(cls: type) -> type:
    """The user's class of a module: for FSDP2's generated ``FSDPLlamaDecoderLayer``
    (``FSDPModule`` and the user's class), the user's ``LlamaDecoderLayer``."""
    try:
        from torch.distributed.fsdp import FSDPModule
    except ImportError:
        return cls
    if not issubclass(cls, FSDPModule):
        return cls
    return next((c for c in cls.__mro__[1:] if not issubclass(c, FSDPModule)), cls)


def _paths(module, callers) -> tuple[str | None, tuple[str, ...]]:
    """(``module``'s path in the outermost module on the stack (``callers``' ``self``)
    that holds it, the paths of every module of its class there); (None, ()) when none
    holds it. ``torch.compile``'s wrapper (``_orig_mod.``) is left out of the paths."""
    import torch

    outer = None
    for frame in callers:
        code = frame.f_code
        if code.co_argcount and code.co_varnames[0] == "self":
            owner = frame.f_locals.get("self")
            if isinstance(owner, torch.nn.Module):
                outer = owner
    if outer is None:
        return None, ()
    path, same, cls = None, [], type(module)
    for name, m in outer.named_modules(remove_duplicate=False):
        name = clean_path(name)
        if m is module and path is None:
            path = name
        if type(m) is cls and len(same) < MAX_MODULES and name not in same:
            same.append(name)
    return path, tuple(same) if path is not None else ()


def clean_path(name: str) -> str:
    """A module path without ``torch.compile``'s ``_orig_mod`` wrapper."""
    return ".".join(p for p in name.split(".") if p != "_orig_mod")
