"""How the long commands stop: SIGTERM as Ctrl-C.

The tournament runner, ``kutnahora-train`` and the strength ladder keep their work as they go (results,
checkpoints, the report after every game) and stop on Ctrl-C with a sentence saying what is kept and what
goes on with ``--resume``, exit status 130. A service manager, ``kill``, ``timeout`` or a container's stop
sends SIGTERM instead, whose default ends the process where it stands: no sentence, and the time a
pipeline's stage had spent not recorded. :func:`terminate_as_interrupt` makes SIGTERM raise
:class:`KeyboardInterrupt` while a command runs, so both stops take the same path.
"""

from __future__ import annotations

import contextlib
import signal
import threading
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
