"""Tables written as CSV (the ``csv`` module: quoting done right), Markdown or plain
aligned text (the command line).

Every table fusionviz writes goes through here: the ledger export, the experiment
reports, the comparison's metrics. Cells are given as text already (``formatting``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence


def csv_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """``header`` then ``rows`` as CSV (``\\n`` line ends); None cells are empty."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(["" if v is None else v for v in row] for row in rows)
    return buf.getvalue()


def markdown_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub-flavoured Markdown table; ``|`` and line breaks in cells are escaped."""
    lines = [_md_row(header), "|" + "---|" * len(header)]
    lines += [_md_row(row) for row in rows]
    return "\n".join(lines) + "\n"


def plain_text(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """Columns padded to their widest cell, two spaces apart (no trailing blanks);
    line breaks in cells become spaces."""
    table = [[_one_line(c) for c in header]]
    table += [[_one_line("" if c is None else c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(header))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
                     for r in table)


def _md_row(cells: Iterable[object]) -> str:
    return "| " + " | ".join(_md_cell(c) for c in cells) + " |"


def _md_cell(value: object) -> str:
    return _one_line(value).replace("|", "\\|")


def _one_line(value: object) -> str:
    return str(value).replace("\n", " ")
