"""How numbers and cells are written, everywhere: reports, the CLI, tables and panes.

One place, so a time reads the same in the summary, the ledger and the comparison.
"""

from __future__ import annotations

import math

DASH = "-"  # an absent value in text reports (Markdown, the CLI)


def number(value, digits: int = 3, none: str = DASH) -> str:
    """A report cell: floats with ``digits`` decimals, None as ``none``, else ``str``."""
    if value is None:
        return none
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def ms(value: float | None, none: str = DASH) -> str:
    """``1.23456`` → ``"1.235 ms"``."""
    return none if value is None else f"{value:.3f} ms"


def byte_size(n: int | None, none: str = "–") -> str:
    """``1536`` → ``"1.5 KiB"``, ``11010048`` → ``"10.5 MiB"``: binary units (KiB = 1024
    bytes) everywhere in the app; bandwidth is decimal GB/s, as GPU makers state it."""
    if n is None:
        return none
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(size) < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:,.1f} TiB"


MIB = 1024 * 1024  # bytes per MiB: charts plot bytes in MiB


def count(n: int | None, none: str = DASH) -> str:
    """``11010048`` → ``"11,010,048"``."""
    return none if n is None else f"{n:,}"


def digits(text: str) -> str:
    """A number the trace keeps as text, grouped: ``"11010048"`` → ``"11,010,048"``; a
    symbolic size (``s0*768``) as it is."""
    return f"{int(text):,}" if text.isdecimal() and len(text) < 40 else text


def plural(n: int, noun: str) -> str:
    """``1 node``, ``2 nodes``, ``1,234 kernels``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def significant(value: float, digits: int = 3) -> str:
    """``31.37`` → ``"31.4"``, ``0.01097`` → ``"0.011"``, ``3352.3`` → ``"3,352"``:
    ``digits`` significant digits (whole numbers keep all theirs), no exponent."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if decimals else text


def ms_short(value: float | None, none: str = DASH) -> str:
    """``31.37`` → ``"31.4 ms"`` (three significant digits)."""
    return none if value is None else f"{significant(value)} ms"


def ms_range(low: float, high: float) -> str:
    """``(0.01097, 31.37)`` → ``"0.011–31.4 ms"``."""
    return f"{significant(low)}–{significant(high)} ms"


def gb_per_s(value: float | None, none: str = DASH) -> str:
    """``2868.8`` → ``"2,869 GB/s"``, ``2.31`` → ``"2.31 GB/s"``."""
    return none if value is None else f"{significant(value)} GB/s"


def share_of_peak(gb_s: float, peak_gb_s: float | None) -> str:
    """``"2,869 GB/s (86% of peak 3,352 GB/s)"``: a share says what it is a share of."""
    if not peak_gb_s:
        return gb_per_s(gb_s)
    return f"{gb_per_s(gb_s)} ({100 * gb_s / peak_gb_s:.0f}% of peak {gb_per_s(peak_gb_s)})"


MAX_TEXT = 1_000  # characters of one text on screen; a hostile trace's name has millions


def clip(text: str, limit: int = MAX_TEXT, hint: str = "") -> str:
    """``text``, or its first ``limit`` characters and how long it was (and ``hint``,
    e.g. where the whole text can be had): Qt lays out a text of megabytes for minutes
    (or crashes on its width)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… ({len(text):,} characters{f'; {hint}' if hint else ''})"


def cell(value) -> str:
    """A table cell on screen: floats to 4 significant digits, sequences and dicts
    spelled out, None empty, at most MAX_TEXT characters."""
    return clip(_cell(value))


def _cell(value) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, tuple | list):
        return ", ".join(_cell(v) for v in value)
    if isinstance(value, dict):
        return ", ".join(f"{k}={_cell(v)}" for k, v in value.items())
    return str(value)


def group(value) -> str:
    """A cell of an exported table: a group of nodes as ``op1+op2``, None empty."""
    if value is None:
        return ""
    if isinstance(value, tuple | list):
        return "+".join(map(str, value))
    return str(value)


def ms_spread(value: float | None, spread: tuple[float, ...] = (), none: str = DASH) -> str:
    """``"1.235 ms (1.100-1.400)"``: a median and the (min, max) of its samples."""
    if value is None:
        return none
    low_high = f" ({spread[0]:.3f}-{spread[1]:.3f})" if len(spread) == 2 else ""
    return f"{value:.3f} ms{low_high}"


def collective_text(c) -> str:
    """``all_reduce (sum) over group 0 of 2 ranks (gloo), 32.0 KiB``."""
    parts = [c.kind + (f" ({c.reduce_op})" if c.reduce_op else "")]
    if c.group:
        parts.append(f"over group {c.group}" + (f" of {c.group_size} ranks" if c.group_size
                                               else ""))
    backend = getattr(c, "backend", "")
    if backend:
        parts.append(f"({backend})")
    text = " ".join(parts)
    return f"{text}, {byte_size(c.bytes)}" if c.bytes else text


def comm_pass_text(cp) -> str:
    """``bucket_all_gathers: 3 all_gather_into_tensor, 3 wait_tensor → 1
    all_gather_into_tensor_out, 1 wait_tensor`` (a ``trace.CommPass``)."""
    def counts(d: dict) -> str:
        return ", ".join(f"{n} {kind}" for kind, n in sorted(d.items())) or "none"

    return f"{cp.name}: {counts(cp.before)} → {counts(cp.after)}"


def collective_time_text(t) -> str:
    """What a collective took (a ``comms.collective_times.CollectiveTime``): ``0.930 ms
    from issue to the end of its wait (issue 0.666 ms, wait 0.285 ms, no kernels in
    between)``; on the GPU its device time first, the CPU's span after it."""
    parts = []
    if t.device_ms is not None:
        parts.append(f"{ms(t.device_ms)} on the device (the kernel its call launched)")
    cpu = "on the CPU " if t.device_ms is not None else ""
    if t.span_ms is not None:
        n = len(t.kernels_between or ())
        between = f"{n or 'no'} kernel{'' if n == 1 else 's'} in between"
        parts.append(f"{cpu}{ms(t.span_ms)} from issue to the end of its wait "
                     f"(issue {ms(t.issue_ms)}, wait {ms(t.wait_ms)}, {between})")
    else:
        known = ", ".join(f"{what} {ms(value)}" for what, value in
                          (("issue", t.issue_ms), ("wait", t.wait_ms)) if value is not None)
        why = "no wait for it was found" if not t.waits else "not recorded"
        parts.append(f"{cpu}from issue to the end of its wait: {why}"
                     + (f" ({known})" if known else ""))
    return "; ".join(parts)


def split_text(split) -> str:
    """``piece 2 of 8 (DDP optimizer: a bucket of 4 parameters, 9.0 MiB)``: a graph that
    is one piece of a Dynamo graph split before Inductor (``trace.Split``)."""
    what = f"a bucket of {plural(len(split.params), 'parameter')}, {byte_size(split.bytes)}"
    return f"piece {split.piece + 1} of {split.pieces} ({split.by}: {what})"
