"""A graph's code from a trace is checked before it is run: a trace is a file from
anyone (#19), and replaying it executes its graph's code.

What Inductor receives after AOT is a flat ``forward`` of aten and prims calls; only
that is admitted: one ``def forward(self, ...)`` whose statements assign names or
return, whose calls are ``torch.ops.aten.*`` / ``torch.ops.prims.*`` overloads (or
``device(...)``), whose other values are constants, names it defined, ``torch.<dtype or
layout>`` and subscripts of names. Anything else (an import, an attribute of ``self``,
any other call) is refused, naming its line.
"""

from __future__ import annotations

import ast

NAMESPACES = ("aten", "prims")  # torch.ops namespaces a replay calls
GLOBALS = frozenset(("torch", "device", "inf", "nan", "None", "True", "False"))
_VALUE_NODES = (ast.Constant, ast.Tuple, ast.List, ast.Name, ast.Subscript, ast.UnaryOp,
                ast.Attribute, ast.Call, ast.Slice, ast.Dict)


def code_problems(code: str) -> list[str]:
    """Why ``code`` is not a graph fusionviz replays ([] when it is)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return [f"the code does not parse: {type(e).__name__}: {e}"[:300]]
    body = tree.body
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef) or body[0].name != "forward":
        return ["the code is not a single def forward(...)"]
    fn = body[0]
    if fn.decorator_list or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs \
            or fn.args.defaults or not fn.args.args or fn.args.args[0].arg != "self":
        return ["forward's signature is not (self, inputs...)"]
    known = {a.arg for a in fn.args.args[1:]}
    problems: list[str] = []
    for stmt in fn.body:
        if isinstance(stmt, ast.Assign):
            problems += _value(stmt.value, known)
            for target in stmt.targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                if not all(isinstance(n, ast.Name) for n in names):
                    problems.append(f"line {stmt.lineno}: assigns to something not a name")
                known |= {n.id for n in names if isinstance(n, ast.Name)}
        elif isinstance(stmt, ast.Return):
            problems += _value(stmt.value, known) if stmt.value is not None else []
        else:
            problems.append(f"line {stmt.lineno}: a {type(stmt).__name__} statement")
        if len(problems) >= 3:
            break
    return problems[:3]


def _value(node: ast.AST, known: set[str]) -> list[str]:
    out: list[str] = []
    for sub in ast.walk(node):
        line = getattr(sub, "lineno", "?")
        if isinstance(sub, ast.Call):
            if not (_op_call(sub.func) or (isinstance(sub.func, ast.Name)
                                           and sub.func.id == "device")):
                out.append(f"line {line}: a call to {_dotted(sub.func) or 'an expression'}")
        elif isinstance(sub, ast.Attribute):
            dotted = _dotted(sub)
            if not dotted or not dotted.startswith("torch.") or "__" in dotted:
                out.append(f"line {line}: the attribute {dotted or sub.attr}")
        elif isinstance(sub, ast.Name):
            if sub.id not in known and sub.id not in GLOBALS:
                out.append(f"line {line}: the name {sub.id}, defined nowhere in the graph")
        elif isinstance(sub, ast.expr) and not isinstance(sub, _VALUE_NODES):
            out.append(f"line {line}: a {type(sub).__name__} expression")
    return out


def _op_call(func: ast.AST) -> bool:
    """``torch.ops.<aten|prims>.<op>[.<overload>]``."""
    parts = (_dotted(func) or "").split(".")
    return (len(parts) in (4, 5) and parts[:2] == ["torch", "ops"] and parts[2] in NAMESPACES
            and not any(p.startswith("__") for p in parts))


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return ""
    return ".".join([node.id, *reversed(parts)])
