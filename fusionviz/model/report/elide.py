"""Module paths shortened to fit a width by whole segments: ``transformer.….3.attn``.

A dotted path loses segments from its middle first, keeping its first and last ones,
so a label never reads ``…sformer`` or ``…ean``. The caller says what fits: a number of
characters, or a ``fits(text)`` test (the Qt side measures with its font metrics).
Only a single segment too long for the room is cut inside, by ``middle``.
"""

from __future__ import annotations

from collections.abc import Callable

ELLIPSIS = "…"
Fits = int | Callable[[str], bool]


def path_forms(path: str, sep: str = ".") -> list[str]:
    """``path`` and its shorter forms, longest first: ``a.b.c.d``, ``a.….c.d``,
    ``a.….d``, then ``….d`` (the last segment alone)."""
    parts = path.split(sep)
    if len(parts) < 2:
        return [path]
    forms = [path]
    forms += [sep.join([parts[0], ELLIPSIS, *parts[k:]]) for k in range(2, len(parts))]
    forms.append(ELLIPSIS + sep + parts[-1])
    return forms


def middle(text: str, budget: int) -> str:
    """``text`` cut in the middle to ``budget`` characters: ``tran…rmer``."""
    if len(text) <= budget:
        return text
    if budget <= 1:
        return ELLIPSIS[:budget]
    head, tail = budget // 2, (budget - 1) // 2
    return text[:head] + ELLIPSIS + (text[-tail:] if tail else "")


def _measures(fits: Fits, cut: Callable[[str], str] | None):
    if isinstance(fits, int):
        budget = fits
        return (lambda s: len(s) <= budget), cut or (lambda s: middle(s, budget))
    return fits, cut or (lambda s: s)


def elide_path(path: str, fits: Fits, cut: Callable[[str], str] | None = None,
               sep: str = ".") -> str:
    """The longest form of ``path`` that fits; when none does, its last segment cut by
    ``cut`` (a character budget cuts in the middle; a ``fits`` test without ``cut``
    gives the last segment whole)."""
    test, cut = _measures(fits, cut)
    found = next((f for f in path_forms(path, sep) if test(f)), None)
    return found if found is not None else cut(path.rsplit(sep, 1)[-1])


def elide_title(path: str, cls: str, fits: Fits, cut: Callable[[str], str] | None = None,
                sep: str = ".") -> str:
    """``h.3 (GPT2Block)`` to fit: the path shortened first (keeping its first and last
    segments), then the class dropped."""
    test, _ = _measures(fits, cut)
    forms = path_forms(path, sep)
    for form in forms[:-1] if len(forms) > 1 else forms:
        if cls and test(f"{form} ({cls})"):
            return f"{form} ({cls})"
    return elide_path(path, fits, cut, sep)


def elide_items(items: list[str], fits: Fits, sep: str = ", ") -> str:
    """As many of ``items`` as fit, whole, then ``…``: ``var_mean, add, …``; "" when
    not even the first one does."""
    test, _ = _measures(fits, None)
    for k in range(len(items), 0, -1):
        text = sep.join(items[:k]) + (sep + ELLIPSIS if k < len(items) else "")
        if test(text):
            return text
    return ""
