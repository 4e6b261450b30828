"""What the user passed to ``torch.compile``, each timed eager vs compiled once.

``torch.compile`` is replaced, for the run, by a function that calls it and wraps what
it returns: an ``OptimizedModule`` gets its ``forward`` wrapped, a compiled function
is wrapped (its attributes kept). The first call of each runs as usual; right after
it, while the user's context (grad mode, autocast) still holds, the original callable
and the compiled one are timed on copies of that call's inputs
(``eager_program.measure_program``). Calls made while a measurement runs pass through.
"""

from __future__ import annotations

import contextlib
import functools
import traceback
import types

import torch

from fusionviz.model.capture.eager_program import clone_tree, measure_program
from fusionviz.model.capture.state_guard import roots_of
from fusionviz.model.capture.timing import in_lockstep, machine_load
from fusionviz.model.trace import Entry
from fusionviz.model.whatif import WHAT_IFS

_busy = [0]  # > 0 while a measurement runs: wrapped callables pass through


def install(patcher, recorder) -> None:
    """Replace ``torch.compile`` (undone with the patcher's other wraps)."""
    patcher.wrap(torch, "compile", lambda orig: _compile(orig, recorder), "torch.compile")


def _compile(orig, rec):
    def compile_(model=None, *args, **kwargs):
        if model is None:  # @torch.compile(mode=...): a decorator
            return lambda fn: compile_(fn, *args, **kwargs)
        compiled = orig(model, *args, **kwargs)
        try:
            return _wrap(rec, model, compiled, _cudagraphs(kwargs),
                         lambda fn: _cudagraphs_variant(orig, rec, fn, args, kwargs))
        except Exception:  # noqa: BLE001 - recording must never break the user's compile
            rec.on_error("torch.compile wrap", traceback.format_exc())
            return compiled

    return compile_


def _cudagraphs(kwargs: dict) -> bool:
    """Whether this ``torch.compile`` runs its graphs as CUDA graphs (its mode, its
    options, or Inductor's config)."""
    options = kwargs.get("options") or {}
    if kwargs.get("mode") in ("reduce-overhead", "max-autotune"):
        return True
    if "triton.cudagraphs" in options:
        return bool(options["triton.cudagraphs"])
    return bool(getattr(getattr(torch._inductor.config, "triton", None), "cudagraphs", False))


def _wrap(rec, model, compiled, cudagraphs: bool = False, variant=None):
    if isinstance(compiled, torch.nn.Module) and hasattr(compiled, "_orig_mod"):
        orig_mod = compiled._orig_mod
        watch = _Watch(rec, type(orig_mod).__name__, "module", orig_mod, compiled,
                       cudagraphs, variant)
        forward = compiled.forward
        compiled.forward = functools.wraps(forward)(
            lambda *a, **k: watch.call(forward, a, k))
        return compiled
    if not callable(compiled):
        return compiled
    name = getattr(model, "__qualname__", None) or type(model).__name__
    watch = _Watch(rec, name, "function", model, compiled, cudagraphs, variant)

    @functools.wraps(compiled)
    def run(*args, **kwargs):
        return watch.call(compiled, args, kwargs)

    return run


class _Watch:
    """One compiled callable: measured once, after its first call."""

    def __init__(self, rec, name: str, kind: str, eager, compiled,
                 cudagraphs: bool = False, variant=None) -> None:
        self.rec, self.name, self.kind = rec, name, kind
        # (held only until measured: ``_let_go``; never where nothing is measured)
        self.eager, self.compiled = (eager, compiled) if rec.measure_runtime else (None, None)
        self.cudagraphs = cudagraphs
        self.variant = variant  # eager callable -> (compiled under CUDA graphs, why not)
        self.done = False
        self.waiting = False  # timed after the script (``Recorder.after_script``)

    def call(self, fn, args, kwargs):
        if self.done or _busy[0] or not self.rec.measure_runtime:
            return fn(*args, **kwargs)
        self.done = True
        try:
            inputs = clone_tree((args, dict(kwargs)))  # the call may write into them
        except Exception:  # noqa: BLE001
            self.rec.on_error("entry inputs", traceback.format_exc())
            self._let_go()
            return fn(*args, **kwargs)
        before = len(self.rec.graphs)
        grad = torch.is_grad_enabled() and not torch.is_inference_mode_enabled()
        out = fn(*args, **kwargs)
        cids = tuple(dict.fromkeys(g.compile_id for g in self.rec.graphs[before:]))
        self.rec.guarded(self._measure, inputs, grad, cids, args, kwargs)
        if not self.waiting:
            self._let_go()
        return out

    def _let_go(self) -> None:
        """Keep nothing of the user's once measured: the compiled module's forward holds
        this watch, so a module held here would live on in a cycle until some garbage
        collection, a DDP module with its process group (``script_objects``)."""
        self.eager = self.compiled = self.variant = None

    def _measure(self, inputs, grad: bool, cids: tuple[str, ...], args, kwargs) -> None:
        flat = [a for a in torch.utils._pytree.tree_flatten(inputs)[0]
                if isinstance(a, torch.Tensor)]
        cuda = any(a.is_cuda for a in flat)
        base = Entry(name=self.name, kind=self.kind, compile_ids=cids)
        if not cids:
            self.rec.add_entry(_note(base, "no graph was compiled in its first call"))
            return
        if in_lockstep():
            self.rec.add_entry(_note(base, "not timed under torch.distributed: the extra "
                                           "calls would issue collectives on one rank only"))
            return
        if torch.is_inference_mode_enabled():
            self.rec.add_entry(_note(base, "not timed: called under torch.inference_mode"))
            return
        roots = roots_of(self.eager, args, kwargs)
        if cuda and self.cudagraphs:  # timed when the script has ended
            waiting = _note(base, WAITING)  # what stays if the script dies
            self.waiting = True
            self.rec.add_entry(waiting)
            self.rec.after_script.append(functools.partial(
                self._time, base, inputs, flat, roots, grad, user_context(), waiting))
            return
        self._time(base, inputs, flat, roots, grad)

    def _time(self, base: Entry, inputs, flat, roots, grad: bool,
              context=contextlib.nullcontext, waiting: Entry | None = None) -> None:
        """Eager vs compiled on copies of the first call's ``inputs``. With an entry
        ``waiting``, the compiled side replays CUDA graphs: this runs after the script,
        inside the ``context`` of autocast the first call had, and replaces it."""
        cuda, graphs = any(a.is_cuda for a in flat), waiting is not None
        add = functools.partial(self.rec.add_entry, replacing=waiting)
        self.rec.progress("entry_timing", name=self.name)
        if graphs:  # the what-if would measure what the callable already does
            graphed, why_not = None, ("your callable already runs under CUDA graphs"
                                      if WHAT_IF_CUDAGRAPHS in self.rec.what_if else "")
        else:
            graphed, why_not = self._what_if(cuda)
        _busy[0] += 1
        try:
            with context():
                res = measure_program(self.eager, self.compiled, inputs, roots,
                                      grad=grad and _wants_grad(flat, roots), cuda=cuda,
                                      grad_mode=grad, graphed=graphed,
                                      compiled_cudagraphs=graphs)
        except Exception as e:  # noqa: BLE001 - measuring must never break the user's run
            add(_note(base, f"not timed: {type(e).__name__}: {e}"))
            return
        finally:
            _busy[0] -= 1
            if graphs:
                self._let_go()
        if graphs:
            res.notes.insert(0, AFTER_SCRIPT)
        method = ("interleaved calls, wall time around each; device time from the CUDA "
                  "profiler" if cuda else "interleaved calls, wall time around each (CPU)")
        add(Entry(
            name=self.name, kind=self.kind, compile_ids=base.compile_ids,
            grad=res.eager_backward is not None,
            eager_forward=res.eager_forward, compiled_forward=res.compiled_forward,
            eager_backward=res.eager_backward, compiled_backward=res.compiled_backward,
            kernels=res.kernels, method=method, note="; ".join(res.notes),
            load={} if cuda else {**machine_load(), **res.load}, restored=res.restored,
            cudagraphs_forward=res.graphed_forward, cudagraphs_backward=res.graphed_backward,
            cudagraphs_note=why_not or res.graphed_note, compiled_cudagraphs=graphs))

    def _what_if(self, cuda: bool):
        """(the callable compiled again under CUDA graphs, or None; why not) when the
        user asked for ``--what-if reduce-overhead``."""
        if WHAT_IF_CUDAGRAPHS not in self.rec.what_if:
            return None, ""
        if not cuda:
            return None, "CUDA graphs need CUDA tensors: this callable runs on the CPU"
        if self.variant is None:
            return None, "not compiled through torch.compile"
        self.rec.progress("entry_what_if", name=self.name, what=WHAT_IF_CUDAGRAPHS)
        try:
            return self.variant(self.eager)
        except Exception as e:  # noqa: BLE001 - the what-if must not cost the real figures
            return None, f"could not compile with CUDA graphs: {type(e).__name__}: {e}"


WHAT_IF_CUDAGRAPHS = WHAT_IFS[0]  # "reduce-overhead"
WAITING = ("under CUDA graphs: to be timed when your script has ended (a call made "
           "during the run would overwrite the outputs your calls returned); the script "
           "did not end normally, so it was not")
AFTER_SCRIPT = ("timed after your script ended, on copies of its first call's inputs: "
                "under CUDA graphs a call made during the run would overwrite the outputs "
                "your calls returned (they live in the graphs' memory)")


def user_context():
    """A function giving the autocast state of now (CUDA and CPU), to enter later."""
    states = []
    for device in ("cuda", "cpu"):
        try:
            if torch.is_autocast_enabled(device):
                states.append((device, torch.get_autocast_dtype(device)))
        except (TypeError, AttributeError):  # torch < 2.4: no per-device queries
            if device == "cuda" and torch.is_autocast_enabled():
                states.append((device, torch.get_autocast_gpu_dtype()))
    cache = torch.is_autocast_cache_enabled()

    @contextlib.contextmanager
    def enter():
        with contextlib.ExitStack() as stack:
            for device, dtype in states:
                stack.enter_context(torch.autocast(device, dtype=dtype, cache_enabled=cache))
            yield

    return enter


def _cudagraphs_variant(orig, rec, fn, args: tuple, kwargs: dict):
    """((``fn`` compiled as the user compiled it but with CUDA graphs on, the context
    to call it in), or None; why not). It is compiled under a code object of its own,
    so Dynamo's cache for the user's callable gets no entry (and no recompile) from
    it; it compiles lazily, when called, and is always called (forward and backward)
    under ``Recorder.mute``: its graphs are not recorded."""
    backend = kwargs.get("backend", args[0] if args else "inductor")
    if backend != "inductor":
        return None, f"compiled with backend {backend!r}: CUDA graphs are Inductor's"
    kw = {k: v for k, v in kwargs.items() if k not in ("mode", "options")}
    options = kwargs.get("options")
    if options:
        kw["options"] = {**options, "triton.cudagraphs": True}
    else:
        mode = kwargs.get("mode")
        kw["mode"] = ("max-autotune" if mode in ("max-autotune", "max-autotune-no-cudagraphs")
                      else WHAT_IF_CUDAGRAPHS)
    return (orig(_fresh_caller(fn), **kw), rec.mute), ""


def _fresh_caller(fn):
    """A function calling ``fn`` whose code object is new: Dynamo keeps its cache on
    the code object, so compiling this adds nothing to the cache of the user's frame."""
    def caller(*args, **kwargs):
        return fn(*args, **kwargs)

    return types.FunctionType(caller.__code__.replace(), caller.__globals__, caller.__name__,
                              caller.__defaults__, caller.__closure__)


def _wants_grad(flat, roots) -> bool:
    if any(a.requires_grad for a in flat):
        return True
    return any(p.requires_grad for r in roots if isinstance(r, torch.nn.Module)
               for p in r.parameters())


def _note(entry: Entry, note: str) -> Entry:
    from dataclasses import replace

    return replace(entry, note=note)
