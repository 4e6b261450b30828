"""The trace data model: what Inductor did to every compiled graph, as plain data.

Every class is a frozen dataclass of str/int/float/bool/None, tuples and dicts, so
a trace round-trips through JSON (see ``tracefile.io``) and is never mutated once built.
Names of scheduler nodes are Inductor's own (``op3``); a *group* is the tuple of
pre-fusion node names that one scheduler node stands for at some point of fusion
(a single node is a group of one).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fusionviz.model.lazy import lazy_fields

FORMAT = "fusionviz-trace"
# 2: JSON Lines, the bulk in part lines after the core (tracefile.parts); 3: the same
# lines in columns, with one table of strings (tracefile.columns): a third of the size;
# 4: times in whole nanoseconds, eager kernels grouped (tracefile.kernel_order): half that
VERSION = 4

Group = tuple[str, ...]

# Node categories used throughout the app.
CATEGORIES = (
    "pointwise",
    "reduction",
    "template",
    "extern",
    "collective",  # a communication op (functional collective or its wait) among kernels
    "foreach",
    "nop",
    "other",
)

# Candidate outcomes in a round's ledger.
OUTCOMES = (
    "fused",  # fused in this round
    "rejected",  # can_fuse said no when the pair's turn came
    "cycle",  # fusing would create a cycle in the graph
    "benchmark_slower",  # benchmark_fusion timed it and the fused kernel was slower
    "spill",  # benchmark_fusion vetoed it for register spilling (not timed)
    "stale",  # one side was already consumed by an earlier fusion this round
    "pending",  # deferred decision that never resolved
    "skipped",  # never tried (e.g. a template pair already seen)
)


@dataclass(frozen=True)
class Access:
    """One buffer a node reads or writes, with Inductor's byte estimate."""

    buffer: str
    bytes: int = 0
    dep: str = "MemoryDep"  # MemoryDep | StarDep | WeakDep | ...


@dataclass(frozen=True)
class Origin:
    """One FX node a scheduler node was lowered from, and its user source line."""

    name: str
    target: str
    file: str = ""
    line: int = 0
    code: str = ""  # the user's source line, when it could be read
    module: str = ""  # the nn.Module path it ran in (h.3.attn; "" = the root or unknown)
    module_class: str = ""  # that module's class name (CausalSelfAttention)


@dataclass(frozen=True)
class Node:
    """A scheduler node as it stood before fusion."""

    name: str
    type: str  # Inductor class name: SchedulerNode, ExternKernelSchedulerNode, ...
    category: str  # one of CATEGORIES
    numel: str = ""
    rnumel: str = ""
    ops: tuple[str, ...] = ()  # short op names from its origins, e.g. ("add", "relu")
    reads: tuple[Access, ...] = ()
    writes: tuple[Access, ...] = ()
    origins: tuple[Origin, ...] = ()
    bytes: int = 0  # Inductor's read+write estimate for the node alone
    extern_kernel: str = ""  # e.g. extern_kernels.mm for extern nodes
    members: tuple[str, ...] = ()  # inner nodes of a foreach/grouped node
    debug: str = ""  # Inductor's debug_str(), truncated
    module: str = ""  # the deepest module path common to its origins ("" = root/none)
    module_class: str = ""  # that module's class name, when an origin's stack names it
    collective: Collective | None = None  # for category "collective"
    # for category "extern": the op, tensors and arguments of the call (None in traces
    # recorded before fusionviz recorded them, and for wrapper-only nodes: MultiOutput)
    extern_call: ExternCall | None = None


@dataclass(frozen=True)
class TensorSpec:
    """A tensor an extern call reads or writes, as Inductor laid it out at compile time."""

    name: str = ""  # the argument's name in the op's schema (self, mat1, weight, query)
    dtype: str = ""  # float32, bfloat16, float16, float8_e4m3fn, int64, ...
    # sizes and strides in elements; a symbolic size holds the value this compile was
    # made for (its hint); () when some value has none (unbacked)
    size: tuple[int, ...] = ()
    stride: tuple[int, ...] = ()
    size_expr: tuple[str, ...] = ()  # the sizes as expressions, when any is symbolic


@dataclass(frozen=True)
class ExternCall:
    """What an extern (library) call computes: its aten op, tensors and other arguments."""

    op: str = ""  # aten.mm, aten.addmm, aten.convolution, aten._scaled_dot_product_...
    inputs: tuple[TensorSpec, ...] = ()  # tensor arguments, in the op's order
    outputs: tuple[TensorSpec, ...] = ()
    # the other arguments by their schema names (stride, padding, dilation, groups,
    # transposed, is_causal, scale, alpha, beta, ...), as JSON values
    args: dict = field(default_factory=dict)
    note: str = ""  # what could not be read, and why


@dataclass(frozen=True)
class Collective:
    """What a communication node does: its op, over which process group, how much."""

    kind: str  # all_reduce, all_gather_into_tensor, reduce_scatter_tensor, wait_tensor, ...
    group: str = ""  # the process group's name ("0": the default group)
    reduce_op: str = ""  # sum, avg, max, … for reductions
    group_size: int = 0  # ranks in the group, where the op takes it
    bytes: int = 0  # the tensors it reads on this rank
    backend: str = ""  # the group's backend (nccl, gloo, "cpu:gloo,cuda:nccl"; "" unknown)


@dataclass(frozen=True)
class Edge:
    """A producer→consumer dependency through a buffer."""

    src: str
    dst: str
    buffer: str
    bytes: int = 0


@dataclass(frozen=True)
class Reason:
    """Why ``can_fuse`` said no: the WhyNoFuse text, or the check that returned False."""

    text: str
    check: str = ""  # WhyNoFuse | CppScheduling.can_fuse_vertical | ...
    # Inductor's log names the pair the other way round ("cannot fuse b with a"): its
    # backend checked (b, a) for the (a, b) the scheduler asked (Triton swaps a
    # reduction and a pointwise to check them)
    swapped: bool = False


@dataclass(frozen=True)
class BenchKernel:
    """One kernel timed by benchmark_fusion."""

    role: str  # a | b | fused
    ms: float | None = None  # None: not timed (e.g. spilled)
    n_regs: int | None = None
    n_spills: int | None = None
    nodes: Group = ()


@dataclass(frozen=True)
class Benchmark:
    """What ``speedup_by_fusion`` measured and decided for one pair."""

    fuse: bool | None = None
    ms_a: float | None = None
    ms_b: float | None = None
    ms_fused: float | None = None
    speedup: float | None = None  # (ms_a + ms_b) / ms_fused
    spill: str = ""  # "", "first", "second", "fused": which kernel vetoed it
    deferred: bool = False
    kernels: tuple[BenchKernel, ...] = ()


@dataclass(frozen=True)
class Candidate:
    """A candidate pair of one round, in Inductor's score order."""

    rank: int
    a: Group
    b: Group
    score: dict = field(default_factory=dict)  # score fields by name
    outcome: str = "pending"  # one of OUTCOMES
    reasons: tuple[Reason, ...] = ()
    benchmark: Benchmark | None = None
    bytes_saved: int | None = None
    forced: bool = False
    tried: tuple[Group, ...] = ()  # the two groups actually tried, when earlier fusions grew a or b


@dataclass(frozen=True)
class Verdict:
    """A ``can_fuse`` call while candidates were being collected."""

    a: Group
    b: Group
    ok: bool
    reasons: tuple[Reason, ...] = ()


@dataclass(frozen=True)
class Fusion:
    """A pair fused in a round, and the traffic Inductor estimates it saved."""

    a: Group
    b: Group
    bytes_a: int = 0
    bytes_b: int = 0
    bytes_fused: int = 0

    @property
    def bytes_saved(self) -> int:
        """Inductor's own estimate: bytes(a) + bytes(b) - bytes(fused)."""
        return self.bytes_a + self.bytes_b - self.bytes_fused


@dataclass(frozen=True)
class Round:
    """One ``fuse_nodes_once`` call."""

    index: int  # 1-based, in call order
    reorder: bool = False  # the loop-reordering round
    wall_s: float = 0.0
    groups_before: tuple[Group, ...] = ()
    groups_after: tuple[Group, ...] = ()
    candidates: tuple[Candidate, ...] = ()
    verdicts: tuple[Verdict, ...] = ()
    fusions: tuple[Fusion, ...] = ()
    verdicts_dropped: int = 0  # scan verdicts left out to bound the trace size


@dataclass(frozen=True)
class Reorder:
    """A scheduler pass that reorders the fused nodes after fusion, e.g. one of
    ``config.reorder_for_compute_comm_overlap_passes`` (moving collectives and their
    waits for overlap with compute). The groups are the same before and after; their
    execution order is what changes."""

    index: int  # 1-based, in call order
    name: str  # sink_waits_iterative, reorder_compute_for_overlap, a user pass's name
    order_before: tuple[Group, ...] = ()
    order_after: tuple[Group, ...] = ()
    wall_s: float = 0.0
    error: str = ""  # the pass raised (the exception went on to Inductor)


@dataclass(frozen=True)
class CommPass:
    """An FX pass before lowering that changed the graph's collectives, e.g. Inductor's
    ``bucket_all_gathers`` merging all-gathers into one (``config.bucket_all_gathers_fx``):
    how many of each kind there were before and after it."""

    name: str  # the pass as Inductor names it (GraphTransformObserver's pass name)
    before: dict = field(default_factory=dict)  # collective kind -> count
    after: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Kernel:
    """A generated kernel (Triton, C++) or an extern call, in call order."""

    name: str
    kind: str  # poi | red | per | tem | cpp | extern | foreach | combo | ...
    backend: str  # triton | cpp | extern | ...
    nodes: Group = ()  # pre-fusion scheduler nodes it computes
    groups: tuple[Group, ...] = ()  # the final fused nodes it was generated from
    source: str = ""
    bytes: int | None = None  # Inductor's estimate of bytes moved per call
    launch: dict = field(default_factory=dict)  # num_warps, num_stages, block sizes
    n_regs: int | None = None
    n_spills: int | None = None
    shared: int | None = None
    ms: float | None = None  # device time per graph call (GPU: profiler; CPU: wall)
    calls: int = 0  # launches per graph call
    ms_spread: tuple[float, ...] = ()  # (min, max) of the time of one launch (GPU) or call
    # When it ran within one graph call: ms from the call's start to its first launch's
    # start and to its last launch's end (medians over the timed calls; GPU: the CPU
    # side of the launch). A collective's time on the CPU is its wait's end minus its
    # own start (``fusionviz.model.comms.collective_times``).
    start_ms: float | None = None
    end_ms: float | None = None
    # each launch's (start, end) in ms from the call's start (medians over the timed
    # calls), for a kernel launched more than once per call the same number of times
    # in every timed call; () otherwise
    launches: tuple[tuple[float, float], ...] = ()


@dataclass(frozen=True)
class Timing:
    """Whole-graph runtime of the compiled module and of the same graph in eager.

    ``compiled_ms``/``eager_ms`` are what comparisons use: device-busy time per call
    on the GPU (the CUDA profiler), wall time per call on the CPU (where calls are
    synchronous). Each is a median; ``*_spread`` is (min, max) of its samples."""

    compiled_ms: float | None = None
    eager_ms: float | None = None
    repeats: int = 0  # wall-time samples of each side
    method: str = ""  # how the times were taken
    note: str = ""  # why something is missing
    max_abs_diff: float | None = None  # compiled vs eager outputs on the same inputs
    compiled_spread: tuple[float, ...] = ()
    eager_spread: tuple[float, ...] = ()
    compiled_wall_ms: float | None = None  # steady-state wall time per call
    compiled_wall_spread: tuple[float, ...] = ()
    eager_wall_ms: float | None = None
    eager_wall_spread: tuple[float, ...] = ()
    compiled_device_ms: float | None = None  # device-busy time per call (GPU)
    eager_device_ms: float | None = None
    profiled_calls: int = 0  # calls under the CUDA profiler (0: no device times)
    diff_note: str = ""  # why outputs were not compared ("random ops: ...")
    eager_source: str = ""  # what eager_* timed ("Dynamo graph, eager forward"; "none: why")
    load: dict = field(default_factory=dict)  # CPU: {"loadavg_1m", "cores"} while timing
    # The graph Dynamo captured, run eagerly: kept beside eager_* when eager_* is the
    # user's own program run eagerly (an ``Entry``'s), which is then the baseline
    dynamo_eager_ms: float | None = None
    dynamo_eager_wall_ms: float | None = None
    dynamo_eager_device_ms: float | None = None


@dataclass(frozen=True)
class BreakReason:
    """A Dynamo graph break that ended a graph: where in the user's code, and why.

    The graph compiled for that frame compile is the piece *before* the break; the code
    after it runs eagerly and is traced again as a new frame (a ``resume`` function)."""

    reason: str  # Dynamo's text, e.g. "Failed to trace builtin operator ... `print` ..."
    file: str = ""  # the user's file where the break happened (innermost frame)
    line: int = 0
    code: str = ""  # that source line, when it could be read
    function: str = ""  # the function it is in


@dataclass(frozen=True)
class Split:
    """This graph is one piece of a Dynamo graph another pass split before Inductor:
    Dynamo's DDP optimizer cuts at DistributedDataParallel's bucket boundaries, and
    Inductor compiles each piece (forward and backward) on its own."""

    by: str = "DDP optimizer"
    piece: int = 0  # 0-based, in forward order (the bucket DDP all-reduces last first)
    pieces: int = 1
    params: tuple[str, ...] = ()  # the bucket's parameters, by the graph's names
    bytes: int = 0  # their size: what the bucket's all-reduce moves


@dataclass(frozen=True)
class Frame:
    """The code Dynamo began this graph's frame at, when it is not the code after a
    graph break: the function compiled, or a function or module's ``forward`` that ran
    as a frame of its own because the code calling it was not traced (it ran eagerly,
    e.g. FSDP2's ``fully_shard`` hooks around a wrapped module, which Dynamo does not
    trace). Dynamo compiles such a frame once and reuses its graph for every call its
    guards accept: one graph for several modules of one class."""

    function: str  # qualified name: LlamaDecoderLayer.forward, train_step
    file: str = ""
    line: int = 0  # the function's first line
    module: str = ""  # the module whose forward it is: its path in the model ("": none
    #                   found, or the model itself when module_class is set)
    module_class: str = ""  # its class (the user's class, not FSDP's generated one)
    # the paths of every module of that class in the model (the graph's other callers)
    modules: tuple[str, ...] = ()
    wrapped_by: str = ""  # "fully_shard": an FSDP2-managed module (FSDPModule)
    caller: str = ""  # where the user's code called it: file:line in function
    # torch.compile's wrapper called it: the function or model the user compiled (not a
    # frame of its own inside it)
    entry: bool = False


@dataclass(frozen=True)
class Graph:
    """One compiled graph: a graph-break piece, forward, backward or inference."""

    index: int
    compile_id: str = ""
    kind: str = "inference"  # forward | backward | inference
    device: str = "cpu"
    backend: str = ""  # triton | cpp | ...
    nodes: tuple[Node, ...] = ()
    edges: tuple[Edge, ...] = ()
    rounds: tuple[Round, ...] = ()
    final_groups: tuple[Group, ...] = ()
    kernels: tuple[Kernel, ...] = ()
    compile_s: float = 0.0  # Inductor codegen + compile wall time
    fusion_s: float = 0.0  # wall time inside Scheduler.fuse_nodes
    timing: Timing | None = None
    warnings: tuple[str, ...] = ()
    # Why this graph exists (empty in traces recorded before fusionviz recorded them):
    # the graph break(s) its frame compile ended at, the failed guard(s) that made
    # Dynamo compile the frame again ("0/0: tensor 'x' size mismatch at index 0. ..."),
    # and the break whose following code this graph's frame is (a resume function).
    break_reasons: tuple[BreakReason, ...] = ()
    recompile_reasons: tuple[str, ...] = ()
    resumed_after: BreakReason | None = None
    reorders: tuple[Reorder, ...] = ()  # passes that reordered the nodes after fusion
    comm_passes: tuple[CommPass, ...] = ()  # FX passes before lowering that changed collectives
    # What ``fusionviz replay`` compiles again: the graph Inductor received, as code
    # ("code"), and its inputs' specs ("inputs": shape, stride, offset, dtype, device);
    # empty when not recorded, and then ``replay_note`` says why
    replay: dict = field(default_factory=dict)
    replay_note: str = ""
    # op counts of the bodies lowering stored to memory for their size (over
    # realize_opcount_threshold) instead of inlining them into their users; () also when
    # not recorded (Capabilities.missing names the hook then)
    large_bodies: tuple[int, ...] = ()
    split: Split | None = None  # one piece of a split Dynamo graph (None: a whole one)
    frame: Frame | None = None  # the code its frame starts at (None: a resume, or not recorded)


@dataclass(frozen=True)
class Problem:
    """Something that went wrong while recording (never fatal to the user's run)."""

    where: str
    message: str
    traceback: str = ""


@dataclass(frozen=True)
class Script:
    """The user's script and how its run ended."""

    path: str = ""
    argv: tuple[str, ...] = ()
    status: str = "running"  # running|ok|error|crashed|timeout|cancelled|no_graphs
    exit_code: int | None = None
    message: str = ""
    traceback: str = ""
    duration_s: float = 0.0


@dataclass(frozen=True)
class Samples:
    """Times of one side of a call, ms per call: every wall-clock sample (taken
    interleaved with the other side's) and, on the GPU, every profiled call's device
    time (the sum of its kernels' durations)."""

    wall: tuple[float, ...] = ()
    device: tuple[float, ...] = ()
    launches: float | None = None  # device kernels launched per call (GPU)
    faults: float | None = None  # CPU: minor page faults per call (median): fresh memory
    # CPU, a call without a backward: the same call again right after itself on the same
    # inputs (caches warm, as a loop of it alone runs), one per wall sample
    repeated: tuple[float, ...] = ()
    # CPU, forward: calls each right after the allocator gave its free memory back to
    # the OS (every page they touch faults in), and their page faults per call (median)
    fresh: tuple[float, ...] = ()
    fresh_faults: float | None = None


@dataclass(frozen=True)
class EagerKernel:
    """One kernel of the user's program run eagerly (GPU: a device kernel; CPU: a leaf
    aten op), attributed to the aten op and the module that ran it."""

    name: str  # the device kernel's name (GPU) or the aten op (CPU)
    op: str = ""  # the outermost aten op the module called (aten::linear), or the
    #               autograd node in the backward (AddmmBackward0)
    launcher: str = ""  # the innermost op that launched it (aten::addmm)
    module: str = ""  # module path as in the graph (h.3.attn; "" = the root or none)
    module_class: str = ""
    side: str = "forward"  # forward | backward
    ms: float = 0.0  # per call (GPU: device time; CPU: profiled CPU time)
    calls: float = 0.0  # launches per call


@dataclass(frozen=True)
class Entry:
    """A function or module the user passed to ``torch.compile``, timed as their
    program runs it: the original callable eagerly against the compiled one, on the
    same inputs, interleaved, forward and (when it built an autograd graph) backward."""

    name: str  # GPT2Model (a module), train_step (a function)
    kind: str = "function"  # module | function
    compile_ids: tuple[str, ...] = ()  # Dynamo frames compiled in its first call
    grad: bool = False  # its forward built an autograd graph: the backward is timed too
    eager_forward: Samples | None = None
    compiled_forward: Samples | None = None
    eager_backward: Samples | None = None
    compiled_backward: Samples | None = None
    kernels: tuple[EagerKernel, ...] = ()  # the eager program's, per call
    method: str = ""  # how the times were taken
    note: str = ""  # why something is missing, or what was unusual
    load: dict = field(default_factory=dict)  # CPU: {"loadavg_1m", "cores"} while timing
    restored: int = 0  # tensors of the user's state put back after the extra calls
    # --what-if reduce-overhead: the same callable compiled again with CUDA graphs on
    # (not recorded as graphs), timed as a third side interleaved with the other two
    cudagraphs_forward: Samples | None = None
    cudagraphs_backward: Samples | None = None
    cudagraphs_note: str = ""  # why it was not timed, or what was unusual
    # the user compiled it with CUDA graphs (mode="reduce-overhead"): its compiled side
    # replays them, timed after the script had ended
    compiled_cudagraphs: bool = False


@dataclass(frozen=True)
class StepSpan:
    """Something that ran during the profiled train step, in ms from the step's start.

    ``lane``: ``compute`` (a compiled graph's call, the optimizer) or ``communication``
    (a collective) as the CPU saw it; ``device compute`` / ``device communication`` on
    the GPU (the graph's kernels, the NCCL kernel)."""

    lane: str
    name: str
    start_ms: float
    end_ms: float
    kind: str = ""  # forward | backward | optimizer | all_reduce | broadcast | all_gather ...
    graph: int | None = None  # a compiled graph's call: its index
    bytes: int | None = None  # a collective: what it moves (its tensor), where recorded
    shape: tuple[int, ...] = ()  # a collective's tensor
    dtype: str = ""
    backend: str = ""  # a collective: gloo | nccl
    bucket: int | None = None  # a DDP all-reduce: its bucket, 0 = the first issued
    issue_ms: float | None = None  # a collective: when the script's thread issued it


@dataclass(frozen=True)
class StepTimeline:
    """One whole train step of this rank under ``torch.profiler``: the compiled graphs'
    calls and the collectives issued outside them (DDP's bucket all-reduces, FSDP's
    all-gathers). ``note`` says why nothing was recorded, when ``spans`` is empty."""

    version: int = 1
    spans: tuple[StepSpan, ...] = ()
    duration_ms: float | None = None  # from the step's start to its end
    device: str = "cpu"  # cuda: device lanes from the CUDA profiler
    window: str = ""  # which calls opened and closed the profiled window
    method: str = ""  # how it was measured (and what the profiler cost)
    note: str = ""  # "not recorded: ..." or what was unusual


@dataclass(frozen=True)
class Capabilities:
    """Which hooks were installed on this torch, and which were missing."""

    installed: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


@dataclass(frozen=True)
class Trace:
    """A whole capture: the script, its environment and every compiled graph."""

    format: str = FORMAT
    version: int = VERSION
    created: str = ""
    script: Script = field(default_factory=Script)
    env: dict = field(default_factory=dict)  # torch, triton, python, device_name, ...
    config: dict = field(default_factory=dict)  # inductor settings that mattered
    capabilities: Capabilities = field(default_factory=Capabilities)
    graphs: tuple[Graph, ...] = ()
    problems: tuple[Problem, ...] = ()
    warnings: tuple[str, ...] = ()
    entries: tuple[Entry, ...] = ()  # what the user compiled, timed eager vs compiled
    step: StepTimeline | None = None  # one train step per rank (None: not recorded)


# The bulk of a big trace, built on first read when loaded with ``lazy=True``.
lazy_fields(Node, "reads", "writes", "origins")
lazy_fields(Round, "candidates", "verdicts")
