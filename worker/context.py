"""What every job of a worker shares: its connections, its builder, its sandbox, its metrics, its logs.

:class:`Context` also holds the worker's ``stopping`` event (SIGTERM, SIGINT): every job watches it and
stops at once (the seeks withdrawn, the bots stopped), and :func:`retrying` repeats a call to the arena
while it cannot be reached, with a growing pause, until it answers, the worker stops or the job's lease
is lost.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from kutnahora.clients.arena_client import ArenaClient
from kutnahora.clients.sdk import ConnectError
from kutnahora.hosting.gateway_limits import GatewayLimits
from kutnahora.hosting.sandbox import Sandbox
from kutnahora.worker.builds import Builder
from kutnahora.worker.hosting_client import HostingClient
from kutnahora.worker.metrics import WorkerMetrics

T = TypeVar("T")
BACKOFF = (0.5, 15.0)  # the first and the longest pause between tries while the arena cannot be reached


class Stopped(Exception):
    """The job stops now: the worker is stopping, or its lease was lost."""


@dataclass(slots=True)
class Context:
    """The worker's shared parts (see the module's docstring)."""

    name: str
    hosting: HostingClient
    arena: ArenaClient
    builder: Builder
    sandbox: Sandbox | None
    gateways: Path  # where the seat gateways' sockets are made
    seat_logs: Path  # where the seats' logs are written while they play
    metrics: WorkerMetrics
    log: Any
    gateway: GatewayLimits = field(default_factory=GatewayLimits)
    stopping: asyncio.Event = field(default_factory=asyncio.Event)


async def until(work: Awaitable[T], *events: asyncio.Event) -> T:
    """``work``'s result, or :class:`Stopped` (and ``work`` cancelled) as soon as one of ``events`` is
    set."""
    task = asyncio.ensure_future(work)
    watchers = [asyncio.ensure_future(event.wait()) for event in events]
    try:
        await asyncio.wait({task, *watchers}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for watcher in watchers:
            watcher.cancel()
        if not task.done():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if task.cancelled():
        raise Stopped()
    return task.result()


async def retrying(
    call: Callable[[], Awaitable[T]], doing: str, context: Context, *events: asyncio.Event
) -> T:
    """``call()``'s result, tried again while the arena cannot be reached (each failure logged with what
    was being done); :class:`Stopped` when one of ``events`` is set meanwhile."""
    delay = BACKOFF[0]
    while True:
        try:
            return await until(call(), *events)
        except ConnectError as error:
            context.metrics.arena_errors.inc()
            context.log.warning(
                "the arena cannot be reached; trying again", doing=doing, retry_in=delay, error=str(error)
            )
        await until(asyncio.sleep(delay), *events)
        delay = min(delay * 2, BACKOFF[1])
