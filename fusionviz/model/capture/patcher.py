"""Install and remove fail-safe method wrappers, feature-detected by name.

Inductor's internals are private and change between releases, so every hook is
installed only where the attribute is defined on that exact class, and what was
found missing is reported (``Capabilities``) instead of failing.
"""

from __future__ import annotations

import functools
import traceback
from collections.abc import Callable


class Patcher:
    """Wraps ``owner.name`` with ``factory(original)`` and can undo every wrap."""

    def __init__(self, on_error: Callable[[str, str], None]) -> None:
        self._on_error = on_error
        self._undo: list[tuple[type, str, object]] = []
        self.installed: list[str] = []
        self.missing: list[str] = []

    def wrap(self, owner: object, name: str, factory: Callable, label: str = "") -> bool:
        """Replace ``owner.name`` (if defined on ``owner`` itself) by ``factory(orig)``."""
        label = label or f"{getattr(owner, '__name__', owner)}.{name}"
        if owner is None or name not in getattr(owner, "__dict__", {}):
            self.missing.append(label)
            return False
        raw = owner.__dict__[name]
        kind = type(raw) if isinstance(raw, (staticmethod, classmethod)) else None
        func = raw.__func__ if kind else raw
        wrapped = functools.wraps(func)(factory(func))
        setattr(owner, name, kind(wrapped) if kind else wrapped)
        self._undo.append((owner, name, raw))
        self.installed.append(label)
        return True

    def guard(self, where: str, fn: Callable, *args, **kwargs):
        """Run a recording step; an error in it is recorded, never raised."""
        try:
            return fn(*args, **kwargs)
        except Exception:  # noqa: BLE001 - recording must never break the compile
            self._on_error(where, traceback.format_exc())
            return None

    def undo(self) -> None:
        """Restore every wrapped attribute, newest first."""
        while self._undo:
            owner, name, raw = self._undo.pop()
            setattr(owner, name, raw)
