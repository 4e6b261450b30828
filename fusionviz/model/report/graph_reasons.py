"""Why a graph exists, in words: its Dynamo compile id, graph breaks and recompiles.

Dynamo gives every frame compile an id ``frame/compile`` (``[0/1]``: the first
function it compiled, compiled a second time). A script gets several graphs when
Dynamo breaks a function into pieces (a graph break: the code after it is traced
again as a new frame) or compiles a function again because a guard of its earlier
compiles failed (a recompile). The trace records both (``Graph.break_reasons``,
``recompile_reasons``, ``resumed_after``); this module says them short (the graphs
list, ``summary``) and in full (tooltips).
"""

from __future__ import annotations

import os
import re

from fusionviz.model.report.formatting import byte_size, split_text
from fusionviz.model.trace import BreakReason, Frame, Graph

_ID = re.compile(r"^(\d+)/(\d+)(?:_(\d+))?$")  # frame/compile, _attempt in older logs
_AUTOGRAD_ID = re.compile(r"^!(\d+)(?:/(\d+)/(\d+))?$")  # compiled autograd
_BUILTIN = re.compile(r"builtin (?:operator )?`(\w+)`|BuiltinVariable\((\w+)\)")
_GUARD_PREFIX = re.compile(r"^\s*(?:\[?!?\d+(?:/\d+)*(?:_\d+)?\]?):\s*")
_MISMATCH = re.compile(r"tensor '(?P<name>.+?)' (?P<what>[\w ]+?) mismatch"
                       r"(?: at index (?P<index>\d+))?\. expected (?P<exp>.+?), actual (?P<act>.+)$")


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def compile_id_text(compile_id: str) -> str:
    """What Dynamo's compile id means, e.g. for ``0/1``: frame 0 (the 1st function
    Dynamo compiled), compile 1 (its 2nd compilation: a recompile)."""
    m = _ID.match(compile_id or "")
    if m:
        frame, compile_, attempt = int(m[1]), int(m[2]), m[3]
        text = (f"frame {frame} (the {ordinal(frame + 1)} function Dynamo compiled), "
                f"compile {compile_} ")
        text += ("(its first compilation)" if compile_ == 0 else
                 f"(its {ordinal(compile_ + 1)} compilation: a recompile)")
        if attempt and int(attempt):
            text += f", attempt {attempt} (Dynamo restarted its analysis {attempt} time(s))"
        return text
    m = _AUTOGRAD_ID.match(compile_id or "")
    if m:
        text = f"compiled autograd graph {m[1]} (the backward traced by compiled autograd)"
        if m[2] is not None:
            text += f", frame {m[2]} compile {m[3]} inside it"
        return text
    if not compile_id:
        return "no Dynamo compile id was recorded"
    return f"Dynamo's compile id {compile_id}"


def compile_id_tip(compile_id: str) -> str:
    """The compile id and its explanation, for a tooltip."""
    if not compile_id:
        return "No Dynamo compile id was recorded for this graph."
    return (f"Compile id [{compile_id}]: {compile_id_text(compile_id)}.\n"
            "Dynamo's id is [frame/compile]: each function (frame) it compiles gets the next "
            "frame number (the code after a graph break is a new frame), and each time a "
            "frame is compiled again (a recompile, when a guard such as an input's shape "
            "fails) its compile number goes up. The forward and backward graphs of one "
            "compile share its id.")


def first_line(text: str) -> str:
    """The first non-empty line of a reason, stripped."""
    return next((ln.strip() for ln in (text or "").splitlines() if ln.strip()), "")


def short_break(text: str) -> str:
    """Dynamo's graph-break reason in a few words: ``print()``, the first line of its
    message, or what a ``generic_jump`` is."""
    m = _BUILTIN.search(text or "")
    if m:
        return f"{m[1] or m[2]}()"
    first = first_line(text)
    if first.startswith("generic_jump"):
        return "data-dependent branch (if on a tensor value)"
    if "Tensor.item()" in first:
        return "Tensor.item()"
    first = first.removeprefix("Unsupported: ").removeprefix("Graph break: ")
    return first if len(first) <= 80 else first[:79] + "…"


def where(b: BreakReason) -> str:
    """``file.py:42`` (the file's base name), or "" when the break has no place."""
    if not b.file:
        return ""
    return f"{os.path.basename(b.file)}:{b.line}" if b.line else os.path.basename(b.file)


def break_label(b: BreakReason) -> str:
    """``print() at train.py:42``."""
    at = where(b)
    return f"{short_break(b.reason)} at {at}" if at else short_break(b.reason)


def break_text(b: BreakReason) -> str:
    """The whole break: where (file, line, function, source line) and Dynamo's reason."""
    head = f"{b.file}:{b.line}" if b.file else "(no user frame recorded)"
    if b.function:
        head += f" in {b.function}"
    lines = [head]
    if b.code:
        lines.append(f"    {b.code}")
    lines.append(b.reason.strip())
    return "\n".join(lines)


def short_guard(text: str) -> str:
    """A failed guard in a few words: ``x.size(0) changed 8 → 16``, ``x dtype changed
    Float → Double``, else its first line (without the compile id it came from)."""
    first = _GUARD_PREFIX.sub("", first_line(text), count=1).strip()
    m = _MISMATCH.search(first)
    if m:
        name, what = m["name"], m["what"]
        if what in ("size", "stride") and m["index"] is not None:
            return f"{name}.{what}({m['index']}) changed {m['exp']} → {m['act']}"
        return f"{name} {what} changed {m['exp']} → {m['act']}"
    first = re.sub(r"\s{2,}#.*$", "", first)  # Dynamo's "# source line  # file:line" comment
    return first if len(first) <= 80 else first[:79] + "…"


def module_pattern(paths) -> str:
    """Module paths said short: ``model.layers.*`` for ``model.layers.0`` … ``.3`` (the
    paths differing in one numbered part), else the paths, comma-separated."""
    paths = list(paths)
    if len(paths) > 1:
        split = [p.split(".") for p in paths]
        if len({len(s) for s in split}) == 1:
            differ = [i for i in range(len(split[0])) if len({s[i] for s in split}) > 1]
            if len(differ) == 1 and all(s[differ[0]].isdigit() for s in split):
                first = split[0]
                return ".".join("*" if i == differ[0] else p for i, p in enumerate(first))
    return ", ".join(p or "the model" for p in paths)


def frame_shown(f: Frame | None) -> bool:
    """Whether a frame's start says why the graph exists (the graphs list's column): a
    frame of its own inside what the user compiled; the function or model the user
    handed to torch.compile is said only in full (``frame_text``, the summary)."""
    return f is not None and not f.entry


def frame_label(f: Frame, calls: int | None = None) -> str:
    """``a frame of its own: LlamaDecoderLayer.forward (model.layers.*), wrapped by
    fully_shard; its 4 calls reuse this graph``; ``calls``: how many times the
    profiled step called the graph, when known."""
    pattern = module_pattern(f.modules) if len(f.modules) > 1 else ""
    pattern = "" if ", " in pattern else pattern  # one pattern, or the module alone
    reused = bool(calls and calls > 1)
    where = pattern if reused and pattern else f.module
    if pattern and not reused:
        where = f"{where or 'the model'} of {pattern}"
    if f.module_class and not f.function.startswith(f"{f.module_class}."):
        where = ", ".join(filter(None, (where, f.module_class)))  # a decorator's wrapper
    text = ("a frame of its own: " if not f.entry else "compiled: ") + f.function
    text += f" ({where})" if where else ""
    if f.wrapped_by:
        text += f", wrapped by {f.wrapped_by}"
    if reused:
        text += f"; its {calls} calls reuse this graph"
    return text


def frame_text(f: Frame, calls: int | None = None) -> str:
    """The frame's start, in full, for a tooltip."""
    at = f"{f.file}:{f.line}" if f.file else "(no file recorded)"
    if f.entry:
        lines = [f"This graph's frame starts at {f.function} ({at}), what torch.compile "
                 "was handed."]
    else:
        lines = [f"This graph's frame starts at {f.function} ({at}), with no graph break "
                 "before it: Dynamo began a frame of its own there because the code calling "
                 "it was not traced (it ran eagerly)."]
    if f.module_class:
        lines.append(f"It is the forward of module {f.module or '(the model itself)'} "
                     f"({f.module_class}).")
    if f.wrapped_by == "fully_shard":
        lines.append("FSDP2's fully_shard wraps that module: its hooks (gathering the "
                     "parameters before the forward, freeing them after) are not traced by "
                     "Dynamo, so the call stops the caller's graph and the module's forward "
                     "is compiled as a frame of its own.")
    if len(f.modules) > 1:
        lines.append(f"The model holds {len(f.modules)} modules of this class "
                     f"({module_pattern(f.modules[:MAX_PARAMS])}"
                     f"{', …' if len(f.modules) > MAX_PARAMS else ''}): Dynamo compiles "
                     "the frame once and reuses this graph for each call from untraced code "
                     "that its guards accept (a call they reject compiles it again: a "
                     "recompile, [frame/1]); a call from traced code is inlined there.")
    if calls:
        lines.append(f"The profiled train step called this graph {calls} time(s).")
    if f.caller:
        lines.append(f"Called from {f.caller}.")
    return "\n".join(lines)


def step_calls(trace) -> dict[int, int]:
    """Graph index -> how many times the rank's profiled train step called it
    (``Trace.step``'s compute lane as the CPU saw it); {} when no step was recorded."""
    out: dict[int, int] = {}
    for s in (trace.step.spans if trace is not None and trace.step is not None else ()):
        if s.lane == "compute" and isinstance(s.graph, int):
            out[s.graph] = out.get(s.graph, 0) + 1
    return out


def why_parts(g: Graph, calls: int | None = None) -> list[str]:
    """Why the graph exists, short: one phrase per recorded reason (empty when none)."""
    parts = [split_text(g.split)] if g.split is not None else []
    if frame_shown(g.frame) and g.split is None:
        parts.append(frame_label(g.frame, calls))
    if g.resumed_after is not None:
        parts.append(f"after graph break: {break_label(g.resumed_after)}")
    if g.recompile_reasons:
        more = len(g.recompile_reasons) - 1
        parts.append(f"recompiled: {short_guard(g.recompile_reasons[0])}"
                     + (f" (+{more} more)" if more else ""))
    if g.break_reasons:
        parts.append("ends at graph break: " + ", ".join(map(break_label, g.break_reasons)))
    return parts


def piece_text(g: Graph) -> str:
    """A piece of a split Dynamo graph, in full."""
    s = g.split
    params = "\n".join(f"- {p}" for p in s.params[:MAX_PARAMS])
    more = len(s.params) - MAX_PARAMS
    params += f"\n- … and {more} more" if more > 0 else ""
    return (f"Dynamo's {s.by} split this frame ({g.compile_id}) at "
            f"DistributedDataParallel's bucket boundaries into {s.pieces} pieces, each "
            f"compiled by Inductor on its own, forward and backward: this graph is piece "
            f"{s.piece + 1} of {s.pieces}. Its bucket holds {len(s.params)} parameters "
            f"({byte_size(s.bytes)}), whose gradients DDP all-reduces once this piece's "
            f"backward has run, overlapping the pieces before it:\n{params}")


MAX_PARAMS = 12  # parameters of a bucket named in a tooltip


def split_groups(graphs) -> list[tuple[str, list[int]]]:
    """The graphs in order, the pieces of each split frame and side together: a list of
    (label, graph indices), the label "" for a graph of its own, e.g.
    ``[4/0] forward: 8 pieces (DDP optimizer)`` for a split one."""
    rows: list[tuple[str, list[int]]] = []
    groups: dict[tuple[str, str], list[int]] = {}
    for i, g in enumerate(graphs):
        if g.split is None:
            rows.append(("", [i]))
            continue
        key = (g.compile_id, g.kind)
        if key not in groups:
            groups[key] = []
            label = f"[{g.compile_id}] {g.kind}: {g.split.pieces} pieces ({g.split.by})"
            rows.append((label, groups[key]))
        groups[key].append(i)
    return rows


def why_short(g: Graph, calls: int | None = None) -> str:
    return "; ".join(why_parts(g, calls))


def why_text(g: Graph, calls: int | None = None) -> str:
    """Everything recorded about why the graph exists, in full, for a tooltip."""
    blocks = [piece_text(g)] if g.split is not None else []
    if g.frame is not None and g.split is None:
        blocks.append(frame_text(g.frame, calls))
    if g.resumed_after is not None:
        blocks.append("This graph is the code after a graph break (Dynamo traced it as a "
                      "new frame):\n" + break_text(g.resumed_after))
    if g.recompile_reasons:
        blocks.append("Recompiled: Dynamo compiled this frame again because a guard of "
                      "its earlier compile(s) failed:\n"
                      + "\n".join(f"- {r.strip()}" for r in g.recompile_reasons))
    for b in g.break_reasons:
        blocks.append("This graph ends at a graph break (what Dynamo could not trace runs "
                      "eagerly; the code after it is traced as a new frame):\n" + break_text(b))
    return "\n\n".join(blocks)
