"""Processes a host runs for bots: whether one still runs, stopping a process group, and why one ended.

A hosted bot runs in a process group of its own (``start_new_session``), so that stopping it stops what it
started; its exit is read as a person would want it said: a limit's signal (bubblewrap and a shell exit
with 128 + the signal, a process killed by one with a negative code), a limit named in its last output,
or its exit status and last line.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

LIMIT_SIGNALS = {
    signal.SIGXCPU: "exceeded its CPU time limit",
    signal.SIGXFSZ: "exceeded its file size limit",
    signal.SIGKILL: "was killed (SIGKILL)",
    signal.SIGSEGV: "crashed (SIGSEGV)",
    signal.SIGABRT: "aborted (SIGABRT)",
}
LIMIT_WORDS = (
    ("MemoryError", "ran out of memory (address space limit)"),
    ("bad_alloc", "ran out of memory (address space limit)"),
    ("OutOfMemoryError", "ran out of memory (address space limit)"),
    ("Cannot allocate memory", "ran out of memory (address space limit)"),
    ("Resource temporarily unavailable", "hit its process limit"),
    ("BlockingIOError", "hit its process limit"),
    ("No space left on device", "filled its /tmp"),
    ("File too large", "exceeded its file size limit"),
)


def running(pid: int) -> bool:
    """Whether a process ``pid`` exists now (one of another user's counts: it cannot be signalled, but
    it runs)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_process_group(process: asyncio.subprocess.Process, signum: int = signal.SIGTERM) -> None:
    """Send ``signum`` to the process group ``process`` leads (nothing if it has gone)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signum)


def exit_reason(code: int, tail: bytes) -> str:
    """Why a hosted bot ended: a limit's signal (bubblewrap exits with 128 + the signal, a shell
    with 128 + the signal, a process with a negative code), a limit named in its last output, or its
    exit status and last line."""
    signum = -code if code < 0 else code - 128 if code > 128 else 0
    text = tail.decode(errors="replace")
    lines = text.strip().splitlines()
    last = f": {lines[-1][:200]}" if lines else ""
    if signum in LIMIT_SIGNALS:
        return f"{LIMIT_SIGNALS[signal.Signals(signum)]} (exit status {code}){last}"
    for word, reason in LIMIT_WORDS:
        if word in text:
            return f"{reason} (exit status {code}){last}"
    return f"exited with status {code}{last}"
