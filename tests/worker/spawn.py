"""Starting ``kutnahora-arena-worker`` as a process, the way every worker test and measurement does: in a
short work folder of its own under /tmp (the seat gateways' sockets lie in it, and a Unix socket's path is
short), its output to a log file."""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
from pathlib import Path

from tests.clients.helpers import ROOT


def work_folder() -> Path:
    """A fresh, short work folder for a worker."""
    return Path(tempfile.mkdtemp(prefix="kw-", dir="/tmp"))


async def spawn_worker(
    arena: str, token_file: Path, work: Path, runtime: Path, log: Path, *flags: str
) -> asyncio.subprocess.Process:
    """A worker of the arena at ``arena`` with the token in ``token_file``, working in ``work``, its uid
    leases under ``runtime``, writing its console log to ``log``; ``flags`` added to its command line."""
    command = [
        *(sys.executable, "-m", "kutnahora.worker.main", "--arena", arena),
        *("--worker-token-file", str(token_file), "--work", str(work), "--log-format", "console"),
        *("--sandbox-runtime", str(runtime), *flags),
    ]
    with log.open("wb") as sink:
        return await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=sink,
            stderr=sink,
            cwd=ROOT,
            env=dict(os.environ),
        )
