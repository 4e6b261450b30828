"""Why a script gave several graphs: Dynamo's graph-break and recompile reasons.

Recorded per Dynamo compile id (``str(CompileId)``, e.g. ``1/0``; every Inductor graph
of that frame compile, forward and backward, gets them), from two Dynamo hooks found
by name (private API: each is feature-detected, a missing one is listed in the
trace's ``capabilities.missing`` and the capture goes on without it):

- ``OutputGraph.compile_subgraph(tx, ..., reason=GraphCompileReason)`` (2.5 … 2.14):
  Dynamo compiles the graph traced so far. ``reason.graph_break`` tells that it ends
  at a graph break (``False`` for the frame's ``return``), ``reason.reason`` why, and
  ``reason.user_stack`` (``traceback.FrameSummary`` list) where in the user's code.
  Inductor compiles that graph inside the call, under the same compile id, so the
  reason belongs to the piece *before* the break.
- ``convert_frame.get_and_maybe_log_recompilation_reasons(cache_entries, frame, ...)``
  (older: ``get_and_maybe_log_recompilation_reason``): when Dynamo compiles a frame
  again, the guard of each earlier compile that failed ("0/0: tensor 'x' size
  mismatch at index 0. expected 8, actual 16"). It runs inside the new compile's
  context (else the reasons wait for the next compile id seen). Without the hook,
  ``torch._dynamo.utils.get_compilation_metrics()``'s ``recompile_reason`` (the first
  reason of each recompile) is read instead.
- The same ``compile_subgraph`` call, for a frame that is not a resume function: the
  code the frame starts at (``frames.frame_start``), why a graph exists when no break
  made it (a module's forward under FSDP2's untraced hooks).
- ``convert_frame.format_error_msg(exc, code, ...)`` (2.5 … 2.14): Dynamo gives up on
  a frame (it runs eagerly) and formats why ("WON'T CONVERT ..."); with the graph
  breaks, these are ``events``, what the no-graph message lists (``no_graph``).

The wrappers call the originals unchanged and only read their arguments and
results: nothing is logged or printed, Dynamo's logging artifacts (``graph_breaks``,
``recompiles``) stay as the user set them.
"""

from __future__ import annotations

import importlib
import inspect
import re

from fusionviz.model.capture.dynamo_events import (
    FRAME_SKIPPED,
    GRAPH_BREAK,
    DynamoEvent,
    event,
)
from fusionviz.model.capture.frames import frame_start
from fusionviz.model.capture.patcher import Patcher
from fusionviz.model.trace import BreakReason, Frame

MAX_TEXT = 4000  # characters kept of one reason (Dynamo's texts carry hints and links)
# Dynamo traces the code after a graph break as a new frame: a function it names
# torch_dynamo_resume_in_<function>_at_<line of the break> (resume_execution.py, 2.1+).
_RESUME = re.compile(r"^torch_dynamo_resume_in_(\w+)_at_(\d+)$")
_RECOMPILE_HOOKS = ("get_and_maybe_log_recompilation_reasons",
                    "get_and_maybe_log_recompilation_reason")


def _module(name: str):
    try:
        return importlib.import_module(name)
    except Exception:  # noqa: BLE001 - a torch without this module
        return None


def compile_id() -> str:
    """Dynamo's compile id of the frame being compiled now ("" outside one)."""
    try:
        from torch._guards import CompileContext

        cid = CompileContext.current_compile_id()
    except Exception:  # noqa: BLE001
        return ""
    return str(cid) if cid is not None else ""


class DynamoReasons:
    """Graph-break and recompile reasons by compile id, filled in by Dynamo hooks."""

    def __init__(self) -> None:
        self.breaks: dict[str, list[BreakReason]] = {}
        self.recompiles: dict[str, list[str]] = {}
        self.resumes: dict[str, tuple[str, int]] = {}  # compile id → (function, line) it resumes at
        self.frames: dict[str, Frame] = {}  # compile id → the code its frame starts at
        self._log: list[BreakReason] = []  # every break, in the order Dynamo met them
        # each break's user stack as (function, line) pairs: a break inside a function
        # the frame called (FSDP2's hook under a module call) resumes at the call's line
        self._sites: list[frozenset] = []
        self._seen: dict[str, int] = {}  # compile id → len(_log) when it was first seen
        self._pending: list[str] = []  # recompile reasons seen outside a compile context
        self._use_metrics = False  # no recompile hook: read Dynamo's compile metrics
        self.events: list[DynamoEvent] = []  # graph breaks and skipped frames, as met
        self.watching: set[str] = set()  # the kinds of event a hook records
        self._p: Patcher | None = None

    # -- installation ---------------------------------------------------------------
    def install(self, p: Patcher) -> None:
        self._p = p
        output_graph = _module("torch._dynamo.output_graph")
        if p.wrap(getattr(output_graph, "OutputGraph", None), "compile_subgraph",
                  self._compile_subgraph, "OutputGraph.compile_subgraph (graph-break reasons)"):
            self.watching.add(GRAPH_BREAK)
        convert_frame = _module("torch._dynamo.convert_frame")
        if p.wrap(convert_frame, "format_error_msg", self._format_error_msg,
                  "convert_frame.format_error_msg (skipped frames)"):
            self.watching.add(FRAME_SKIPPED)
        found = next((n for n in _RECOMPILE_HOOKS if n in getattr(convert_frame, "__dict__", {})),
                     _RECOMPILE_HOOKS[0])
        if not p.wrap(convert_frame, found, self._recompile_reasons,
                      f"convert_frame.{found} (recompile reasons)"):
            utils = _module("torch._dynamo.utils")
            self._use_metrics = callable(getattr(utils, "get_compilation_metrics", None))
            if self._use_metrics:
                p.installed.append("torch._dynamo.utils.get_compilation_metrics "
                                   "(first recompile reason only: fallback)")

    # -- hooks --------------------------------------------------------------------------
    def _compile_subgraph(self, orig):
        try:
            sig = inspect.signature(orig)
        except (TypeError, ValueError):
            sig = None

        def compile_subgraph(output_graph, *args, **kwargs):
            self._p.guard("graph-break reason", self._on_compile_subgraph, sig,
                          (output_graph, *args), kwargs)
            return orig(output_graph, *args, **kwargs)

        return compile_subgraph

    def _on_compile_subgraph(self, sig, args, kwargs) -> None:
        cid = compile_id()
        if not cid:
            return
        if self._pending:
            self._add_recompiles(cid, self._pending)
            self._pending = []
        if cid not in self._seen:
            self._seen[cid] = len(self._log)
            resume = _RESUME.match(_frame_name(args))
            if resume:
                self.resumes[cid] = (resume.group(1), int(resume.group(2)))
            else:
                self._p.guard("frame start", self._on_frame, cid, args)
        reason = kwargs.get("reason")
        if reason is None and sig is not None:
            reason = sig.bind_partial(*args, **kwargs).arguments.get("reason")
        if reason is None or not getattr(reason, "graph_break", True) \
                or getattr(reason, "reason", "") == "return_value":
            return  # the frame's return (or no reason given): not a break
        rec = break_reason(reason)
        found = self.breaks.setdefault(cid, [])
        if rec not in found:  # the same break seen again by a restarted analysis
            found.append(rec)
            self._log.append(rec)
            stack = getattr(reason, "user_stack", None) or ()
            self._sites.append(frozenset(
                (user_function(str(getattr(f, "name", "") or "")),
                 int(getattr(f, "lineno", 0) or 0)) for f in stack))
            self.events.append(event(GRAPH_BREAK, rec.reason, (rec.file, rec.line, rec.function),
                                     stack))

    def _on_frame(self, cid: str, args: tuple) -> None:
        found = frame_start(*(args + (None, None))[:2])
        if found is not None:
            self.frames[cid] = found

    def _format_error_msg(self, orig):
        def format_error_msg(exc, code, *args, **kwargs):
            self._p.guard("skipped frame", self._on_skip, exc, code)
            return orig(exc, code, *args, **kwargs)

        return format_error_msg

    def _on_skip(self, exc, code) -> None:
        text = str(exc)[:MAX_TEXT] or type(exc).__name__
        at = (str(getattr(code, "co_filename", "") or ""),
              int(getattr(code, "co_firstlineno", 0) or 0),
              user_function(str(getattr(code, "co_name", "") or "")))
        self.events.append(event(FRAME_SKIPPED, text, at))

    def _recompile_reasons(self, orig):
        def get_recompilation_reasons(*args, **kwargs):
            reasons = orig(*args, **kwargs)
            self._p.guard("recompile reason", self._on_recompile, reasons)
            return reasons

        return get_recompilation_reasons

    def _on_recompile(self, reasons) -> None:
        texts = [reasons] if isinstance(reasons, str) else list(reasons or ())
        texts = [str(t)[:MAX_TEXT] for t in texts if t]
        cid = compile_id()
        if cid:
            self._add_recompiles(cid, texts)
        else:
            self._pending.extend(texts)

    def _add_recompiles(self, cid: str, texts) -> None:
        found = self.recompiles.setdefault(cid, [])
        found.extend(t for t in texts if t not in found)

    # -- reading ----------------------------------------------------------------------
    def for_graph(self, compile_id: str) -> dict:
        """The reasons of frame compile ``compile_id``, as ``Graph`` fields:
        ``break_reasons``, ``recompile_reasons``, ``resumed_after`` (the break its
        frame resumes after, when it is one of Dynamo's resume functions) and
        ``frame`` (the code its frame starts at, when it is not one: ``frames``)."""
        if self._use_metrics:
            self._p.guard("recompile reasons (compile metrics)", self._read_metrics)
        return {"break_reasons": tuple(self.breaks.get(compile_id, ())),
                "recompile_reasons": tuple(self.recompiles.get(compile_id, ())),
                "resumed_after": self.resumed_after(compile_id),
                "frame": self.frames.get(compile_id)}

    def resumed_after(self, compile_id: str) -> BreakReason | None:
        """The last break met before this compile at the place its resume function
        names (its function and line): the break's innermost frame, else a frame of its
        user stack (the break was inside a call made there); or None."""
        where = self.resumes.get(compile_id)
        if where is None:
            return None
        seen = self._seen.get(compile_id, 0)
        before = list(zip(self._log[:seen], self._sites[:seen], strict=True))
        return next((b for b, _ in reversed(before) if (b.function, b.line) == where),
                    next((b for b, sites in reversed(before) if where in sites), None))

    def _read_metrics(self) -> None:
        from torch._dynamo.utils import get_compilation_metrics

        for m in get_compilation_metrics():
            text = getattr(m, "recompile_reason", None)
            cid = getattr(m, "compile_id", None)
            if text and cid:
                self._add_recompiles(str(cid), [str(text)[:MAX_TEXT]])


def _frame_name(args: tuple) -> str:
    """The name of the code Dynamo is compiling (the root frame's): compile_subgraph's
    ``self`` (an ``OutputGraph``) and ``tx`` (its instruction translator)."""
    output_graph, tx = (args + (None, None))[:2]
    root = getattr(output_graph, "root_tx", None) or tx
    return str(getattr(getattr(root, "f_code", None), "co_name", "") or "")


def user_function(name: str) -> str:
    """The user's function of a name Dynamo gave a resume function (else the name)."""
    resume = _RESUME.match(name)
    return resume.group(1) if resume else name


def break_reason(reason) -> BreakReason:
    """A ``BreakReason`` from Dynamo's ``GraphCompileReason``: its text and the innermost
    frame of its user stack."""
    text = str(getattr(reason, "reason", "") or "")[:MAX_TEXT]
    stack = list(getattr(reason, "user_stack", None) or ())
    if not stack:
        return BreakReason(reason=text)
    frame = stack[-1]
    try:
        code = (frame.line or "").strip()  # read from linecache on first use
    except Exception:  # noqa: BLE001
        code = ""
    return BreakReason(reason=text, file=str(getattr(frame, "filename", "") or ""),
                       line=int(getattr(frame, "lineno", 0) or 0), code=code[:500],
                       function=user_function(str(getattr(frame, "name", "") or "")))
