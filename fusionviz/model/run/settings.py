"""Parse ``KEY=VALUE`` Inductor settings given on a command line."""

from __future__ import annotations

import ast


def parse_config(items: list[str]) -> dict:
    """``["max_fusion_size=1", "cpp.simdlen='avx2'"]`` → dict; values are Python
    literals where they parse, else strings."""
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise SystemExit(f"fusionviz: --config needs KEY=VALUE, got {item!r}")
        try:
            out[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            out[key] = value
    return out
