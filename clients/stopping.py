"""How the long commands stop: SIGTERM as Ctrl-C.

The tournament runner, ``kutnahora-train`` and the strength ladder keep their work as they go (results,
checkpoints, the report after every game) and stop on Ctrl-C with a sentence saying what is kept and what
goes on with ``--resume``, exit status 130. A service manager, ``kill``, ``timeout`` or a container's stop
sends SIGTERM instead, whose default ends the process where it stands: no sentence, and the time a
pipeline's stage had spent not recorded. :func:`terminate_as_interrupt` makes SIGTERM raise
:class:`KeyboardInterrupt` while a command runs, so both stops take the same path.

A worker process (the web server's search process) must not outlive the process that started it: a
killed or crashed parent tells its workers nothing, and a worker of a ``ProcessPoolExecutor`` then waits
on its queue for ever, holding its memory. :func:`exit_with_parent`, run in the worker as it starts, ends
it within a second of its parent's end.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from types import FrameType

INTERRUPTED = 130
"""The exit status of a command stopped by Ctrl-C or SIGTERM (128 + SIGINT, as shells report Ctrl-C)."""


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM raises :class:`KeyboardInterrupt` in the main thread until the block ends, then the handler
    before it is back (outside the main thread, where Python cannot set one, nothing changes)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


ORPHAN_CHECK_SECONDS = 1.0
"""How often a worker checks that the process that started it is still its parent."""


def exit_with_parent(parent: int, every: float = ORPHAN_CHECK_SECONDS) -> None:
    """In a worker process (as a pool's ``initializer``, with the parent's pid): end the worker once
    ``parent`` is no longer its parent (killed, crashed, or ended by a signal it re-raised)."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()
