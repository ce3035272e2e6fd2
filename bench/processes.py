"""Starting and stopping the service processes a benchmark measures.

A benchmark starts real processes (a game server, an arena, the web front end), waits for the line in
which each names the address it serves, and stops them at the end: SIGTERM, then SIGKILL after a grace
period. Output goes to a log file, so that a process that fails to start can be shown with its last lines.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

#: The line of ``kutnahora-server`` and ``kutnahora-arena`` that names their address (group 1: host:port).
GRPC_LISTENING = r"listening on grpcs?://(\S+)"


def start_serving(
    command: Sequence[str], log: Path, pattern: str = GRPC_LISTENING, *, wait: float = 15.0
) -> tuple[subprocess.Popen[bytes], str]:
    """Start ``command`` with its output in ``log`` and wait up to ``wait`` seconds for a line matching
    ``pattern``; return the process and the pattern's first group (the address it serves)."""
    with log.open("wb") as handle:
        process = subprocess.Popen(list(command), stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        found = re.search(pattern, log.read_text(errors="replace"))
        if found:
            return process, found.group(1)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    process.kill()
    process.wait()
    raise SystemExit(f"{' '.join(command[:3])} did not start: {log.read_text(errors='replace')[-2000:]}")


def stop_process(process: subprocess.Popen[bytes], grace: float = 10.0) -> None:
    """SIGTERM, then SIGKILL if the process has not ended after ``grace`` seconds."""
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
