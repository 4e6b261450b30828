"""Compiling one captured graph again, without the user's script (``fusionviz replay``,
the fusion advisor's first step, #20)."""
