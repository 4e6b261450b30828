"""Time the user's own callable eagerly against the compiled one, on the same inputs.

The baseline a user means by "eager" is their program without ``torch.compile``, not
the graph Dynamo traced from it: code may take another path while traced (a dense
attention mask built only under tracing, a branch on ``torch.compiler.is_compiling()``).
So the original callable (an ``OptimizedModule``'s ``_orig_mod``, the function passed
to ``torch.compile``) runs on copies of the inputs of the compiled call, under
``torch.compiler.set_stance("force_eager")`` (compiled functions it calls run eagerly
too), against the compiled callable on other copies:

- wall time: warm-up, then eager and compiled calls interleaved (the order alternating,
  as PyTorch's benchmark harness does, so that load changes hit both sides), each call
  synchronised, until ``REPEATS`` pairs or ``BUDGET_S``; with a backward, the
  gradients of the outputs are taken with ``torch.autograd.grad`` (nothing is
  accumulated into any ``.grad``) and timed on their own;
- device time (GPU): ``PROFILED_CALLS`` calls of each side under the CUDA profiler,
  the eager ones with every module in a named range, which attributes each eager kernel
  to its aten op and module (``kernel_attribution``); on the CPU one profiled eager call
  gives the aten ops' CPU time per module.

The RNG, and every tensor of the user's state that the calls write into, are put back
afterwards (``state_guard``).
"""

from __future__ import annotations

import contextlib
import time

import torch
from torch.utils._pytree import tree_flatten, tree_map

from fusionviz.model.capture import kernel_attribution as attribution
from fusionviz.model.capture.state_guard import StateGuard
from fusionviz.model.capture.timing import OtherCpu, preserved_rng, quiet_children
from fusionviz.model.trace import EagerKernel, Samples

WARMUP = 2
REPEATS = 20  # pairs of calls (eager, compiled) at most
BUDGET_S = 6.0  # stop taking pairs after this long (both sides together)
PROFILED_CALLS = 3


def clone_tree(tree):
    """A copy of the call's arguments: every tensor copied (leaves that required grad
    still do; a non-leaf becomes a leaf that requires grad), everything else as is. A
    tensor passed twice is copied once and passed twice: Dynamo guards on such
    aliasing (``input_ids is labels``), and breaking it would recompile the user's
    function."""
    copies: dict[int, torch.Tensor] = {}

    def copy(a):
        if not isinstance(a, torch.Tensor):
            return a
        if id(a) in copies:
            return copies[id(a)]
        with torch.no_grad():
            c = a.detach().clone(memory_format=torch.preserve_format)
        if a.requires_grad and (c.is_floating_point() or c.is_complex()):
            c.requires_grad_()
        copies[id(a)] = c
        return c

    return tree_map(copy, tree)


def _sync(cuda: bool) -> None:
    if cuda:
        torch.cuda.synchronize()


def eager_mode():
    """Compiled functions reached from the user's code run eagerly inside this."""
    stance = getattr(getattr(torch, "compiler", None), "set_stance", None)
    return stance("force_eager") if stance is not None else contextlib.nullcontext()


class _Side:
    """One side (the eager or the compiled callable) and its samples."""

    def __init__(self, fn, inputs, grad: bool, cuda: bool, eager: bool, params=()) -> None:
        self.fn, self.inputs, self.grad, self.cuda, self.eager = fn, inputs, grad, cuda, eager
        self.params = list(params)  # the modules' parameters: leaves of the backward
        self.fwd: list[float] = []
        self.bwd: list[float] = []
        self.backward_ok = grad
        self.why_no_backward = ""

    def mode(self):
        """The context of one call, entered outside the timed part: for the eager side
        the stance that runs compiled functions it reaches eagerly. Autocast keeps each
        parameter's cast until its outermost context exits: a program's step enters it
        anew, so each call here casts again, as the step does."""
        torch.clear_autocast_cache()
        return eager_mode() if self.eager else contextlib.nullcontext()

    def step(self, record: bool = True, probe: bool = False) -> None:
        """One call (and backward), timed when ``record``; a ``probe`` (the call that
        finds what the program writes into, under a dispatch mode) decides nothing."""
        args, kwargs = clone_tree(self.inputs)  # copied outside the timed part
        known = self.params + _tensors((args, kwargs))
        with self.mode():
            _sync(self.cuda)
            t0 = time.perf_counter()
            out = self.fn(*args, **kwargs)
            _sync(self.cuda)
            t1 = time.perf_counter()
        if record:
            self.fwd.append((t1 - t0) * 1e3)
        if self.backward_ok:
            outs, leaves = grad_targets(out, known)
            if probe and not (outs and leaves):
                return
            if not outs or not leaves:
                self.backward_ok = False
                self.why_no_backward = (
                    f"{'eager' if self.eager else 'compiled'}: "
                    + ("no output requires grad" if not outs else
                       "its outputs reach no leaf that requires grad"))
                return
            grads = [torch.ones_like(o) for o in outs]
            _sync(self.cuda)
            t2 = time.perf_counter()
            torch.autograd.grad(outs, leaves, grads, allow_unused=True)
            _sync(self.cuda)
            if record:
                self.bwd.append((time.perf_counter() - t2) * 1e3)

    def profiled_step(self) -> None:
        inputs = clone_tree(self.inputs)
        args, kwargs = inputs
        with torch.profiler.record_function(attribution.CALL_RANGE):
            with self.mode(), torch.profiler.record_function(attribution.FORWARD_RANGE):
                out = self.fn(*args, **kwargs)
            if self.backward_ok:
                with torch.profiler.record_function(attribution.SETUP_RANGE):
                    outs, leaves = grad_targets(out, self.params + _tensors(inputs))
                    grads = [torch.ones_like(o) for o in outs]
                if outs and leaves:
                    torch.autograd.grad(outs, leaves, grads, allow_unused=True)


def _tensors(tree) -> list:
    return [t for t in tree_flatten(tree)[0] if isinstance(t, torch.Tensor)]


def grad_targets(out, known=()) -> tuple[list, list]:
    """The floating-point outputs that require grad, and the leaves to differentiate
    them with respect to (``torch.autograd.grad``'s inputs): ``known`` (the parameters
    of the modules the call reaches, its inputs that require grad) and every leaf the
    outputs' autograd graph reaches (where ``AccumulateGrad`` names its variable)."""
    outs = [o for o in tree_flatten(out)[0]
            if isinstance(o, torch.Tensor) and o.requires_grad and o.grad_fn is not None]
    if not outs:
        return [], []
    leaves = [t for t in known if t.requires_grad and t.is_leaf]
    seen, todo = {id(t) for t in leaves}, [o.grad_fn for o in outs]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen.add(id(fn))
        var = getattr(fn, "variable", None)  # AccumulateGrad: the leaf it feeds
        if isinstance(var, torch.Tensor) and id(var) not in seen:
            seen.add(id(var))
            leaves.append(var)
        todo.extend(f for f, _ in fn.next_functions)
    return outs, leaves


class Result:
    """What ``measure_program`` measured: ``Samples`` of each side."""

    def __init__(self) -> None:
        self.eager_forward = self.compiled_forward = None
        self.eager_backward = self.compiled_backward = None
        self.kernels: tuple[EagerKernel, ...] = ()
        self.restored = 0
        self.notes: list[str] = []
        # eager | compiled -> (forward device ms per call, backward's, launches per call)
        self.device: dict[str, tuple[list[float], list[float], float]] = {}
        self.load: dict = {}  # CPU: {"other_cpu_cores": ...} while the calls were timed

    def samples(self, side: _Side, backward: bool) -> Samples:
        fwd, bwd, launches = self.device.get("eager" if side.eager else "compiled",
                                             ([], [], None))
        return Samples(wall=tuple(side.bwd if backward else side.fwd),
                       device=tuple(bwd if backward else fwd),
                       launches=None if launches is None else round(launches, 2))


def measure_program(eager_fn, compiled_fn, inputs, roots, *, grad: bool,
                    cuda: bool, grad_mode: bool | None = None) -> Result:
    """Eager vs compiled, forward (and backward where ``grad``), on copies of
    ``inputs`` = (args, kwargs), under the grad mode of the user's call (``grad_mode``,
    default ``grad``: Dynamo guards on it, another would compile again); the user's
    state and RNG as they were afterwards."""
    grad_mode = grad if grad_mode is None else grad_mode
    res = Result()
    if not cuda:
        quiet_children()  # compile workers still busy would be timed with the calls
    guard = StateGuard(roots)
    params = [p for r in roots if isinstance(r, torch.nn.Module) for p in r.parameters()]
    eager = _Side(eager_fn, inputs, grad, cuda, eager=True, params=params)
    compiled = _Side(compiled_fn, inputs, grad, cuda, eager=False, params=params)
    try:
        with preserved_rng(), torch.set_grad_enabled(grad_mode):
            try:
                with guard.watch():
                    eager.step(record=False, probe=True)  # finds what calls write into
            except Exception as e:  # noqa: BLE001 - e.g. an op a dispatch mode cannot see
                guard.keep_all()
                res.notes.append(f"writes not watched ({type(e).__name__}); "
                                 "modules' and optimizers' tensors kept")
            for _ in range(WARMUP):
                compiled.step(record=False)
                eager.step(record=False)
            with OtherCpu() as other:
                _interleave(eager, compiled)
            if not cuda and other.cores is not None:
                res.load["other_cpu_cores"] = round(other.cores, 2)
            if cuda:
                _device_times(eager, compiled, roots, res)
            else:
                res.kernels = _cpu_kernels(eager, roots)
    finally:
        res.restored = guard.restore()
    res.eager_forward = res.samples(eager, backward=False)
    res.compiled_forward = res.samples(compiled, backward=False)
    if grad and eager.backward_ok and compiled.backward_ok:
        res.eager_backward = res.samples(eager, backward=True)
        res.compiled_backward = res.samples(compiled, backward=True)
    elif grad:
        res.notes.append("no backward timed ("
                         + "; ".join(w for w in (eager.why_no_backward,
                                                 compiled.why_no_backward) if w) + ")")
    return res


def _interleave(eager: _Side, compiled: _Side) -> None:
    start = time.perf_counter()
    for i in range(REPEATS):
        first, second = (eager, compiled) if i % 2 == 0 else (compiled, eager)
        first.step()
        second.step()
        if time.perf_counter() - start > BUDGET_S and i >= 4:
            break


def _device_times(eager: _Side, compiled: _Side, roots, res: Result) -> None:
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    for side in (eager, compiled):
        torch.cuda.synchronize()
        ranges = attribution.module_ranges(roots) if side.eager else contextlib.nullcontext()
        with profile(activities=acts) as prof, ranges:
            for _ in range(PROFILED_CALLS):
                side.profiled_step()
            torch.cuda.synchronize()
        events = prof.events()
        res.device["eager" if side.eager else "compiled"] = attribution.per_call_device(
            events, PROFILED_CALLS)
        if side.eager:
            res.kernels = attribution.attribute(events, PROFILED_CALLS, cuda=True)


def _cpu_kernels(eager: _Side, roots) -> tuple[EagerKernel, ...]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof, \
            attribution.module_ranges(roots):
        for _ in range(PROFILED_CALLS):
            eager.profiled_step()
    return attribution.attribute(prof.events(), PROFILED_CALLS, cuda=False)
