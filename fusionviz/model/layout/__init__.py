"""Layered (Sugiyama) layout of a scheduler graph: layers and order (layering), coordinates and edge routes (sugiyama)."""
