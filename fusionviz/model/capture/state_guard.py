"""Keep the user's state as it was across the extra calls a capture makes.

Timing the user's callable eagerly and compiled means calling it again: a BatchNorm
in train mode updates its running statistics, a compiled optimizer step updates the
parameters and its own state, code may write into a tensor it holds. ``StateGuard``
copies, before the extra calls, the buffers of the modules the callable reaches (its
module, its arguments, the globals and closure cells its code names), and, while one
eager call runs under ``watch()``, every other pre-existing tensor just before an op
first writes into it (an optimizer's parameters and state). Only where that watch
cannot run are all the parameters and optimizer state copied (``keep_all``). Copies of
device tensors are kept in host memory: the GPU may be full. ``restore()`` writes them
back through ``.data``, which leaves the tensors' autograd version counters alone (a
graph the user built before, still waiting for its backward, stays valid).
"""

from __future__ import annotations

import torch
from torch.utils._python_dispatch import TorchDispatchMode


def roots_of(fn, args=(), kwargs=None) -> list:
    """The modules and optimizers a compiled callable reaches: its own module (an
    ``OptimizedModule``'s original, a bound method's owner), then its arguments, then
    the closure cells and globals its code names, in that order, each once."""
    seen: dict[int, object] = {}

    def add(obj) -> None:
        if isinstance(obj, torch.nn.Module | torch.optim.Optimizer) and id(obj) not in seen:
            seen[id(obj)] = obj

    add(fn)
    add(getattr(fn, "_orig_mod", None))
    add(getattr(fn, "__self__", None))
    for a in (*args, *(kwargs or {}).values()):
        add(a)
    code_fn = getattr(fn, "__func__", fn)
    code = getattr(code_fn, "__code__", None)
    for cell in getattr(code_fn, "__closure__", None) or ():
        try:
            add(cell.cell_contents)
        except ValueError:  # an empty cell
            pass
    if code is not None:
        globs = getattr(code_fn, "__globals__", {})
        for name in code.co_names:
            add(globs.get(name))
    return list(seen.values())


def root_tensors(roots, buffers_only: bool = False) -> list[torch.Tensor]:
    """The modules' buffers, and unless ``buffers_only`` their parameters and the
    optimizers' parameters and state."""
    out = []
    for r in roots:
        if isinstance(r, torch.nn.Module):
            out.extend(r.buffers())
            if not buffers_only:
                out.extend(r.parameters())
        elif not buffers_only:  # an optimizer: its parameters and its state's tensors
            for group in r.param_groups:
                out.extend(p for p in group["params"] if isinstance(p, torch.Tensor))
            for st in r.state.values():
                out.extend(v for v in st.values() if isinstance(v, torch.Tensor))
    return out


class StateGuard:
    """Copies of the user's tensors, written back by ``restore``."""

    def __init__(self, roots=()) -> None:
        self.roots = list(roots)
        self.saved: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}
        for t in root_tensors(self.roots, buffers_only=True):
            self.keep(t)

    def keep_all(self) -> None:
        """Also every parameter and optimizer tensor (where writes cannot be watched)."""
        for t in root_tensors(self.roots):
            self.keep(t)

    def keep(self, t: torch.Tensor) -> None:
        if id(t) not in self.saved:
            with torch.no_grad():
                self.saved[id(t)] = (t, t.detach().to("cpu", copy=True))

    def watch(self) -> _Writes:
        """A dispatch mode that keeps each pre-existing tensor before its first write."""
        return _Writes(self)

    def restore(self) -> int:
        """Write every copy back; the number of tensors put back."""
        with torch.no_grad():
            for t, copy in self.saved.values():
                t.data.copy_(copy)  # .data: the version counter stays as it is
        return len(self.saved)


class _Writes(TorchDispatchMode):
    """Keeps every tensor an op writes into, unless its memory was allocated by an op
    under this mode (an intermediate of the call); a view is kept as its base."""

    def __init__(self, guard: StateGuard) -> None:
        super().__init__()
        self.guard = guard
        self.made: set[int] = set()  # storages allocated under this mode (data pointers)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        schema = getattr(func, "_schema", None)
        for i, arg in enumerate(getattr(schema, "arguments", ())):
            alias = arg.alias_info
            if alias is None or not alias.is_write:
                continue
            value = args[i] if i < len(args) else kwargs.get(arg.name)
            for t in value if isinstance(value, list | tuple) else (value,):
                if isinstance(t, torch.Tensor) and _storage(t) not in self.made:
                    base = t._base if t._base is not None else t
                    self.guard.keep(base)
        out = func(*args, **kwargs)
        returns = getattr(schema, "returns", ())
        if not any(r.alias_info is not None for r in returns):  # fresh memory
            for o in out if isinstance(out, list | tuple) else (out,):
                if isinstance(o, torch.Tensor):
                    self.made.add(_storage(o))
        return out


def _storage(t: torch.Tensor) -> int:
    try:
        return t.untyped_storage().data_ptr()
    except (RuntimeError, NotImplementedError):  # no storage (e.g. a sparse tensor)
        return id(t)
