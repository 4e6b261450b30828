"""The scheduler graph view: the view (view), its batched tile items (items), per-node geometry and style (paint), the overview (minimap)."""
