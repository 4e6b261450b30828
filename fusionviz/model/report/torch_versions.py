"""The torch versions fusionviz was verified on, and what to say about any other.

Inductor's internals change between releases, and fusionviz hooks private ones; a
version is listed here once ``benchmarks/compat.py`` captured every bundled example on
it with all hooks installed (the README's table says how each was verified).
"""

from __future__ import annotations

import re

VERIFIED = {  # major.minor → how it was verified
    "2.11": "GPU (H100/H200, CUDA 13, Triton 3.6): bundled examples and real models",
    "2.13": "CPU: the CI suite, every capture test",
    "2.14": "CPU (2.14.1): benchmarks/compat.py",
    "2.15": "CPU (2.15.0): benchmarks/compat.py",
}


def minor(version: str) -> str:
    """``2.11.0+cu130`` → ``2.11`` ("" when it is not a version)."""
    found = re.match(r"(\d+)\.(\d+)", version or "")
    return f"{found.group(1)}.{found.group(2)}" if found else ""


def unverified_note(version: str) -> str:
    """A line for the Notices pane when ``version`` is outside the verified set."""
    if not version or minor(version) in VERIFIED:
        return ""
    known = ", ".join(sorted(VERIFIED, key=lambda v: tuple(map(int, v.split(".")))))
    return (f"captured with torch {version}, which fusionviz was not verified on "
            f"(verified: {known}); a hook Inductor no longer offers is listed as missing, "
            "and what it records may be incomplete")
