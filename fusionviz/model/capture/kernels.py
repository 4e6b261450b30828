"""Kernels of a compiled module: exact source, call order, Triton launch facts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from fusionviz.model.trace import Group, Kernel
from fusionviz.model.tracefile.io import json_value

# `name = async_compile.triton('name', '''<src>''', ...)` / `.cpp_pybinding([...], r'''<src>''')`
_DEF = re.compile(
    r"^(?P<name>\w+) = async_compile\.(?P<how>\w+)\((?P<head>[^\n]*?)r?'''\n(?P<src>.*?)'''",
    re.M | re.S,
)
_CALL_DEF = re.compile(r"^def call\(|^    def call\(|^    def _call\(", re.M)


@dataclass
class KernelRecord:
    """A kernel as codegen defined it; completed from the module after compile."""

    name: str
    backend: str
    nodes: list[str] = field(default_factory=list)
    source: str = ""
    bytes: int | None = None
    extern: str = ""  # python name of an extern call (extern_kernels.mm)
    order: int = 10**9
    calls: int = 0
    launch: dict = field(default_factory=dict)
    n_regs: int | None = None
    n_spills: int | None = None
    shared: int | None = None
    ms: float | None = None
    ms_spread: tuple[float, ...] = ()
    start_ms: float | None = None  # ms from the graph call's start to its first launch
    end_ms: float | None = None  # ... and to its last launch's end (``timing``)
    launches: tuple[tuple[float, float], ...] = ()  # each launch's (start, end)

    def kind(self) -> str:
        if self.extern:
            return "extern"
        if self.backend == "cpp":
            return "cpp"
        prefix = self.name.split("_")
        return prefix[1] if len(prefix) > 2 and prefix[0] == "triton" else self.backend

    def to_kernel(self, final_groups: tuple[Group, ...]) -> Kernel:
        mine = set(self.nodes)
        return Kernel(
            name=self.name,
            kind=self.kind(),
            backend="extern" if self.extern else self.backend,
            nodes=tuple(self.nodes),
            groups=tuple(g for g in final_groups if mine & set(g)),
            source=self.source,
            bytes=self.bytes,
            launch=dict(self.launch),
            n_regs=self.n_regs,
            n_spills=self.n_spills,
            shared=self.shared,
            ms=self.ms,
            calls=self.calls,
            ms_spread=tuple(self.ms_spread),
            start_ms=self.start_ms,
            end_ms=self.end_ms,
            launches=self.launches,
        )


def module_sources(text: str) -> dict[str, str]:
    """Kernel name → exact source as it stands in the generated module."""
    return {m["name"]: m["src"] for m in _DEF.finditer(text)}


def call_body(text: str) -> str:
    """The body of the wrapper's ``call`` function (where kernels are launched)."""
    m = _CALL_DEF.search(text)
    if not m:
        return ""
    rest = text[m.end() :]
    rest = rest[rest.find("\n") + 1 :]  # the body starts on the next line
    end = re.search(r"^\S", rest, re.M)
    return rest[: end.start()] if end else rest


def complete_from_module(records: list[KernelRecord], text: str) -> None:
    """Fill source, call order and launch counts from the module text; drop the
    wrapper-only records (``MultiOutput``: an indexing line, not a launch)."""
    sources = module_sources(text)
    body = call_body(text)
    extern_seen: dict[str, int] = {}
    for rec in records:
        if rec.extern:
            k = extern_seen.get(rec.extern, 0)
            extern_seen[rec.extern] = k + 1
            hits = [m.start() for m in re.finditer(re.escape(rec.extern) + r"\(", body)]
            rec.order = hits[k] if k < len(hits) else 10**9
            rec.calls = 1 if k < len(hits) else 0
            rec.source = _line_at(body, rec.order) if k < len(hits) else rec.extern
            continue
        rec.source = sources.get(rec.name, rec.source)
        hits = [m.start() for m in re.finditer(r"\b" + re.escape(rec.name) + r"(\.run)?\(", body)]
        rec.calls = len(hits)
        rec.order = hits[0] if hits else 10**9
    records[:] = [r for r in records if not wrapper_only(r)]
    records.sort(key=lambda r: r.order)


def wrapper_only(rec: KernelRecord) -> bool:
    """An extern node the wrapper handles in Python without a call: its "kernel name"
    is an IR class name (no dotted callable) and the wrapper never calls it."""
    return bool(rec.extern) and "." not in rec.extern and rec.calls == 0


def _line_at(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return text[start : end if end >= 0 else None].strip()


def triton_launch_facts(rec: KernelRecord, module) -> None:
    """Registers, spills, shared memory and config of a Triton kernel after it ran."""
    obj = getattr(module, rec.name, None)
    launchers = getattr(obj, "launchers", None) or []
    if not launchers:
        return
    launcher = launchers[0]
    rec.n_regs = _int(getattr(launcher, "n_regs", None))
    rec.n_spills = _int(getattr(launcher, "n_spills", None))
    rec.shared = _int(getattr(launcher, "shared", None))
    cfg = getattr(launcher, "config", None)
    if cfg is not None:
        launch = {k: json_value(v) for k, v in dict(getattr(cfg, "kwargs", {})).items()}
        for attr in ("num_warps", "num_stages"):
            if getattr(cfg, attr, None) is not None:
                launch[attr] = _int(getattr(cfg, attr))
        rec.launch = launch


def _int(v) -> int | None:
    try:
        return int(v) if v is not None else None
    except (TypeError, ValueError):
        return None

