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
  accumulated into any ``.grad``) and timed on their own; on the CPU a call without a
  backward that takes under ``BATCH_BELOW_MS`` is timed many at a time on one copy of
  its inputs (each sample their mean; each call's output freed before the next, as a
  loop of the call alone frees it); a longer call without a backward is also timed
  right after itself on the same inputs (``Samples.repeated``): where the two differ,
  its cost depends on what ran before it (the caches), and the figure says so;
- fresh memory (CPU, glibc): ``FRESH_CALLS`` forward calls of each side, each right
  after the allocator gave its free memory back to the OS (``malloc_trim``), so that
  the call pays a page fault for every page it touches (``Samples.fresh``): a
  program's allocator may or may not give memory back between its calls (glibc does so
  by thresholds that move with what the process allocated before), and where the
  fresh call is much slower, the figure depends on the allocator and says so;
- device time (GPU): ``PROFILED_CALLS`` calls of each side under the CUDA profiler,
  the eager ones with every module in a named range, which attributes each eager kernel
  to its aten op and module (``kernel_attribution``); on the CPU one profiled eager call
  gives the aten ops' CPU time per module.

The RNG, and every tensor of the user's state that the calls write into, are put back
afterwards (``state_guard``).
"""

from __future__ import annotations

import contextlib
import ctypes
import math
import statistics
import time

import torch
from torch.utils._pytree import tree_flatten, tree_map

try:
    import resource  # the page-fault counts (not on Windows)
except ImportError:
    resource = None

from fusionviz.model.capture import kernel_attribution as attribution
from fusionviz.model.capture.state_guard import StateGuard
from fusionviz.model.capture.timing import OtherCpu, preserved_rng, quiet_children
from fusionviz.model.trace import EagerKernel, Samples

WARMUP = 2
REPEATS = 20  # pairs of calls (eager, compiled) at most
BUDGET_S = 6.0  # stop taking pairs after this long (both sides together)
PROFILED_CALLS = 3
# CPU, no backward: a call shorter than this is timed BATCH-at-a-time on one copy of
# the inputs, as timeit does: alone, a 0.03 ms call carries 5-15 us of its inputs'
# fresh copy and of the other side's work (benchmarks/cpu_timing.py)
BATCH_BELOW_MS = 1.0
SAMPLE_MS = 5.0  # a batch makes a sample about this long
MAX_BATCH = 1000
PROBE_CALLS, PROBE_MS = 5, 200.0  # calls (at most, and ms) that decide a side's batch
FRESH_CALLS = 3  # CPU: forward calls of each side on memory given back to the OS,
FRESH_BUDGET_S = 2.0  # fewer where a round of them takes longer than this


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

    def __init__(self, fn, inputs, grad: bool, cuda: bool, eager: bool, params=(),
                 name: str = "", quiet=contextlib.nullcontext) -> None:
        self.fn, self.inputs, self.grad, self.cuda, self.eager = fn, inputs, grad, cuda, eager
        self.name = name or ("eager" if eager else "compiled")
        self.quiet = quiet  # the context of a whole call and its backward
        self.error = ""  # the what-if side's failure: it stops, the others go on
        self.batch = 1  # calls per timed sample (CPU, short calls without a backward)
        self.params = list(params)  # the modules' parameters: leaves of the backward
        self.fwd: list[float] = []
        self.bwd: list[float] = []
        # CPU, no backward, not batched: the call again right after itself, same inputs
        self.repeat = False
        self.repeated: list[float] = []
        self.faults: dict[str, list[float]] = {"fwd": [], "bwd": []}  # per call (CPU)
        self.fresh: list[tuple[float, float]] = []  # (ms, page faults): fresh memory
        self.backward_ok = grad
        self.why_no_backward = ""
        self.graphs = name == GRAPHED  # it replays CUDA graphs: each call a new step

    def mode(self):
        """The context of one call, entered outside the timed part: for the eager side
        the stance that runs compiled functions it reaches eagerly. Autocast keeps each
        parameter's cast until its outermost context exits: a program's step enters it
        anew, so each call here casts again, as the step does."""
        torch.clear_autocast_cache()
        if self.graphs:  # each call a new step: its replays may reuse memory
            getattr(torch.compiler, "cudagraph_mark_step_begin", lambda: None)()
        return eager_mode() if self.eager else contextlib.nullcontext()

    def step(self, record: bool = True, probe: bool = False) -> None:
        """One call (and backward), timed when ``record``; a ``probe`` (the call that
        finds what the program writes into, under a dispatch mode) decides nothing."""
        if not self.error:
            with self._failing():
                self._step(record, probe)

    def _step(self, record: bool, probe: bool) -> None:
        args, kwargs = clone_tree(self.inputs)  # copied outside the timed part
        known = self.params + _tensors((args, kwargs))
        with self.mode():
            _sync(self.cuda)
            f0 = _minor_faults()
            t0 = time.perf_counter()
            for _ in range(self.batch):
                out = None  # the last call's output freed first, as a loop of it frees it
                out = self.fn(*args, **kwargs)
            _sync(self.cuda)
            t1 = time.perf_counter()
            f1 = _minor_faults()
        if record:
            self.fwd.append((t1 - t0) * 1e3 / self.batch)
            self.faults["fwd"].append((f1 - f0) / self.batch)
            if self.repeat:  # (a side without a backward: nothing follows)
                del out  # freed first, as a loop of the call frees it
                self.repeated.append(self._again(args, kwargs))
                return
        if self.backward_ok:
            outs, leaves = grad_targets(out, known)
            if probe and not (outs and leaves):
                return
            if not outs or not leaves:
                self.backward_ok = False
                self.why_no_backward = (
                    f"{self.name}: "
                    + ("no output requires grad" if not outs else
                       "its outputs reach no leaf that requires grad"))
                return
            grads = [torch.ones_like(o) for o in outs]
            _sync(self.cuda)
            f2 = _minor_faults()
            t2 = time.perf_counter()
            torch.autograd.grad(outs, leaves, grads, allow_unused=True)
            _sync(self.cuda)
            t3 = time.perf_counter()
            if record:
                self.bwd.append((t3 - t2) * 1e3)
                self.faults["bwd"].append(_minor_faults() - f2)

    def _again(self, args, kwargs) -> float:
        """ms of one call on ``args``, ``kwargs`` (the mode entered untimed): the call
        again right after the last one, or on memory just given back (``fresh_step``)."""
        with self.mode():
            t0 = time.perf_counter()
            self.fn(*args, **kwargs)
            return (time.perf_counter() - t0) * 1e3

    def fresh_step(self, give_back) -> None:
        """One forward call right after ``give_back()`` returned the allocator's free
        memory to the OS: (ms, page faults) into ``fresh``."""
        if self.error:
            return
        with self._failing():
            args, kwargs = clone_tree(self.inputs)
            give_back()
            f0 = _minor_faults()
            ms = self._again(args, kwargs)
            self.fresh.append((ms, _minor_faults() - f0))

    def profiled_step(self) -> None:
        if not self.error:
            with self._failing():
                self._profiled_step()

    @contextlib.contextmanager
    def _failing(self):
        """Inside ``quiet``; the CUDA graphs side's exceptions stop only that side."""
        try:
            with self.quiet():
                yield
        except Exception as e:
            if self.name != GRAPHED:
                raise
            self.error = f"{type(e).__name__}: {e}"[:500]

    def _profiled_step(self) -> None:
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


def _minor_faults() -> int:
    """Minor page faults of this process so far (0 where the OS does not say): a call
    that touches fresh memory pays the OS for every page, a cost that varies with the
    allocator's state and, on a shared machine, several-fold over minutes."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt if resource else 0


def memory_giver():
    """A callable that gives the C allocator's free memory back to the OS (glibc's
    ``malloc_trim(0)``), or None where there is none (macOS, Windows, musl)."""
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (AttributeError, OSError):
        return None
    trim.argtypes, trim.restype = [ctypes.c_size_t], ctypes.c_int
    return lambda: trim(0)


def _fresh_calls(sides: list[_Side]) -> None:
    """Up to ``FRESH_CALLS`` forward calls of each side on memory given back to the OS
    (one each where that takes over ``FRESH_BUDGET_S``)."""
    give_back = memory_giver()
    if give_back is None or not _minor_faults():
        return
    start = time.perf_counter()
    for _ in range(FRESH_CALLS):
        for side in sides:
            side.fresh_step(give_back)
        if time.perf_counter() - start > FRESH_BUDGET_S:
            break


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
    # id -> the object, held: Python wrappers of autograd nodes are made on access and
    # freed after, so an id kept alone could be a later node's and skip it (on the GPU
    # the DDP optimizer's pieces lost every parameter's AccumulateGrad that way)
    seen: dict[int, object] = {id(t): t for t in leaves}
    todo = [o.grad_fn for o in outs]
    while todo:
        fn = todo.pop()
        if fn is None or id(fn) in seen:
            continue
        seen[id(fn)] = fn
        var = getattr(fn, "variable", None)  # AccumulateGrad: the leaf it feeds
        if isinstance(var, torch.Tensor) and id(var) not in seen:
            seen[id(var)] = var
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
        self.graphed_forward = self.graphed_backward = None  # --what-if reduce-overhead
        self.graphed_note = ""

    def samples(self, side: _Side, backward: bool) -> Samples:
        fwd, bwd, launches = self.device.get(side.name, ([], [], None))
        faults = side.faults["bwd" if backward else "fwd"]
        fresh = [] if backward else side.fresh
        return Samples(wall=tuple(side.bwd if backward else side.fwd),
                       device=tuple(bwd if backward else fwd),
                       repeated=() if backward else tuple(side.repeated),
                       fresh=tuple(ms for ms, _ in fresh),
                       fresh_faults=(statistics.median(n for _, n in fresh)
                                     if fresh else None),
                       launches=None if launches is None else round(launches, 2),
                       faults=(round(statistics.median(faults), 1)
                               if faults and not side.cuda else None))


def measure_program(eager_fn, compiled_fn, inputs, roots, *, grad: bool,
                    cuda: bool, grad_mode: bool | None = None, graphed=None,
                    compiled_cudagraphs: bool = False) -> Result:
    """Eager vs compiled, forward (and backward where ``grad``), on copies of
    ``inputs`` = (args, kwargs), under the grad mode of the user's call (``grad_mode``,
    default ``grad``: Dynamo guards on it, another would compile again); the user's
    state and RNG as they were afterwards. ``graphed``: (the callable compiled under
    CUDA graphs, the context to call it in), timed as a third side
    (``--what-if reduce-overhead``); its failure costs only its own figures.
    ``compiled_cudagraphs``: the compiled callable itself runs under CUDA graphs."""
    grad_mode = grad if grad_mode is None else grad_mode
    res = Result()
    if not cuda:
        quiet_children()  # compile workers still busy would be timed with the calls
    guard = StateGuard(roots)
    params = [p for r in roots if isinstance(r, torch.nn.Module) for p in r.parameters()]
    eager = _Side(eager_fn, inputs, grad, cuda, eager=True, params=params)
    compiled = _Side(compiled_fn, inputs, grad, cuda, eager=False, params=params)
    compiled.graphs = compiled_cudagraphs
    sides = [eager, compiled]
    try:
        with preserved_rng(), torch.set_grad_enabled(grad_mode):
            try:
                with guard.watch():
                    eager.step(record=False, probe=True)  # finds what calls write into
            except Exception as e:  # noqa: BLE001 - e.g. an op a dispatch mode cannot see
                guard.keep_all()
                res.notes.append(f"writes not watched ({type(e).__name__}); "
                                 "modules' and optimizers' tensors kept")
            if graphed is not None:
                sides += _graphed_side(graphed, inputs, grad, cuda, params, res)
            # cudagraph trees run a call as is, record the next, replay after
            for _ in range(WARMUP + 1 if compiled_cudagraphs else WARMUP):
                for side in sides:
                    side.step(record=False)
            if not cuda:
                res.notes += _batch_short_calls(sides)
            with OtherCpu() as other:
                _interleave(sides)
            if not cuda and other.cores is not None:
                res.load["other_cpu_cores"] = round(other.cores, 2)
            if not cuda:
                _fresh_calls([s for s in sides if not s.graphs])
            if cuda:
                _device_times(sides, roots, res)
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
    if len(sides) > 2 and sides[2].error:
        res.graphed_note = f"stopped under CUDA graphs: {sides[2].error}"
    elif len(sides) > 2:
        side = sides[2]
        res.graphed_forward = res.samples(side, backward=False)
        if grad and side.backward_ok:
            res.graphed_backward = res.samples(side, backward=True)
    return res


GRAPHED = "cudagraphs"  # the third side's name: compiled again under CUDA graphs


def _graphed_side(graphed, inputs, grad: bool, cuda: bool, params, res: Result) -> list:
    """The CUDA graphs side, warmed up until its graphs are recorded (cudagraph trees
    run a call eagerly, record on the next, replay after), or [] with the reason in
    ``res.graphed_note``; the note also says when Inductor skipped CUDA graphs for
    some of its graphs (then the figure is not all replays)."""
    from torch._dynamo.utils import counters

    fn, quiet = graphed
    side = _Side(fn, inputs, grad, cuda, eager=False, params=params, name=GRAPHED,
                 quiet=quiet)
    skips = counters["inductor"]["cudagraph_skips"]
    for _ in range(3):
        side.step(record=False)
    if side.error:
        res.graphed_note = f"could not run under CUDA graphs: {side.error}"
        return []
    skipped = counters["inductor"]["cudagraph_skips"] - skips
    if skipped:
        res.graphed_note = (f"Inductor skipped CUDA graphs for {skipped} of the graphs "
                            "(TORCH_LOGS=cudagraphs says why): those ran as plain "
                            "launches")
    return [side]


def _batch_short_calls(sides: list[_Side]) -> list[str]:
    """Sides without a backward whose calls take under ``BATCH_BELOW_MS`` get a batch
    (calls per sample) that makes a sample about ``SAMPLE_MS`` long; their note. The
    others without a backward are timed again right after each call (``repeat``)."""
    batched = []
    for side in sides:
        if side.backward_ok or side.error:
            continue
        # the fastest of 3 calls (of 5 while none is short): one preempted call (another
        # process on the cores) would leave a short call unbatched, and a slow first one
        # would make its batches small, each sample then carrying more of its cold call
        for k in range(1, PROBE_CALLS + 1):
            side.step()
            if (k >= 3 and min(side.fwd) < BATCH_BELOW_MS) or sum(side.fwd) > PROBE_MS:
                break
        ms = min(side.fwd, default=BATCH_BELOW_MS)
        side.fwd.clear()
        if ms < BATCH_BELOW_MS:
            side.batch = min(MAX_BATCH, max(2, math.ceil(SAMPLE_MS / max(ms, 1e-3))))
            batched.append(f"{side.name} x{side.batch}")
        else:
            side.repeat = True
    if not batched:
        return []
    return [f"calls under {BATCH_BELOW_MS:g} ms timed several at a time on one copy of the "
            f"inputs, each sample their mean ({', '.join(batched)})"]


def _interleave(sides: list[_Side]) -> None:
    """Rounds of one call of each side, the order rotating from round to round."""
    start = time.perf_counter()
    for i in range(REPEATS):
        for j in range(len(sides)):
            sides[(i + j) % len(sides)].step()
        if time.perf_counter() - start > BUDGET_S and i >= 4:
            break


def _device_times(sides: list[_Side], roots, res: Result) -> None:
    from torch.profiler import ProfilerActivity, profile

    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
    for side in sides:
        torch.cuda.synchronize()
        ranges = attribution.module_ranges(roots) if side.eager else contextlib.nullcontext()
        with profile(activities=acts) as prof, ranges:
            for _ in range(PROFILED_CALLS):
                side.profiled_step()
            torch.cuda.synchronize()
        events = prof.events()
        res.device[side.name] = attribution.per_call_device(events, PROFILED_CALLS)
        if side.eager:
            res.kernels = attribution.attribute(events, PROFILED_CALLS, cuda=True)


def _cpu_kernels(eager: _Side, roots) -> tuple[EagerKernel, ...]:
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof, \
            attribution.module_ranges(roots):
        for _ in range(PROFILED_CALLS):
            eager.profiled_step()
    return attribution.attribute(prof.events(), PROFILED_CALLS, cuda=False)
