"""Errors the model raises for the UI and the CLI to show (never a traceback)."""

from __future__ import annotations


class TraceError(ValueError):
    """A trace file could not be read; the message says which file and why."""
