"""Runs to its end, then leaves a non-daemon thread sleeping: the interpreter waits for
it at exit, so the process outlives its script by ten minutes. The capture must end it
soon after its final trace, keeping the script's status (nothing was lost)."""

import threading
import time

threading.Thread(target=time.sleep, args=(600,), name="left-behind").start()
print("script done", flush=True)
