"""Under torchrun (2 ranks, no process group): every rank runs to its end, then rank 1
leaves a non-daemon thread sleeping, so its process outlives its script by ten minutes
(as a rank whose teardown hangs does). The capture must end that rank soon after every
rank's final trace, keep each rank's status, and say so in rank 1's trace only."""

import os
import threading
import time

if os.environ.get("RANK") == "1":
    threading.Thread(target=time.sleep, args=(600,), name="left-behind").start()
print(f"rank {os.environ.get('RANK')}: script done", flush=True)
