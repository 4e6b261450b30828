"""The trace file format: JSON Lines (core line, then part lines), gzip, versions and their migrations, the fast and careful builders."""
