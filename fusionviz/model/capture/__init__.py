"""Capture hooks that run inside the user's process (the only package importing torch)."""
