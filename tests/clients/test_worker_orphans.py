"""A worker process ends with the process that started it (kutnahora.clients.stopping.exit_with_parent):
a parent killed outright tells its workers nothing, and a worker of a ``ProcessPoolExecutor`` (the web
server's search process) then waits on its queue for ever, holding its memory, reparented to init."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from tests.stopping import gone

PARENT = """
import multiprocessing, os, sys, time
from concurrent.futures import ProcessPoolExecutor
from kutnahora.clients.stopping import exit_with_parent
watched = sys.argv[1] == "watched"
pool = ProcessPoolExecutor(
    1,
    mp_context=multiprocessing.get_context("spawn"),
    initializer=exit_with_parent if watched else None,
    initargs=(os.getpid(),) if watched else (),
)
print(pool.submit(os.getpid).result(), flush=True)
time.sleep(120)
"""


def killed_parents_worker(kind: str) -> int:
    """Start a parent with one pool worker, SIGKILL the parent; the worker's pid."""
    parent = subprocess.Popen([sys.executable, "-c", PARENT, kind], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
    finally:
        parent.send_signal(signal.SIGKILL)
        parent.wait()
    return worker


def test_a_worker_ends_within_seconds_of_its_parents_kill() -> None:
    worker = killed_parents_worker("watched")
    assert gone(worker, 5), "the worker outlived its killed parent"


def test_without_the_watch_a_killed_parents_worker_lives_on() -> None:
    """The control: the same pool without ``exit_with_parent``."""
    worker = killed_parents_worker("unwatched")
    try:
        assert not gone(worker, 3)
    finally:
        os.kill(worker, signal.SIGKILL)
