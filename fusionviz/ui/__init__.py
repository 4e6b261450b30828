"""Qt explorer window (PySide6); reads traces, never imports torch."""
