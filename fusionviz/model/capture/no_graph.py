"""Why a script that ran to its end gave Inductor no graph, in Dynamo's words.

Dynamo compiled nothing (the script never calls ``torch.compile``, or every frame it
met broke or was skipped), or it compiled graphs for another backend. The graph
breaks and skipped frames it recorded (``DynamoReasons.events``; without their hooks,
the texts of ``torch._dynamo.utils.counters``) are listed, the same ones counted once,
each with where in the user's code; then what to try, from a table of known reasons.

The first line stands alone (the status bar and a rank's line in the terminal show
only it); the whole stays within ``limit`` characters (the trace's bound).
"""

from __future__ import annotations

import os
import re
from collections import Counter

from fusionviz.model.capture.dynamo_events import (
    FRAME_SKIPPED,
    GRAPH_BREAK,
    NOWHERE,
    DynamoEvent,
    is_library,
)

MAX_LISTED = 5  # distinct reasons listed; the rest are counted
MAX_REASON = 220  # characters of one reason shown
NOTHING = ("the script ran to the end but no graph reached Inductor: does it call "
           "torch.compile and run the compiled function?")
LOGS = "run with TORCH_LOGS=graph_breaks to see each graph break with its whole stack"
# Known reasons → what to try: (pattern in Dynamo's text, advice, only where the
# event is in the user's code). First match first; the generic LOGS advice comes last.
ADVICE: tuple[tuple[re.Pattern, str, bool], ...] = (
    (re.compile(r"_inside_ddp_forward|DistributedDataParallel"),
     "compile the module inside DistributedDataParallel, DDP(torch.compile(model)), "
     "not torch.compile(DDP(model)): Dynamo does not trace DDP's forward on this torch",
     False),
    (re.compile(r"trace generator|generator function", re.I),
     "compile the function that calls the generator (or the model it runs), not the "
     "generator: Dynamo cannot compile a generator", True),
    (re.compile(r"operator `print`|BuiltinVariable\(print\)"),
     "move print() out of the compiled code: Dynamo breaks the graph at each call",
     False),
    (re.compile(r"marked as skipped|skip function|in skipfiles", re.I),
     "compile the model or function that does the tensor work, not code around a "
     "function Dynamo skips (torch's or a library's own)", False),
    (re.compile(r"data[- ]dependent|\.item\(\)|Tensor\.item", re.I),
     "keep .item() and branches on tensor values out of the compiled code, or set "
     "torch._dynamo.config.capture_scalar_outputs = True", False),
)


def no_graph_message(reasons=None, limit: int = 2000) -> str:
    """The script status message when no graph reached Inductor; ``reasons`` is the
    capture's ``DynamoReasons`` (or None)."""
    import torch

    utils = getattr(getattr(torch, "_dynamo", None), "utils", None)
    counters = getattr(utils, "counters", None) or {}
    compiled = int((counters.get("stats") or {}).get("unique_graphs", 0) or 0)
    if compiled:
        return (f"the script ran to the end and Dynamo compiled {compiled} graph"
                f"{'s' if compiled != 1 else ''}, but none reached Inductor: its "
                "torch.compile uses another backend (e.g. backend=\"aot_eager\"). "
                "fusionviz shows Inductor's fusion: use the default backend (\"inductor\")")
    met = dynamo_events(reasons, counters)
    return reasons_message(met, limit) if met else NOTHING


def dynamo_events(reasons, counters) -> list[DynamoEvent]:
    """The events the hooks recorded; the counters' texts for a kind no hook watched."""
    events = list(getattr(reasons, "events", ()) or ())
    watching = getattr(reasons, "watching", set())
    for kind, key in ((GRAPH_BREAK, "graph_break"), (FRAME_SKIPPED, "unimplemented")):
        if kind not in watching:
            for text, n in dict(counters.get(key) or {}).items():
                events += [DynamoEvent(kind, str(text))] * max(int(n or 0), 0)
    return events


def reasons_message(events: list[DynamoEvent], limit: int) -> str:
    """The message for ``events``: a line that stands alone, the reasons, what to try."""
    fits = [_fit(e) for e in events]
    groups: dict[tuple, list[int]] = {}  # the same reason reached from the same place
    for i, e in enumerate(events):
        groups.setdefault((e.kind, headline(e.text), e.caller if e.caller != NOWHERE
                           else e.at), []).append(i)
    # in the order of their advice (none last), graph breaks before skipped frames
    order = sorted(groups.values(), key=lambda g: (
        len(ADVICE) if fits[g[0]] is None else fits[g[0]], events[g[0]].kind != GRAPH_BREAK,
        g[0]))
    advice = [*(ADVICE[i][1] for i in sorted({f for f in fits if f is not None})), LOGS]
    kinds = Counter(e.kind for e in events)
    told = " and ".join(_count(kinds[k], w) for k, w in (
        (GRAPH_BREAK, "graph break"), (FRAME_SKIPPED, "skipped frame")) if kinds[k])
    head = (f"the script ran to the end but no graph reached Inductor: Dynamo recorded "
            f"{told} and compiled no graph. Try: {advice[0]}.")
    tail = [f"Also try: {a}." for a in advice[1:]]
    lines = [_entry([events[i] for i in g]) for g in order]
    shown = min(len(lines), MAX_LISTED)
    while True:
        more = len(lines) - shown
        body = [head, "What Dynamo recorded:", *lines[:shown],
                *([f"… and {more} more"] if more else []), *tail]
        text = "\n".join(body)
        if len(text) <= limit or shown == 0:
            return text[:limit]
        shown -= 1


def _entry(same: list[DynamoEvent]) -> str:
    """One line for events of one reason and place: ``- kind: reason [where] (×n)``."""
    e = same[0]
    where = _where(e.at)
    if e.caller != NOWHERE:  # at is torch's or the standard library's
        others = len({x.at for x in same}) - 1
        where += f" and {_count(others, 'other place')}" if where and others else ""
        where = f"in {where}, from {_where(e.caller)}" if where else f"from {_where(e.caller)}"
    elif where:
        where = f"at {where}"
    return (f"- {e.kind}: {_clip(headline(e.text), MAX_REASON)}"
            + (f" [{where}]" if where else "") + (f" (×{len(same)})" if len(same) > 1 else ""))


def _where(w) -> str:
    file, line, function = w
    if not file:
        return ""
    place = os.path.basename(file) + (f":{line}" if line else "")
    return f"{place} {function}" if function and function != "<module>" else place


def headline(text: str) -> str:
    """Dynamo's reason in one line: its title and its explanation (2.6+ texts carry
    hints, a debug context and a link after them), long paths to site-packages cut."""
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    if not lines:
        return "(no reason given)"
    first = lines[0]
    why = next((line.split(":", 1)[1].strip() for line in lines[1:]
                if line.startswith("Explanation:")), "")
    if why:
        first = f"{first.rstrip(':')}: {why}"
    return re.sub(r"[^\s`'\"]*[/\\](?:site|dist)-packages[/\\]", "", first)


def _fit(e: DynamoEvent) -> int | None:
    """The first row of ADVICE that fits ``e``, or None."""
    return next((i for i, (pattern, _, users_only) in enumerate(ADVICE)
                 if pattern.search(e.text) and not (users_only and is_library(e.at[0]))), None)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[:n - 1].rstrip() + "…"
