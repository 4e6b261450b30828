"""What-if knobs for a capture: stop fusion after round k, forbid or force pairs,
let benchmark_fusion time spilling kernels. Pure data, shared by the CLI, the
experiments and the capture hooks.

Pair rules name pre-fusion scheduler nodes (``op3``); a rule matches a candidate when
one side contains one of its nodes and the other side the other, so it keeps
applying after either node has been fused with others.
"""

from __future__ import annotations

from dataclasses import dataclass

Pair = tuple[str, str]
# Measurements a capture can add without changing the user's compile: each compiled
# callable also timed compiled again with CUDA graphs (``--what-if reduce-overhead``)
WHAT_IFS = ("reduce-overhead",)
# WhatIf field → its key in a trace's config
_KEYS = {"stop_after_round": "fusionviz.stop_after_round", "forbid": "fusionviz.forbid",
         "force": "fusionviz.force", "keep_spills": "fusionviz.keep_spills",
         "graph": "fusionviz.rules_graph"}


@dataclass(frozen=True)
class WhatIf:
    """The overrides a variant compiles under (all off by default)."""

    stop_after_round: int | None = None
    forbid: tuple[Pair, ...] = ()
    force: tuple[Pair, ...] = ()
    keep_spills: bool = False
    graph: int | None = None  # forbid/force apply only to this graph (compile order)

    def to_config(self) -> dict:
        """How the variant is labelled in a trace's config (read back by ``from_config``)."""
        out: dict = {}
        if self.stop_after_round is not None:
            out[_KEYS["stop_after_round"]] = self.stop_after_round
        if self.forbid:
            out[_KEYS["forbid"]] = " ".join(f"{a},{b}" for a, b in self.forbid)
        if self.force:
            out[_KEYS["force"]] = " ".join(f"{a},{b}" for a, b in self.force)
        if self.keep_spills:
            out[_KEYS["keep_spills"]] = True
        if self.graph is not None:
            out[_KEYS["graph"]] = self.graph
        return out

    @classmethod
    def from_config(cls, config: dict) -> WhatIf:
        """The knobs a trace was captured under, from its config (``to_config``'s keys);
        values that do not read as their kind are left out."""
        def pairs(key: str) -> tuple[Pair, ...]:
            out = []
            for text in str(config.get(_KEYS[key], "")).split():
                try:
                    out.append(parse_pair(text))
                except ValueError:
                    continue
            return tuple(out)

        def integer(key: str) -> int | None:
            value = config.get(_KEYS[key])
            return value if isinstance(value, int) and not isinstance(value, bool) else None

        return cls(stop_after_round=integer("stop_after_round"), forbid=pairs("forbid"),
                   force=pairs("force"), keep_spills=config.get(_KEYS["keep_spills"]) is True,
                   graph=integer("graph"))

    def to_argv(self) -> list[str]:
        """Command-line flags for the capture child."""
        argv: list[str] = []
        if self.stop_after_round is not None:
            argv += ["--stop-after-round", str(self.stop_after_round)]
        for a, b in self.forbid:
            argv += ["--forbid", f"{a},{b}"]
        for a, b in self.force:
            argv += ["--force", f"{a},{b}"]
        if self.keep_spills:
            argv.append("--keep-spills")
        if self.graph is not None:
            argv += ["--rules-graph", str(self.graph)]
        return argv


def parse_pair(text: str) -> Pair:
    """``"op3,op7"`` → ``("op3", "op7")``; raises ValueError with a clear message."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise ValueError(f"a pair is two different node names joined by a comma, got {text!r}")
    return parts[0], parts[1]


def matches(rule: Pair, a: tuple[str, ...] | set[str], b: tuple[str, ...] | set[str]) -> bool:
    """Whether the pair of groups (a, b) joins the rule's two nodes, either way round."""
    x, y = rule
    return (x in a and y in b) or (y in a and x in b)
