"""Starts a child that keeps this script's stdout open and sleeps, then exits at once:
the capture must not wait for that child, nor leave it running."""

import subprocess
import sys

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print(f"child pid {child.pid}", flush=True)
