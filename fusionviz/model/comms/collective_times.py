"""How long each collective of a graph took on this rank, from its kernels' times.

A functional collective (``_c10d_functional.all_reduce_``) and the ``wait_tensor``
that waits for it are nodes of their own, each with an extern kernel whose ``ms`` is
only the time of that call. What the collective took is read from both, and from
when they ran within the graph call (``Kernel.start_ms``/``end_ms``):

- **CPU** (gloo; every kernel time is wall time): the collective's call only issues
  the work (on gloo the reduction runs on a worker thread) and its wait blocks until
  the result is there. *The collective's time is ``span_ms``*: from the start of its
  call to the end of its wait, waiting for slower ranks included.
- **GPU with NCCL** (kernel times from the CUDA profiler): the call launches the NCCL
  kernel and the wait only makes the compute stream wait for it; neither blocks the
  CPU. *The collective's time is ``device_ms``*: the device time of the NCCL kernel
  its call launched (its own kernel's ``ms``), which also holds the time the kernel
  waited on the device for the other ranks. ``span_ms`` is then the CPU side only.
- **GPU with gloo** (ranks sharing a GPU; ``Collective.backend``): gloo reduces CUDA
  tensors through host copies, so the device time is only those copies: the time is
  ``span_ms``, as on the CPU.

Traces recorded before ``start_ms``/``end_ms`` existed have no span: ``span_ms`` and
``kernels_between`` are None ("not recorded"), the rest is still given.
"""

from __future__ import annotations

from dataclasses import dataclass

from fusionviz.model.trace import Collective, Graph, Kernel, Node


@dataclass(frozen=True)
class CollectiveTime:
    """One collective of a graph (not a wait), the wait(s) for it, and its times in ms
    per graph call (None: not recorded)."""

    node: str  # the collective's node (op1)
    collective: Collective  # its kind, group, reduce op, group size and bytes
    waits: tuple[str, ...] = ()  # the wait_tensor node(s) waiting on it, in node order
    kernel: str = ""  # the collective's kernel ("" when it has none)
    wait_kernels: tuple[str, ...] = ()  # the kernels of its wait(s), in call order
    # the time of the collective's own call and of its wait(s) as the CPU saw them:
    # the calls' wall time on the CPU, the CPU side of the launches on the GPU
    issue_ms: float | None = None
    wait_ms: float | None = None
    # from the start of its call to the end of its (last) wait, on the CPU's clock:
    # the collective's time on a CPU rank (waiting for slower ranks included)
    span_ms: float | None = None
    # GPU: the device time of what its call launched (the NCCL kernel): the
    # collective's time on a GPU rank; None on the CPU
    device_ms: float | None = None
    # kernels that started after the collective's call started and ended before its
    # (first) wait started: the compute that overlaps the communication
    kernels_between: tuple[str, ...] | None = None

    @property
    def time_ms(self) -> float | None:
        """The collective's time on this rank: ``device_ms`` on the GPU, ``span_ms``
        on the CPU."""
        return self.device_ms if self.device_ms is not None else self.span_ms

    @property
    def on_device(self) -> bool:
        """Whether ``time_ms`` is a device time (a GPU trace timed by the profiler)."""
        return self.device_ms is not None


def is_wait(node: Node) -> bool:
    """A ``wait_tensor`` node (the wait for a collective's result)."""
    return node.collective is not None and node.collective.kind.startswith("wait")


def collective_times(graph: Graph) -> list[CollectiveTime]:
    """Every collective of ``graph`` that is not a wait, in node order, with its times.

    A collective's waits are the wait nodes its edges lead to (the wait reads the
    buffer the collective writes); when no edge does, the first later wait reading a
    buffer the collective writes."""
    comms = [n for n in graph.nodes if n.collective is not None]
    if not comms:
        return []
    waits_of = _waits(graph, comms)
    kernel_of: dict[str, Kernel] = {}
    for k in graph.kernels:
        for name in k.nodes:
            kernel_of.setdefault(name, k)
    profiled = graph.timing is not None and graph.timing.profiled_calls > 0
    return [_time(n, waits_of.get(n.name, ()), kernel_of, graph.kernels, profiled)
            for n in comms if not is_wait(n)]


def runs_on_device(c: Collective) -> bool:
    """Whether the collective's work is device kernels (NCCL) rather than host work
    (gloo, which also reduces CUDA tensors: through host copies). Unknown backend
    (traces before it was recorded): taken as the device's."""
    backend = c.backend.lower()
    return not backend or "nccl" in backend or "gloo" not in backend


def waits_of(graph: Graph) -> dict[str, tuple[str, ...]]:
    """Collective node → the wait nodes for it (as ``collective_times`` pairs them)."""
    return _waits(graph, [n for n in graph.nodes if n.collective is not None])


def _waits(graph: Graph, comms: list[Node]) -> dict[str, tuple[str, ...]]:
    """Collective node → the wait nodes for it (each wait pairs with one collective)."""
    order = {n.name: i for i, n in enumerate(comms)}
    waits = {n.name for n in comms if is_wait(n)}
    found: dict[str, list[str]] = {}
    taken: set[str] = set()
    for e in graph.edges:
        if e.src in order and e.src not in waits and e.dst in waits and e.dst not in taken:
            found.setdefault(e.src, []).append(e.dst)
            taken.add(e.dst)
    for i, n in enumerate(comms):  # no edge: the next wait reading what it writes
        if is_wait(n) or n.name in found:
            continue
        writes = {a.buffer for a in n.writes}
        later = (w for w in comms[i + 1:] if is_wait(w) and w.name not in taken
                 and writes & {a.buffer for a in w.reads})
        wait = next(later, None)
        if wait is not None:
            found[n.name] = [wait.name]
            taken.add(wait.name)
    return {src: tuple(sorted(names, key=order.__getitem__)) for src, names in found.items()}


def _time(node: Node, waits: tuple[str, ...], kernel_of: dict[str, Kernel],
          kernels: tuple[Kernel, ...], profiled: bool) -> CollectiveTime:
    own = kernel_of.get(node.name)
    # a GPU trace's kernel ms is device time; only an NCCL collective's is its work
    device = profiled and runs_on_device(node.collective)
    wait_kernels = list({k.name: k for w in waits if (k := kernel_of.get(w))}.values())
    wait_times = [_host_ms(k, profiled) for k in wait_kernels]
    span = between = None
    starts = [k.start_ms for k in wait_kernels]
    ends = [k.end_ms for k in wait_kernels]
    if own and own.start_ms is not None and wait_kernels and None not in starts + ends:
        span = max(ends) - own.start_ms
        skip = {own.name, *(k.name for k in wait_kernels)}
        between = tuple(k.name for k in kernels if k.name not in skip
                        and k.start_ms is not None and k.end_ms is not None
                        and k.start_ms > own.start_ms and k.end_ms <= min(starts))
    return CollectiveTime(
        node=node.name, collective=node.collective, waits=waits,
        kernel=own.name if own else "", wait_kernels=tuple(k.name for k in wait_kernels),
        issue_ms=_host_ms(own, profiled) if own else None,
        wait_ms=sum(wait_times) if wait_times and None not in wait_times else None,
        span_ms=span, device_ms=own.ms if own and device else None,
        kernels_between=between)


def _host_ms(k: Kernel, profiled: bool) -> float | None:
    """A kernel's time as the CPU saw it: its recorded time on the CPU; on the GPU
    (where ``ms`` is device time) the CPU-side range of its launch, when recorded."""
    if not profiled:
        return k.ms
    if k.start_ms is None or k.end_ms is None:
        return None
    return k.end_ms - k.start_ms
