"""A fusion round's ledger as flat table rows, with filters and CSV/Markdown export.

One row per candidate pair in Inductor's score order, then one per ``can_fuse``
rejection recorded while the candidates were collected; every row has the same
columns, so the rows feed a table view and an export alike.
"""

from __future__ import annotations

from fusionviz.model.names import Names
from fusionviz.model.report.formatting import byte_size, cell, count, group, significant
from fusionviz.model.report.tables import csv_text, markdown_text
from fusionviz.model.trace import Benchmark, Round


def ledger_rows(round: Round, names: Names | None = None) -> list[dict]:  # noqa: A002
    """One flat row per candidate, in score order, then one per rejecting scan verdict.

    Every row has the same keys: phase, rank, a, b (raw node names), with ``names``
    a_is and b_is (their main ops and module: ``var_mean · h.1.ln_1``), tried (``op1+op2 × op3`` when
    earlier fusions of the round grew a or b before the pair was tried), outcome,
    reasons, ``score_<field>`` for every score field of the round, ms_a, ms_b,
    ms_fused, speedup, spill, n_spills (the most any timed kernel spilled),
    bytes_saved.
    """
    score_keys = list(dict.fromkeys(k for c in round.candidates for k in c.score))
    score_cols = [(f"score_{k}", k) for k in score_keys]
    no_scores = {col: None for col, _ in score_cols}
    # A round holds up to tens of thousands of candidates: each row is built as one
    # literal plus shared parts, not by repeated updates (the ledger opens on it).
    rows = []
    about = names.about if names is not None else None
    for c in round.candidates:
        row = {
            "phase": "candidate",
            "rank": c.rank,
            "a": c.a,
            "b": c.b,
            **({"a_is": about(c.a), "b_is": about(c.b)} if about else {}),
            "tried": " × ".join("+".join(g) for g in c.tried) if c.tried else None,
            "outcome": c.outcome,
            "reasons": _reasons(c.reasons) or _IMPLIED.get(c.outcome, ""),
        }
        score = c.score
        for col, k in score_cols:
            row[col] = score.get(k)
        row.update(_bench_cells(c.benchmark))
        row["bytes_saved"] = c.bytes_saved
        rows.append(row)
    for v in round.verdicts:
        if not v.ok:
            rows.append({"phase": "scan", "rank": None, "a": v.a, "b": v.b,
                         **({"a_is": about(v.a), "b_is": about(v.b)} if about else {}),
                         "tried": None,
                         "outcome": "rejected", "reasons": _reasons(v.reasons),
                         **no_scores, **_NO_BENCH, "bytes_saved": None})
    return rows


# Columns in bytes: Inductor's memory score is the bytes the pair's common buffers
# move (score_fusion_memory; a mix-order reduction's is a count of elements instead).
BYTE_COLUMNS = frozenset({"score_memory_score", "bytes_saved"})
MS_COLUMNS = frozenset({"ms_a", "ms_b", "ms_fused"})


def ledger_cell(key: str, value) -> str:
    """A ledger cell as the table shows it: bytes as ``10.5 MiB``, times to four
    significant digits (the header names the unit), a speedup as ``1.23×``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return cell(value)
    if key in BYTE_COLUMNS:
        return byte_size(value)
    if key in MS_COLUMNS:
        return significant(value, 4)
    if key == "speedup":
        return f"{significant(value)}×"
    return cell(value)


def ledger_tip(key: str, value) -> str:
    """A cell's tooltip: the cell, and a count of bytes exactly
    (``10.5 MiB: 11,010,048 bytes``)."""
    text = ledger_cell(key, value)
    if key in BYTE_COLUMNS and isinstance(value, int) and not isinstance(value, bool):
        return f"{text}: {count(value)} bytes"
    return text


# What an outcome says by itself when no check gave a reason.
_IMPLIED = {
    "skipped": "(never tried: Inductor's loop passed the pair over, e.g. a template pair "
               "already tried this way, or the round stopped early)",
    "pending": "(a deferred decision that never resolved)",
}


def _reasons(reasons) -> str:
    return "; ".join([r.text for r in reasons]) if reasons else ""


_NO_BENCH = dict.fromkeys(("ms_a", "ms_b", "ms_fused", "speedup", "spill", "n_spills"))


def _bench_cells(b: Benchmark | None) -> dict:
    if b is None:
        return _NO_BENCH
    spills = [k.n_spills for k in b.kernels if k.n_spills is not None]
    return {
        "ms_a": b.ms_a,
        "ms_b": b.ms_b,
        "ms_fused": b.ms_fused,
        "speedup": b.speedup,
        "spill": b.spill or None,
        "n_spills": max(spills) if spills else None,
    }


def filter_rows(
    rows: list[dict], *, outcome: str | None = None, reason: str | None = None
) -> list[dict]:
    """Rows with ``outcome`` ("rejected" = any not fused) and ``reason`` in their reasons."""
    out = rows
    if outcome == "rejected":
        out = [r for r in out if r.get("outcome") != "fused"]
    elif outcome:
        out = [r for r in out if r.get("outcome") == outcome]
    if reason:
        needle = reason.lower()
        out = [r for r in out if needle in str(r.get("reasons") or "").lower()]
    return list(out)


def _columns(rows) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def rows_to_csv(rows) -> str:
    """Rows as CSV with a header; groups are written as ``op1+op2``."""
    rows = list(rows)
    columns = _columns(rows)
    return csv_text(columns, ([group(r.get(k)) for k in columns] for r in rows))


def rows_to_markdown(rows) -> str:
    """Rows as a GitHub-flavoured Markdown table ("" for no rows)."""
    rows = list(rows)
    columns = _columns(rows)
    if not columns:
        return ""
    return markdown_text(columns, ([group(r.get(k)) for k in columns] for r in rows))
