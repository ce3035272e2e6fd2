"""Stopping a long command the way a service manager, ``kill`` or a container's stop does: SIGTERM once
the command has something to keep, for the tests that it stops as on Ctrl-C."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable


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
