"""Turn Inductor scheduler nodes into trace ``Node``/``Edge`` records (plain data)."""

from __future__ import annotations

import functools
import os
import re

from fusionviz.model.capture.extern_calls import extern_call
from fusionviz.model.trace import Access, Collective, Edge, Group, Node, Origin

_FRAME = re.compile(r'File "(?P<file>[^"]+)", line (?P<line>\d+)[^\n]*\n(?P<code>[^\n]*)')
# Dynamo's source of a module: a local or global root (L['self'], G['model'], a
# closure cell), then attribute, ``_modules['x']`` and index steps.
_ROOT_SOURCE = re.compile(r"^[LG]\['[^']*'\](\.__closure__\[\d+\]\.cell_contents)?")
_MODULES_ITEM = re.compile(r"\._modules\['([^']+)'\]")
_INDEX = re.compile(r"\[['\"]?([^\]'\"]+)['\"]?\]")


def members(snode) -> Group:
    """The pre-fusion node names a (possibly fused) scheduler node stands for; a
    grouped node (``GroupedSchedulerNode``, made by some reordering passes) holds fused
    nodes, whose members are its members."""
    try:
        inner = list(snode.get_nodes())
    except Exception:  # noqa: BLE001 - unknown node kinds: fall back to the name
        return (snode.get_name(),)
    out: list[str] = []
    for n in inner:
        if n is snode:
            out.append(n.get_name())
        else:
            out.extend(members(n))
    return tuple(out)


def category(snode) -> str:
    """pointwise / reduction / template / extern / foreach / nop / other."""
    cls = type(snode).__name__
    checks = (
        ("nop", cls == "NopKernelSchedulerNode"),
        ("collective", cls == "ExternKernelSchedulerNode" and is_collective(snode)),
        ("extern", cls == "ExternKernelSchedulerNode"),
        ("foreach", _call(snode, "is_foreach")),
        ("template", _call(snode, "is_template")),
        ("reduction", _call(snode, "is_reduction")),
        ("pointwise", cls == "SchedulerNode"),
    )
    return next((name for name, hit in checks if hit), "other")


def _call(obj, method: str) -> bool:
    try:
        return bool(getattr(obj, method)())
    except Exception:  # noqa: BLE001
        return False


def _sizes(snode) -> tuple[str, str]:
    group = getattr(snode, "group", None)
    try:
        sizes = group[1]
        return str(sizes[0]), str(sizes[1]) if len(sizes) > 1 else ""
    except Exception:  # noqa: BLE001 - extern/nop nodes have no (numel, rnumel)
        return "", ""


def _accesses(deps, scheduler) -> tuple[Access, ...]:
    out = []
    for dep in sorted(deps, key=lambda d: d.name):
        try:
            size = int(scheduler.dep_size_hint(dep))
        except Exception:  # noqa: BLE001 - symbolic or unknown sizes
            size = 0
        out.append(Access(buffer=dep.name, bytes=size, dep=type(dep).__name__))
    return tuple(out)


def short_op(target: object) -> str:
    """``aten.add.Tensor`` → ``add``; ``<built-in function getitem>`` → ``getitem``."""
    opname = getattr(target, "_opname", None)  # OpOverload(Packet): prims.convert_element_type
    if isinstance(opname, str) and opname:
        return opname
    if isinstance(target, functools.partial):  # a lowering pattern: partial(mm_plus_mm, …)
        return short_op(target.func)
    text = str(target)
    if text.startswith("aten."):
        return text.split(".")[1]
    return getattr(target, "__name__", text).split(".")[-1]


def module_path(source: str) -> str:
    """Dynamo's source of a module as a dotted path: ``L['self'].h[3].attn`` or
    ``L['self']._modules['h']._modules['3'].attn`` → ``h.3.attn``; the root → ``""``."""
    text = _ROOT_SOURCE.sub("", source)
    text = _MODULES_ITEM.sub(r".\1", text)
    text = _INDEX.sub(r".\1", text)
    return text.removeprefix("self.").strip(".")


def _class_name(cls: object) -> str:
    return str(getattr(cls, "__name__", cls)).rsplit(".", 1)[-1].strip("'>")


def module_stack(fx_node) -> list[tuple[str, str]]:
    """(path, class) of the modules an FX node ran in, outermost first: its own
    ``nn_module_stack``, or for a backward node the forward op's (``fwd_nn_module_stack``)."""
    meta = getattr(fx_node, "meta", {}) or {}
    stack = meta.get("nn_module_stack") or meta.get("fwd_nn_module_stack") or {}
    out = []
    for entry in stack.values():
        try:
            path, cls = entry[0], entry[1]
        except (TypeError, IndexError):
            continue
        out.append((module_path(str(path)), _class_name(cls)))
    return out


def _origin(fx_node) -> Origin:
    stack = fx_node.meta.get("stack_trace") or ""
    frames = list(_FRAME.finditer(stack))
    frame = frames[-1] if frames else None  # the innermost frame: the user's own line
    modules = module_stack(fx_node)
    module, module_class = modules[-1] if modules else ("", "")
    if frame is None:
        return Origin(name=fx_node.name, target=str(fx_node.target), module=module,
                      module_class=module_class)
    return Origin(
        name=fx_node.name,
        target=str(fx_node.target),
        file=frame["file"],
        line=int(frame["line"]),
        code=frame["code"].strip(),
        module=module,
        module_class=module_class,
    )


def common_module(origins: tuple[Origin, ...], classes: dict[str, str]) -> tuple[str, str]:
    """The deepest module path every origin with a module ran in, and its class."""
    paths = [o.module.split(".") if o.module else [] for o in origins
             if o.module or o.module_class]
    if not paths:
        return "", ""
    path = ".".join(os.path.commonprefix(paths))  # segment by segment
    return path, classes.get(path, "")


def _fx_origins(snode) -> list:
    ir_node = getattr(snode, "node", None)
    fx_nodes = [
        n for n in getattr(ir_node, "origins", ()) or () if n.op == "call_function"
    ]
    return sorted(fx_nodes, key=lambda n: n.name)


def _extern_name(snode) -> str:
    ir_node = getattr(snode, "node", None)
    for attr in ("python_kernel_name", "op_overload"):
        value = getattr(ir_node, attr, None)
        if value:
            return str(value)
    return ""


_COLLECTIVE_IR = ("_CollectiveKernel", "_WaitKernel")


def is_collective(snode) -> bool:
    """A functional collective or its wait (``_c10d_functional.all_reduce_``, …): Inductor
    lowers them to extern kernels of their own IR classes."""
    ir_node = getattr(snode, "node", None)
    if type(ir_node).__name__ in _COLLECTIVE_IR:
        return True
    return "c10d_functional." in _extern_name(snode)  # _c10d_functional (and the old one)


def collective_record(snode, reads: tuple[Access, ...]) -> Collective:
    """The op, process group, reduction and size of a collective node, read from its
    op's schema and the IR node's constant arguments (what is missing stays empty)."""
    ir_node = getattr(snode, "node", None)
    op = getattr(ir_node, "op_overload", None)
    name = _extern_name(snode)
    kind = (name.split("_c10d_functional.")[-1].split(".")[0] if "functional." in name
            else str(getattr(op, "__name__", name)).split(".")[0]).rstrip("_")
    values: dict = {}
    try:
        params = [a for a in op._schema.arguments if not str(a.type).startswith("Tensor")]
        values = dict(zip((a.name for a in params), getattr(ir_node, "constant_args", ()),
                          strict=False))
        values.update(getattr(ir_node, "kwargs", {}) or {})
    except Exception:  # noqa: BLE001 - another torch's IR: keep what is known
        pass
    size = values.get("group_size", 0)
    group = str(values.get("group_name", "") or "")
    backend, members = _group_facts(group)
    return Collective(
        kind=kind, group=group,
        reduce_op=str(values.get("reduce_op", "") or ""),
        group_size=size if isinstance(size, int) and size else members,
        bytes=sum(a.bytes for a in reads),
        backend=backend,
    )


def _group_facts(group_name: str) -> tuple[str, int]:
    """(backend, ranks) of the process group Inductor names (``""``, 0: unknown)."""
    if not group_name:
        return "", 0
    try:
        import torch.distributed as dist
        from torch.distributed.distributed_c10d import _resolve_process_group

        pg = _resolve_process_group(group_name)
        size = int(dist.get_world_size(pg))
    except Exception:  # noqa: BLE001 - another torch, or no such group here
        return "", 0
    # A DeviceMesh's group says "undefined" to get_backend: its configured backend
    # ("cpu:gloo,cuda:nccl") names what it really uses
    for how in (lambda: dist.get_backend(pg), lambda: dist.get_backend_config(pg)):
        try:
            backend = str(how())
        except Exception:  # noqa: BLE001
            continue
        if backend and backend != "undefined":
            return backend, size
    return "", size


def node_record(snode, scheduler) -> Node:
    """A ``Node`` for one basic (unfused) scheduler node."""
    numel, rnumel = _sizes(snode)
    fx_nodes = _fx_origins(snode)
    origins = tuple(_origin(n) for n in fx_nodes)
    classes = {path: cls for n in fx_nodes for path, cls in module_stack(n)}
    module, module_class = common_module(origins, classes)
    ops = tuple(dict.fromkeys(short_op(o.target) for o in origins))
    rw = snode.read_writes
    try:
        total = int(snode.get_read_write_buffers_sizes())
    except Exception:  # noqa: BLE001
        total = 0
    cat = category(snode)
    reads = _accesses(rw.reads, scheduler)
    return Node(
        name=snode.get_name(),
        type=type(snode).__name__,
        category=cat,
        numel=numel,
        rnumel=rnumel,
        ops=ops,
        reads=reads,
        writes=_accesses(rw.writes, scheduler),
        origins=origins,
        bytes=total,
        extern_kernel=_extern_name(snode) if cat in ("extern", "collective") else "",
        module=module,
        module_class=module_class,
        collective=collective_record(snode, reads) if cat == "collective" else None,
        extern_call=extern_call(snode) if cat == "extern" else None,
    )


def edges(nodes: list[Node]) -> tuple[Edge, ...]:
    """Producer→consumer edges: a read of a buffer links to its latest earlier writer."""
    writer: dict[str, str] = {}
    out: list[Edge] = []
    for node in nodes:
        seen = set()
        for acc in node.reads:
            src = writer.get(acc.buffer)
            if src and src != node.name and (src, acc.buffer) not in seen:
                seen.add((src, acc.buffer))
                out.append(Edge(src=src, dst=node.name, buffer=acc.buffer, bytes=acc.bytes))
        for acc in node.writes:
            writer[acc.buffer] = node.name
    return tuple(out)
