"""The kernel pane: a kernel's facts and highlighted source (pane), the code view and its find bar (code_view)."""
