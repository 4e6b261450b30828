"""Writes 20,000 lines and a 1 MB line without a newline to stderr, then its last
words, and exits with status 3 without a Python traceback: the capture keeps only a
bounded tail of stderr, and shows it."""

import os
import sys

for i in range(20000):
    sys.stderr.write(f"noise {i}\n")
sys.stderr.write("x" * 1_000_000)
sys.stderr.write("\nlast words\n")
sys.stderr.flush()
os._exit(3)
