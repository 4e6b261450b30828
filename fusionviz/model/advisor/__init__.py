"""The fusion advisor (#20): what in a captured graph may be worth changing, ranked."""
