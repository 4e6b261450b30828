"""An eager-runnable copy of the graph Inductor lowered, for the eager baseline.

The FX graph Inductor keeps (``GraphLowering.module``) has been through its post-grad
passes. Lowering patterns among them (e.g. ``mm_plus_mm`` under max-autotune: ``a@b +
c@d`` as one kernel) replace matched ops by a call to a lowering function that only
works while lowering: run eagerly, it fails. ``eager_graph`` puts the matched aten
ops back, read from the pattern registered for that function.
"""

from __future__ import annotations

import torch
import torch.fx


class NoEagerForm(Exception):
    """The graph calls an Inductor lowering function whose pattern could not be read."""


def eager_graph(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    """``gm``, or a copy whose lowering-function calls are expanded to their pattern."""
    lowered = [n for n in gm.graph.nodes if _is_lowering_call(n)]
    if not lowered:
        return gm
    patterns = _lowering_patterns()
    graph = torch.fx.Graph()
    codegen = getattr(gm.graph, "_codegen", None)  # e.g. pytree in/out handling
    if codegen is not None and hasattr(graph, "set_codegen"):
        graph.set_codegen(codegen)
    env: dict[torch.fx.Node, torch.fx.Node] = {}
    for node in gm.graph.nodes:
        if not _is_lowering_call(node):
            env[node] = graph.node_copy(node, lambda n: env[n])
            continue
        # Inductor inserts functools.partial(handler, match), wrapped as the handler
        handler = getattr(node.target, "func", node.target)
        pattern = patterns.get(handler)
        name = getattr(node.target, "__name__", str(node.target))
        if pattern is None:
            raise NoEagerForm(f"no pattern found for Inductor's lowering function {name}")
        args = torch.fx.map_arg(node.args, lambda n: env[n])
        kwargs = torch.fx.map_arg(node.kwargs, lambda n: env[n])
        env[node] = _emit(graph, pattern, list(args), kwargs, name)
    return torch.fx.GraphModule(gm, graph)


def _is_lowering_call(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and getattr(node.target, "_inductor_lowering_function",
                                                  False)


def _lowering_patterns() -> dict:
    """Lowering function -> the pattern it replaces, from Inductor's pattern passes."""
    from torch._inductor import pattern_matcher
    from torch._inductor.fx_passes import post_grad

    passes = list(getattr(post_grad, "pass_patterns", ()))
    out = {}
    for p in passes:
        for entries in getattr(p, "patterns", {}).values():
            for entry in entries:
                if isinstance(entry, pattern_matcher.LoweringPatternEntry):
                    out.setdefault(entry.handler, entry.pattern)
    return out


def _emit(graph: torch.fx.Graph, pattern, args: list, kwargs: dict, name: str):
    """Nodes computing ``pattern`` with the matched values (KeywordArg by name, Arg in
    order)."""
    from torch._inductor import pattern_matcher as pm

    positional = iter(args)

    def build(p):
        if isinstance(p, pm.KeywordArg):
            return kwargs[p.name]
        if isinstance(p, pm.Arg):
            return next(positional)
        if isinstance(p, pm.CallFunction):
            fn = p.fns[0]
            return graph.call_function(fn, tuple(build(a) for a in p.args),
                                       {k: build(v) for k, v in p.kwargs.items()})
        if isinstance(p, pm.PatternExpr):
            raise NoEagerForm(f"{name}: cannot rebuild {type(p).__name__} of its pattern")
        if isinstance(p, (list, tuple)):
            return type(p)(build(x) for x in p)
        return p  # a constant of the pattern

    return build(pattern)
