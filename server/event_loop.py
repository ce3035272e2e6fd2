"""Which event loop runs the server: uvloop where it is installed, else asyncio's own.

uvloop puts libuv under asyncio's interface: the same coroutines, futures and callbacks, run for less CPU
than asyncio's loop spends on them. A decision on a Play stream passes through the loop several times (the
reader's read, the waiting seat's wake-up, the write and its completion), as every message of a bare gRPC
echo does: in three alternated pairs of ``kutnahora-bench --duration 8 --rounds 2`` on one machine, uvloop
took the server from 191 to 180 µs of CPU per decision and the echo from 38.5 to 33.5 µs per streamed
message (medians of six rounds each), and the decisions per second from 5,740 to 6,150.

``--event-loop`` (``KUTNAHORA_EVENT_LOOP``) chooses: ``auto``, the default, runs uvloop when it can be
imported and asyncio's loop otherwise (uvloop is installed with the package wherever it is built: CPython
on Linux and macOS); ``uvloop`` insists on it; ``asyncio`` runs asyncio's own loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

CHOICES = ("auto", "uvloop", "asyncio")
"""What ``--event-loop`` accepts."""

LoopFactory = Callable[[], asyncio.AbstractEventLoop]


def loop_factory(choice: str) -> tuple[str, LoopFactory]:
    """The name (``uvloop`` or ``asyncio``) and the factory of the loop ``choice`` gives.

    Raises ValueError, with a sentence, for an unknown choice or for ``uvloop`` where it is not installed.
    """
    if choice not in CHOICES:
        raise ValueError(f"the event loop must be one of {', '.join(CHOICES)}, not {choice!r}")
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise ValueError(
                    "the event loop uvloop was asked for but uvloop is not installed here "
                    "(pip install uvloop, or choose auto or asyncio)"
                ) from None
        else:
            return "uvloop", uvloop.new_event_loop
    return "asyncio", asyncio.new_event_loop


def resolve(choice: str) -> str:
    """The loop ``choice`` gives here: ``uvloop`` or ``asyncio`` (ValueError as :func:`loop_factory`)."""
    return loop_factory(choice)[0]


def run(main: Coroutine[Any, Any, T], choice: str = "auto") -> T:
    """Run ``main`` to completion on a new loop of the chosen kind, as :func:`asyncio.run` does."""
    _, factory = loop_factory(choice)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(main)


def running_loop_name() -> str:
    """``uvloop`` or ``asyncio``: the kind of loop running the caller."""
    module = type(asyncio.get_running_loop()).__module__
    return "uvloop" if module.split(".")[0] == "uvloop" else "asyncio"
