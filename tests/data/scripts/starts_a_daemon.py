"""Starts a daemon (a double fork into a new session, output detached) that writes its
pid to argv[1] and sleeps; then exits ("exit") or hangs ("hang"). The capture must
end the daemon anyway: at exit, on timeout and on cancel."""

import os
import subprocess
import sys
import time

pidfile, how = sys.argv[1], sys.argv[2]
DAEMON = (
    "import os, sys, time\n"
    "if os.fork(): os._exit(0)\n"  # the grandchild: orphaned at once, in its own session
    "open(sys.argv[1] + '.tmp', 'w').write(str(os.getpid()))\n"
    "os.replace(sys.argv[1] + '.tmp', sys.argv[1])\n"
    "time.sleep(120)\n"
)
subprocess.run([sys.executable, "-c", DAEMON, pidfile], start_new_session=True, check=True,
               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
while not os.path.exists(pidfile):
    time.sleep(0.01)
print("daemon started", flush=True)
if how == "hang":
    time.sleep(3600)
