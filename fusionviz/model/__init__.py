"""Pure-Python trace model, capture runner and layout math (no Qt)."""
