"""The fusion ledger: the pane and its table, the why-not-fused dialog, the cached-text cell delegate."""
