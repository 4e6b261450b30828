"""Build realistic-shaped synthetic traces of any size, for tests and benchmarks.

The shape mimics an Inductor scheduler graph: parallel chains of pointwise ops with
reductions, occasional extern matmuls and skip connections between chains. Fusion
rounds only merge adjacent groups along chain edges (so groups stay contiguous chain
segments), every round's bookkeeping is mutually consistent, and the final kernels
cover the final groups. Everything is drawn from one ``random.Random(seed)``.
"""

from __future__ import annotations

import random
from dataclasses import replace

from fusionviz.model.trace import (
    Access,
    BenchKernel,
    Benchmark,
    Candidate,
    Edge,
    Fusion,
    Graph,
    Group,
    Kernel,
    Node,
    Origin,
    Reason,
    Round,
    Script,
    Timing,
    Trace,
    Verdict,
)

_POINTWISE_OPS = ("add", "mul", "relu", "sigmoid", "sub", "div", "exp", "tanh", "neg")
_REDUCTION_OPS = ("sum", "amax", "mean", "var_mean")
_REJECTS = (
    Reason("numel/rnumel mismatch", "WhyNoFuse"),
    Reason("no shared data", "WhyNoFuse"),
    Reason("exceeds max fusion", "WhyNoFuse"),
    Reason(
        "reduction then pointwise over a different range",
        "TritonScheduling.can_fuse_vertical",
    ),
)
_MAX_GROUP = 8  # like config.max_fusion_size, keeps groups kernel-sized


def synthetic_trace(
    n_nodes: int, *, seed: int = 0, rounds: int = 3, chains: int | None = None,
    blocks: int = 0,
) -> Trace:
    """A one-graph Trace of ``n_nodes`` scheduler nodes with ``rounds`` fusion rounds.

    ``chains`` parallel chains (default: about sqrt(n_nodes) / 3) set the shape:
    few chains give the deep, narrow graphs of real models. ``blocks`` > 0 gives the
    nodes a module hierarchy: ``embed``, then ``layers.0`` … ``layers.{blocks-1}``
    (each with ``norm``, ``attn.q``, ``attn.o``, ``mlp.fc1``, ``mlp.fc2`` by position),
    then ``head``.
    """
    rng = random.Random(seed)
    width = chains if chains else max(1, int(n_nodes**0.5 / 3))
    nodes, edges, chain_prev = _build_nodes(max(0, n_nodes), width, rng)
    if blocks > 0:
        nodes = _with_modules(nodes, blocks)
    cat = {n.name: n.category for n in nodes}
    size = {n.name: n.bytes for n in nodes}
    groups: list[Group] = [(n.name,) for n in nodes]
    all_rounds = []
    for index in range(1, rounds + 1):
        rnd = _fuse_round(index, groups, chain_prev, cat, size, rng)
        all_rounds.append(rnd)
        groups = list(rnd.groups_after)
    kernels = _kernels(groups, cat, size, rng)
    compiled = sum(k.ms or 0.0 for k in kernels)
    graph = Graph(
        index=0,
        compile_id="0/0",
        kind="inference",
        device="cuda",
        backend="triton",
        nodes=tuple(nodes),
        edges=tuple(edges),
        rounds=tuple(all_rounds),
        final_groups=tuple(groups),
        kernels=kernels,
        compile_s=round(0.5 + n_nodes * 2e-4, 3),
        fusion_s=round(sum(r.wall_s for r in all_rounds), 4),
        timing=Timing(
            compiled_ms=round(compiled, 4),
            eager_ms=round(compiled * 1.7, 4),
            repeats=10,
            method="synthetic",
        ),
    )
    return Trace(
        created="1970-01-01T00:00:00Z",
        script=Script(path="synthetic.py", status="ok"),
        env={"torch": "synthetic", "device_name": "synthetic"},
        graphs=(graph,),
    )


_PARTS = (("norm", "LayerNorm"), ("attn.q", "Linear"), ("attn.o", "Linear"),
          ("mlp.fc1", "Linear"), ("mlp.fc2", "Linear"))


def _with_modules(nodes: list[Node], blocks: int) -> list[Node]:
    """``nodes`` placed in embed / layers.k.<part> / head by their position."""
    n = len(nodes)
    edge = max(1, n // 50)
    per = max(1, (n - 2 * edge) // blocks)
    out = []
    for i, node in enumerate(nodes):
        if i < edge:
            module, cls = "embed", "Embedding"
        elif i >= edge + per * blocks:
            module, cls = "head", "Linear"
        else:
            k, at = divmod(i - edge, per)
            part, cls = _PARTS[at * len(_PARTS) // per]
            module = f"layers.{k}.{part}"
        out.append(replace(node, module=module, module_class=cls))
    return out


def _build_nodes(n: int, width: int, rng: random.Random):
    """Nodes op0..op{n-1} in topological order, their edges, and each node's chain parent."""
    nodes: list[Node] = []
    edges: list[Edge] = []
    chain_prev: dict[str, str] = {}  # node -> previous node of its chain (fusion axis)
    last: list[int] = [-1] * width  # last node index of each chain
    out: list[Access] = []  # each node's output; consumers share the same frozen object
    for i in range(n):
        name = f"op{i}"
        chain = i % width
        # One draw per node; sizes and ops are derived from its digits, which is
        # random enough here and a third of the cost of separate rng calls.
        roll = rng.random()
        category = "extern" if roll < 0.04 else "reduction" if roll < 0.2 else "pointwise"
        numel = 1 << (12 + int(roll * 1000) % 9)
        rnumel = 1 << (6 + int(roll * 7919) % 6) if category == "reduction" else 0
        out.append(Access(buffer=f"buf{i}", bytes=4 * numel))
        reads: list[Access] = []
        producers: list[int] = []
        if last[chain] >= 0:
            producers.append(last[chain])
            chain_prev[name] = f"op{last[chain]}"
        else:
            reads.append(Access(buffer=f"arg{chain}_1", bytes=4 * numel))
        skip = rng.random()
        if i >= width and skip < 0.12:  # skip connection, maybe across chains
            src = i - width * (2 + int(skip * 41) % 5) - (int(skip * 997) % 3 - 1)
            if 0 <= src < i and src not in producers:
                producers.append(src)
        if category == "extern":
            reads.append(Access(buffer=f"primals_{i}", bytes=4 * numel))
        for p in producers:
            reads.append(out[p])
            edges.append(
                Edge(src=f"op{p}", dst=name, buffer=out[p].buffer, bytes=out[p].bytes)
            )
        nodes.append(_node(name, category, numel, rnumel, tuple(reads), (out[i],), roll))
        last[chain] = i
    return nodes, edges, chain_prev


def _node(name, category, numel, rnumel, reads, writes, roll) -> Node:
    if category == "extern":
        ops, kind, extern = ("mm",), "ExternKernelSchedulerNode", "extern_kernels.mm"
    elif category == "reduction":
        ops, kind, extern = (_REDUCTION_OPS[int(roll * 101) % 4],), "SchedulerNode", ""
    else:
        k = int(roll * 1009) % len(_POINTWISE_OPS)
        ops, kind, extern = (
            _POINTWISE_OPS[k : k + 1 + int(roll * 53) % 3],
            "SchedulerNode",
            "",
        )
    line = 10 + int(name[2:]) % 200
    return Node(
        name=name,
        type=kind,
        category=category,
        numel=str(numel),
        rnumel=str(rnumel) if rnumel else "",
        ops=ops,
        reads=reads,
        writes=writes,
        origins=(
            Origin(
                name=f"{ops[0]}_{name[2:]}",
                target=f"aten.{ops[0]}.default",
                file="model.py",
                line=line,
                code=f"x = torch.{ops[0]}(x)",
            ),
        ),
        bytes=sum(a.bytes for a in reads) + sum(a.bytes for a in writes),
        extern_kernel=extern,
    )


def _fuse_round(index, groups, chain_prev, cat, size, rng) -> Round:
    """One fusion round over ``groups``: scan adjacent pairs, rank, decide, merge the fused.

    Like Inductor, pairs that ``can_fuse`` rejects during the scan are recorded as
    verdicts and never become candidates; the rest are ranked by memory score.
    """
    gid = {name: g for g, members in enumerate(groups) for name in members}
    pairs, verdicts = [], []
    for g, members in enumerate(groups):
        pg = gid.get(chain_prev.get(members[0], ""))
        if pg is None:
            continue
        a = groups[pg]
        if "extern" in (cat[a[0]], cat[members[0]]):
            continue
        if len(a) + len(members) > _MAX_GROUP or rng.random() < 0.15:
            reason = (
                _REJECTS[2] if len(a) + len(members) > _MAX_GROUP else rng.choice(_REJECTS)
            )
            verdicts.append(Verdict(a=a, b=members, ok=False, reasons=(reason,)))
            continue
        pairs.append((pg, g))
    gbytes = [sum(size[n] for n in members) for members in groups]
    shared = {p: size[groups[p[0]][-1]] // 2 for p in pairs}  # the chain buffer, read+write
    pairs.sort(key=lambda p: (-shared[p], p))
    consumed: set[int] = set()
    merged_into: dict[int, int] = {}
    candidates, fusions = [], []
    for rank, (ga, gb) in enumerate(pairs):
        a, b = groups[ga], groups[gb]
        saved = 2 * shared[(ga, gb)]
        outcome, reasons, bench = _decide(ga, gb, consumed, rng)
        if outcome == "fused":
            consumed.update((ga, gb))
            merged_into[gb] = ga
            fusions.append(
                Fusion(
                    a=a,
                    b=b,
                    bytes_a=gbytes[ga],
                    bytes_b=gbytes[gb],
                    bytes_fused=gbytes[ga] + gbytes[gb] - saved,
                )
            )
        candidates.append(
            Candidate(
                rank=rank,
                a=a,
                b=b,
                outcome=outcome,
                reasons=reasons,
                benchmark=bench,
                score={
                    "node_type": int(cat[a[0]] == cat[b[0]]),
                    "memory": saved // 2,
                    "proximity": -(gb - ga),
                },
                bytes_saved=saved if outcome == "fused" else None,
            )
        )
    return Round(
        index=index,
        wall_s=round(1e-3 + len(groups) * 5e-6, 5),
        groups_before=tuple(groups),
        groups_after=_merge(groups, merged_into),
        candidates=tuple(candidates),
        verdicts=tuple(verdicts),
        fusions=tuple(fusions),
    )


def _decide(ga, gb, consumed, rng):
    """Outcome, reasons and benchmark of one ranked pair."""
    if ga in consumed or gb in consumed:
        return "stale", (), None
    roll = rng.random()
    if roll < 0.7:
        bench = None
        if roll < 0.1:
            ms_a, ms_b = rng.uniform(0.01, 0.1), rng.uniform(0.01, 0.1)
            fused = (ms_a + ms_b) / rng.uniform(1.05, 1.9)
            bench = Benchmark(True, ms_a, ms_b, fused, (ms_a + ms_b) / fused)
        return "fused", (), bench
    if roll < 0.8:
        return "rejected", (rng.choice(_REJECTS),), None
    if roll < 0.95:
        ms_a, ms_b = rng.uniform(0.01, 0.1), rng.uniform(0.01, 0.1)
        fused = (ms_a + ms_b) / rng.uniform(0.5, 0.98)
        bench = Benchmark(False, ms_a, ms_b, fused, (ms_a + ms_b) / fused)
        return "benchmark_slower", (), bench
    kernels = (BenchKernel("fused", None, n_regs=255, n_spills=1 + int(roll * 977) % 40),)
    return "spill", (), Benchmark(False, spill="fused", kernels=kernels)


def _merge(groups, merged_into) -> tuple[Group, ...]:
    """Groups after a round: each fused consumer group joins its producer's group.

    Every group takes part in at most one fusion per round (both sides are consumed),
    so a producer absorbs at most one consumer and groups keep their relative order.
    Groups are consecutive segments of one chain, so the union stays in node order.
    """
    consumer_of = {ga: gb for gb, ga in merged_into.items()}
    out = []
    for g, members in enumerate(groups):
        if g in merged_into:
            continue
        if g in consumer_of:
            members = members + groups[consumer_of[g]]
        out.append(members)
    return tuple(out)


def _kernels(groups, cat, size, rng) -> tuple[Kernel, ...]:
    kernels = []
    for i, members in enumerate(groups):
        cats = {cat[n] for n in members}
        if "extern" in cats:
            kernels.append(
                Kernel(
                    name="extern_kernels.mm",
                    kind="extern",
                    backend="extern",
                    nodes=members,
                    groups=(members,),
                    source=f"extern_kernels.mm(buf_in, primals, out=buf{members[0][2:]})",
                    ms=round(rng.uniform(0.02, 0.4), 5),
                    calls=1,
                )
            )
            continue
        kind = ("per" if rng.random() < 0.5 else "red") if "reduction" in cats else "poi"
        name = f"triton_{kind}_fused_{'_'.join(members[:3])}_{i}"
        kernels.append(
            Kernel(
                name=name,
                kind=kind,
                backend="triton",
                nodes=members,
                groups=(members,),
                source=_source(name, kind, members),
                bytes=sum(size[n] for n in members),
                launch={"num_warps": 4, "num_stages": 1},
                n_regs=rng.randint(16, 64),
                n_spills=0,
                shared=0,
                ms=round(rng.uniform(0.003, 0.08), 5),
                calls=1,
            )
        )
    return tuple(kernels)


def _source(name: str, kind: str, members: Group) -> str:
    body = "\n".join(
        f"    tmp{k} = tl.load(in_ptr{k} + (x0), xmask)  # {m}"
        for k, m in enumerate(members)
    )
    return (
        "@triton.jit\n"
        f"def {name}(in_ptr0, out_ptr0, xnumel, XBLOCK: tl.constexpr):  # {kind}\n"
        "    xoffset = tl.program_id(0) * XBLOCK\n"
        "    x0 = xoffset + tl.arange(0, XBLOCK)[:]\n"
        "    xmask = x0 < xnumel\n"
        f"{body}\n"
        "    tl.store(out_ptr0 + (x0), tmp0, xmask)\n"
    )
