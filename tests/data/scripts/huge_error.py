"""Fails with an error message of a megabyte: the trace keeps a bounded end of it."""

raise ValueError("x" * 1_000_000)
