"""Leaves a daemon behind (double fork, a session of its own, its name marked), then plays its seat."""

import os
import sys

MARK = "kutnahora-daemon-mark-5d1f"
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp(sys.executable, [sys.executable, "-c", f"import time; time.sleep(3600)  # {MARK}"])
    os._exit(0)
os.wait()
print("left a daemon behind", flush=True)
os.execvp(sys.executable, [sys.executable, "-m", "kutnahora.clients.bots.cli", "greedy"])
