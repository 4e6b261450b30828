"""Does the record hold each of Inductor's 'cannot fuse A with B' lines on (A, B)?

    python benchmarks/verdict_order.py [--device cpu|cuda] [--size tiny|full] [--model M]

Compiles a workload of ``benchmarks/eager_models`` (default: the mixture-of-experts
train step, ``moe_train``; a train step's backward too) in this process under fusionviz's capture, with every
``WhyNoFuse`` call of Inductor's scheduler noted as it happens (its two node names, its
reason, the capture's can_fuse nesting depth and the calling frames). Then each noted
line is looked up in the record: a verdict or ledger candidate on the same two nodes in
the same order with that reason. Prints how many were found on their own pair, and
each kind of line that was not (and whether the reversed pair holds it). Issue #19 saw
36 lines of a MoE backward recorded on the reversed pair (an H100, torch 2.11): Triton's
backend checks a (reduction, pointwise) pair as (pointwise, reduction)
(``SIMDScheduling.can_fuse``: "swap args to hit the case above"), so its log line names
the pair the other way round from the scheduler's question. The record keeps the
scheduler's order and marks such a reason ``swapped``; those lines are counted apart.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "eager_models"))


def noted_lines(hooks_box: dict) -> list[tuple]:
    """Wrap WhyNoFuse.__call__: each call appends (name1, name2, reason, depth, frames)."""
    from torch._inductor import scheduler

    noted: list[tuple] = []
    orig = scheduler.WhyNoFuse.__call__

    def call(self, reason, *args):
        hooks = hooks_box.get("hooks")
        frames = [f.name for f in traceback.extract_stack(limit=9)][:-1]
        noted.append((self.name1, self.name2, reason % args if args else reason,
                      hooks.can_fuse_depth if hooks else -1, " < ".join(reversed(frames))))
        return orig(self, reason, *args)

    scheduler.WhyNoFuse.__call__ = call
    return noted


def recorded_reasons(trace) -> dict[tuple, list[tuple[str, bool]]]:
    """(group a, group b) -> (reason text, said swapped), over every round's verdicts
    and candidates."""
    out: dict[tuple, list[tuple[str, bool]]] = {}
    for g in trace.graphs:
        for r in g.rounds:
            for v in (*r.verdicts, *r.candidates):
                out.setdefault((v.a, v.b), []).extend((x.text, x.swapped) for x in v.reasons)
    return out


def held(pairs: dict, n1: str, n2: str, text: str, swapped: bool = False) -> bool:
    """A recorded pair whose first group holds one of n1's nodes and second one of n2's
    (a fused node's name joins its nodes' with '_') with this reason (marked swapped:
    the log names the pair the other way round)."""
    firsts, seconds = n1.split("_"), n2.split("_")
    return any((text, swapped) in reasons and set(firsts) & set(a) and set(seconds) & set(b)
               for (a, b), reasons in pairs.items())


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--size", default="tiny", choices=("tiny", "full"))
    ap.add_argument("--model", default="moe_train", help="a module of benchmarks/eager_models")
    opts = ap.parse_args()
    import importlib

    import torch
    from torch._inductor.utils import fresh_inductor_cache

    from fusionviz.model.capture import hooks as capture_hooks
    from fusionviz.model.capture.inprocess import capturing

    box: dict = {}
    init = capture_hooks.Hooks.__init__

    def remember(self, *a, **k):
        init(self, *a, **k)
        box["hooks"] = self

    capture_hooks.Hooks.__init__ = remember
    noted = noted_lines(box)
    torch.manual_seed(0)
    w = importlib.import_module(opts.model).build(opts.device, opts.size)
    torch._dynamo.reset()
    # the model's own autocast; the MoE step (no amp of its own) in bf16 on the GPU
    amp = torch.autocast(device_type=opts.device, dtype=w.amp or torch.bfloat16,
                         enabled=w.amp is not None or (opts.device == "cuda"
                                                       and opts.model == "moe_train"))
    with fresh_inductor_cache(), torch._inductor.config.patch(force_disable_caches=True), \
            capturing(str(Path(tempfile.mkdtemp()) / "verdict_order.json")) as rec:
        with amp:
            out = torch.compile(w.module)(*w.args, **w.kwargs)
        if w.train:
            out.backward()
    pairs = recorded_reasons(rec.trace())
    swapped = [x for x in noted if not held(pairs, *x[:3]) and held(pairs, x[1], x[0], x[2], True)]
    missed = [(n1, n2, text, depth, frames, held(pairs, n2, n1, text))
              for n1, n2, text, depth, frames in noted
              if not held(pairs, n1, n2, text) and not held(pairs, n2, n1, text, True)]
    print(f"{opts.model} ({opts.size}, {opts.device}, torch {torch.__version__}): "
          f"{len(noted)} WhyNoFuse lines; "
          f"{len(noted) - len(missed) - len(swapped)} recorded on their own pair in "
          f"Inductor's order; {len(swapped)} on the pair the scheduler asked, marked as "
          f"logged the other way round (its backend checked it swapped); {len(missed)} "
          f"neither, of them {sum(m[5] for m in missed)} on the reversed pair unmarked")
    for n1, n2, text, _depth, frames in swapped[:3]:
        print(f"  swapped, e.g. log 'cannot fuse {n1} with {n2}: {text}' | {frames}")
    kinds = {}
    for n1, n2, text, depth, frames, reverse in missed:
        kinds.setdefault((text[:60], depth, reverse, frames), (n1, n2))
    for (text, depth, reverse, frames), (n1, n2) in kinds.items():
        print(f"  e.g. {n1} with {n2}: {text} | depth {depth} | reversed held: {reverse} | "
              f"{frames}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
