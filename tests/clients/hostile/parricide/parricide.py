"""Tries to kill its parents up to the runner, process 1, and every process it can see."""

import os
import signal
import sys
from pathlib import Path


def owner(pid: int) -> int:
    return os.stat(f"/proc/{pid}").st_uid


me = os.getuid()
visible = [int(p) for p in os.listdir("/proc") if p.isdigit()]
strangers = [p for p in visible if p != 1 and owner(p) != me]
print(f"processes visible: {sorted(visible)}; of other users besides process 1: {strangers}")
if strangers:
    print(f"LEAKED sees other users' processes {strangers}")
try:
    os.kill(1, signal.SIGKILL)
    print("LEAKED killed process 1")
except OSError as error:
    print(f"BLOCKED kill process 1: {error.strerror}", flush=True)
pid = os.getppid()
while pid > 1:  # its own shell, then up the chain to the sandbox's process 1
    stat = Path(f"/proc/{pid}/stat").read_text()
    parent = int(stat.rsplit(")", 1)[1].split()[1])
    try:
        os.kill(pid, signal.SIGKILL)
        print(f"killed its own ancestor {pid} (uid {me}, inside the sandbox)", flush=True)
    except OSError as error:
        print(f"BLOCKED kill ancestor {pid}: {error.strerror}", flush=True)
    pid = parent
sys.exit(7)
