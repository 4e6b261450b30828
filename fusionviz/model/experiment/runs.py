"""What-if experiments: capture a script as a baseline and as variants, then compare.

Every variant is its own capture child (fresh process, caches off), so no variant is
ever served a cached baseline and their compile times compare. Only where the user keeps
compiled kernels (``FUSIONVIZ_KERNEL_CACHE``, as the test suite does) do the variants
reuse each other's kernels; the report then says their compile times are shorter.
Results go to a folder: one trace per variant, ``experiment.json`` (what was run) and
``report.md`` / ``report.csv``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from fusionviz.model.errors import TraceError
from fusionviz.model.experiment import compare as cmp
from fusionviz.model.report.formatting import number
from fusionviz.model.report.tables import csv_text, markdown_text
from fusionviz.model.run.kernel_cache import KEPT
from fusionviz.model.run.runner import run_capture
from fusionviz.model.trace import Candidate, Trace
from fusionviz.model.tracefile import bounded
from fusionviz.model.tracefile.io import load_trace
from fusionviz.model.whatif import Pair, WhatIf, matches

Progress = Callable[[dict], None]


@dataclass(frozen=True)
class Variant:
    """One capture of an experiment."""

    label: str
    file: str
    trace: Trace


@dataclass(frozen=True)
class Experiment:
    """A finished experiment: its captures and its Markdown report."""

    kind: str
    script: str
    variants: tuple[Variant, ...]  # the baseline first
    report: str


def _capture(script, out_dir: Path, label, file, progress, i, n, **options) -> Variant:
    if progress:
        progress({"event": "variant", "index": i, "of": n, "label": label})

    def forward(msg):
        if progress:
            progress({**msg, "variant": i})

    trace = run_capture(script, str(out_dir / file), on_progress=forward, **options)
    return Variant(label, file, trace)


def _finish(kind: str, script: str, out_dir: Path, variants, report: str, csv: str) -> Experiment:
    if any(v.trace.config.get(KEPT) for v in variants):
        report += KEPT_NOTE
    (out_dir / "report.md").write_text(report)
    (out_dir / "report.csv").write_text(csv)
    meta = {
        "kind": kind, "script": script,
        "variants": [{"label": v.label, "trace": v.file, "status": v.trace.script.status}
                     for v in variants],
        "report": "report.md",
    }
    (out_dir / "experiment.json").write_text(json.dumps(meta, indent=1))
    return Experiment(kind, script, tuple(variants), report)


KEPT_NOTE = ("\nCompile times: these captures reused compiled kernels (FUSIONVIZ_KERNEL_CACHE"
             "), so they are shorter than a fresh process's and do not compare; the "
             "scheduler ran in every capture.\n")


def estimated_bytes(trace: Trace) -> int:
    """Inductor's traffic estimate after the recorded fusions (all graphs)."""
    total = 0
    for g in trace.graphs:
        total += sum(n.bytes for n in g.nodes)
        total -= sum(f.bytes_saved for r in g.rounds for f in r.fusions)
    return total


def sweep_rows(variants) -> list[dict]:
    """One row per 'fusion stopped after round k' variant, for the chart and table."""
    rows = []
    for v in variants:
        m = cmp.metrics(v.trace)
        low, high = cmp.spreads(v.trace).get("Compiled runtime (ms)", (None, None))
        rows.append({
            "variant": v.label,
            "kernels": m["Kernels"],
            "nodes": sum(len(g.final_groups) for g in v.trace.graphs),
            "est_bytes": estimated_bytes(v.trace),
            "compiled_ms": m["Compiled runtime (ms)"],
            "compiled_min_ms": low,  # the spread of the samples, summed over graphs
            "compiled_max_ms": high,
            "compile_s": m["FX compile time (s)"],
        })
    return rows


def _rows_markdown(rows: list[dict]) -> str:
    return markdown_text(list(rows[0]), ([number(v) for v in r.values()] for r in rows))


def _rows_csv(rows: list[dict]) -> str:
    return csv_text(list(rows[0]), (list(r.values()) for r in rows))


def last_fusing_round(trace: Trace) -> int:
    """The last round (counted from 1) that fused anything, in any graph; 0 if none did."""
    return max((r.index for g in trace.graphs for r in g.rounds if r.fusions), default=0)


def sweep_rounds(script: str, out_dir: str, *, progress: Progress | None = None,
                 **options) -> Experiment:
    """Recompile with fusion stopped after round k, for k = 0 … L (L: the last round of
    the baseline that fused anything; stopped after a later round, fusion ends as after
    round L, so those variants are not captured again)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base = _capture(script, out, "baseline", "baseline.json.gz", progress, 0, None, **options)
    last = last_fusing_round(base.trace)
    n = last + 2
    variants = [base]
    for k in range(last + 1):
        variants.append(_capture(script, out, f"after round {k}", f"round_{k}.json.gz",
                                 progress, k + 1, n, whatif=WhatIf(stop_after_round=k), **options))
    return finish_sweep(script, out, variants)


def _rounds_left_out(variants: list[Variant]) -> str:
    """Says which of the baseline's rounds fused nothing and were not swept."""
    rounds = max((len(g.rounds) for g in variants[0].trace.graphs), default=0)
    last = len(variants) - 2  # the variants after the baseline are rounds 0 … last
    if rounds <= last:
        return ""
    left = f"round {rounds}" if rounds == last + 1 else f"rounds {last + 1}–{rounds}"
    return (f"\nThe baseline's {left} fused nothing: a capture stopped later would fuse "
            f"as one stopped after round {last}, so the sweep ends there.\n\n")


def finish_sweep(script: str, out: Path, variants: list[Variant]) -> Experiment:
    """The report and experiment.json of a sweep's captures (the baseline first)."""
    rows = sweep_rows(variants[1:])
    report = (f"## Runtime after fusion round k: {Path(script).name}\n\n{_rows_markdown(rows)}\n"
              + _rounds_left_out(variants)
              + cmp.report_markdown(cmp.compare(variants[0].trace, variants[1].trace,
                                                "all rounds", "no fusion"),
                                    "All rounds vs no fusion"))
    return _finish("sweep", script, out, variants, report, _rows_csv(rows))


def ab(script: str, out_dir: str, config_b: dict, *, config_a: dict | None = None,
       label_a: str = "", label_b: str = "", progress: Progress | None = None,
       whatif_b: WhatIf | None = None, **options) -> Experiment:
    """Capture under two settings (A: ``config_a``, B: ``config_b``) and compare them."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    base_cfg = options.pop("config", None) or {}
    label_a = label_a or _label(config_a) or "default"
    label_b = label_b or _label(config_b) or (whatif_b and _label(whatif_b.to_config())) or "variant"
    a = _capture(script, out, label_a, "a.json.gz", progress, 0, 2,
                 config={**base_cfg, **(config_a or {})}, **options)
    b = _capture(script, out, label_b, "b.json.gz", progress, 1, 2,
                 config={**base_cfg, **config_b}, whatif=whatif_b, **options)
    c = cmp.compare(a.trace, b.trace, label_a, label_b)
    report = cmp.report_markdown(c, f"{label_a} vs {label_b}: {Path(script).name}")
    if whatif_b is not None:
        report += "\n" + rule_notes(b.trace, whatif_b)
    return _finish("ab", script, out, [a, b], report, cmp.table_csv(c))


def _label(config: dict | None) -> str:
    return ", ".join(f"{k}={v}" for k, v in (config or {}).items())


def rules(script: str, out_dir: str, whatif: WhatIf, **kwargs) -> Experiment:
    """Baseline vs the same script under forbid/force/keep-spills rules."""
    return ab(script, out_dir, {}, label_a="baseline", whatif_b=whatif, **kwargs)


def pair_outcome(trace: Trace, rule: Pair) -> str:
    """What happened to a forced or forbidden pair, in one sentence."""
    for g in trace.graphs:
        for group in g.final_groups:
            if rule[0] in group and rule[1] in group:
                return f"fused (graph {g.index})"
    tries: list[tuple[int, int, Candidate]] = [
        (g.index, r.index, c) for g in trace.graphs for r in g.rounds for c in r.candidates
        if matches(rule, set(c.a), set(c.b))
    ]
    if not tries:
        names = {n.name for g in trace.graphs for n in g.nodes}
        missing = [x for x in rule if x not in names]
        if missing:
            return f"no such node: {', '.join(missing)}"
        return _scan_outcome(trace, rule) or "never a candidate"
    gi, ri, c = tries[-1]
    why = "; ".join(x.text for x in c.reasons) or c.outcome
    prefix = "illegal" if c.forced and c.outcome == "rejected" else c.outcome
    return f"{prefix} in graph {gi} round {ri}: {why}"


def _scan_outcome(trace: Trace, rule: Pair) -> str:
    """Rejections of the pair while candidates were collected (a forbid rule refuses
    the pair there, so it never becomes a candidate): how often, where, and why."""
    hits = [(g.index, r.index, v) for g in trace.graphs for r in g.rounds for v in r.verdicts
            if not v.ok and matches(rule, set(v.a), set(v.b))]
    if not hits:
        return ""
    gi, ri, v = hits[-1]
    why = "; ".join(x.text for x in v.reasons) or "rejected"
    times = f"{len(hits)} time{'s' if len(hits) != 1 else ''}"
    return (f"rejected while collecting candidates ({times}; last in graph {gi} round "
            f"{ri}): {why}; never fused")


def rule_notes(trace: Trace, whatif: WhatIf) -> str:
    """Markdown lines saying what each rule did, and the spills that were timed."""
    lines = ["### Rules", ""]
    lines += [f"- force {a},{b}: {pair_outcome(trace, (a, b))}" for a, b in whatif.force]
    lines += [f"- forbid {a},{b}: {pair_outcome(trace, (a, b))}" for a, b in whatif.forbid]
    if whatif.keep_spills:
        lines += ["- keep spills: spilling kernels were timed instead of vetoed", ""]
        lines += spill_lines(trace)
    return "\n".join(lines) + "\n"


def spill_lines(trace: Trace) -> list[str]:
    """Benchmarked pairs where some kernel spilled registers, with their times."""
    rows = []
    for g in trace.graphs:
        for r in g.rounds:
            for c in r.candidates:
                b = c.benchmark
                if not b or not any(k.n_spills for k in b.kernels):
                    continue
                spills = "/".join(str(k.n_spills) for k in b.kernels)
                rows.append([g.index, r.index, f"{'_'.join(c.a)} + {'_'.join(c.b)}", c.outcome,
                             spills, b.ms_a, b.ms_b, b.ms_fused, number(b.speedup)])
    if not rows:
        return ["(no benchmarked pair spilled)"]
    return markdown_text(["graph", "round", "pair", "outcome", "spills (a/b/fused)", "ms a",
                          "ms b", "ms fused", "speedup"], rows).splitlines()


def keep_spills(script: str, out_dir: str, **kwargs) -> Experiment:
    """benchmark_fusion with the spill veto (A) vs with spilling kernels timed (B)."""
    return ab(script, out_dir, {"benchmark_fusion": True}, config_a={"benchmark_fusion": True},
              label_a="spill veto", label_b="keep spills", whatif_b=WhatIf(keep_spills=True),
              **kwargs)


KINDS = ("sweep", "ab", "forbid", "force", "keep_spills")


def _setting(key: str, value) -> str:
    # Strings are quoted so the child's literal_eval reads them back as strings.
    return f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}"


def experiment_argv(script: str, out_dir: str, kind: str, *, pairs=(), config: dict | None = None,
                    config_a: dict | None = None, mode: str | None = None,
                    benchmark_fusion: bool = False, device: str = "auto",
                    timeout: float | None = None, script_args=(),
                    graph: int | None = None) -> list[str]:
    """The ``fusionviz experiment`` command line the GUI runs as a child.

    ``kind`` is one of ``KINDS``; ``pairs`` are the (node, node) rules of forbid/force,
    ``config``/``config_a`` the settings of sides B/A of an A/B run.
    """
    argv = [sys.executable, "-u", "-m", "fusionviz", "experiment", str(script), "--json-progress",
            "-o", str(out_dir), "--device", device]
    if kind == "sweep":
        argv.append("--sweep-rounds")
    elif kind == "ab":
        if not config:
            raise ValueError("an A/B experiment needs at least one setting for side B")
        argv += [a for k, v in config.items() for a in ("--ab", _setting(k, v))]
        argv += [a for k, v in (config_a or {}).items() for a in ("--ab-base", _setting(k, v))]
    elif kind in ("forbid", "force"):
        if not pairs:
            raise ValueError(f"--{kind} needs at least one pair of nodes")
        argv += [a for x, y in pairs for a in (f"--{kind}", f"{x},{y}")]
        if graph is not None:
            argv += ["--graph", str(graph)]
    elif kind == "keep_spills":
        argv.append("--keep-spills")
    else:
        raise ValueError(f"unknown experiment kind {kind!r} (one of {', '.join(KINDS)})")
    if mode:
        argv += ["--mode", mode]
    if benchmark_fusion:
        argv.append("--benchmark-fusion")
    if timeout is not None:
        argv += ["--timeout", str(timeout)]
    return [*argv, "--", *map(str, script_args)]


META = "experiment.json"


@dataclass(frozen=True)
class Meta:
    """What an experiment folder's ``experiment.json`` says, checked: its kind and
    script, each variant's label and trace file (inside the folder), its report."""

    path: Path  # the experiment.json read
    kind: str
    script: str
    variants: tuple[tuple[str, Path], ...]  # (label, trace path)
    report: Path | None


def read_meta(folder: str | Path) -> Meta:
    """The ``experiment.json`` of ``folder``, read as a trace file is (a regular file, a
    few megabytes at most, not nested deeply: ``tracefile.bounded``); TraceError naming
    it when it is not one, has fields of the wrong type, or names a file outside the
    folder (``../../etc/passwd``, an absolute path, a symlink leading out)."""
    folder = Path(folder)
    path = folder / META
    meta = bounded.read_json(path)
    if not isinstance(meta, dict):
        raise TraceError(f"{path}: not an experiment description (expected an object)")
    kind, script, report = meta.get("kind"), meta.get("script", ""), meta.get("report")
    variants = meta.get("variants")
    if not isinstance(kind, str) or not isinstance(script, str):
        raise TraceError(f"{path}: 'kind' and 'script' must be strings")
    if not isinstance(variants, list) or not all(
            isinstance(v, dict) and isinstance(v.get("label"), str) for v in variants):
        raise TraceError(f"{path}: 'variants' must be a list of objects with a 'label' "
                         "and a 'trace'")
    files = tuple((v["label"], bounded.inside(folder, v.get("trace"), path))
                  for v in variants)
    if report is not None:
        report = bounded.inside(folder, report, path)
    return Meta(path, kind, script, files, report)


def read_experiment(folder: str | Path) -> Experiment:
    """The experiment a ``fusionviz experiment`` run left in ``folder``; TraceError
    (a ValueError) naming the file that is missing, unreadable or out of bounds
    (every file is read by ``tracefile.bounded``: see ``read_meta``)."""
    folder = Path(folder)
    try:
        meta = read_meta(folder)
    except TraceError as e:
        raise TraceError(f"{folder} is not a readable experiment folder: {e}") from e
    if len(meta.variants) < 2:
        raise TraceError(f"{meta.path}: an experiment needs two captures, found "
                         f"{len(meta.variants)}")
    variants = tuple(Variant(label, path.relative_to(folder).as_posix(), load_trace(path))
                     for label, path in meta.variants)
    report_path = meta.report or folder / "report.md"
    report = bounded.read_text(report_path) if report_path.is_file() else ""
    return Experiment(meta.kind, meta.script, variants, report)
