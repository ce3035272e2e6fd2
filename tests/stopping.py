"""Stopping a process the way a service manager, ``kill``, a container's stop or the kernel's OOM killer
does, for the tests that a long command stops as on Ctrl-C and that no worker outlives its parent."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def terminate_when(command: list[str], ready: Callable[[], bool], within: float = 120) -> tuple[int, str]:
    """Start ``command``, send it SIGTERM once ``ready()`` (failing the test if that takes over ``within``
    seconds or the command ends first), and return its exit status and what it wrote on stderr."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + within
        while not ready() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert ready(), (
            f"not ready within {within} s: {process.stderr.read() if process.poll() is not None else ''}"
        )
        process.send_signal(signal.SIGTERM)
        error = process.communicate(timeout=60)[1]
    finally:
        process.kill()
        process.wait()
    return process.returncode, error


def children_of(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` now."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(entry.name))
    return found


def gone(pid: int, within: float) -> bool:
    """Whether process ``pid`` has ended (or is a zombie nobody reaped) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while True:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
