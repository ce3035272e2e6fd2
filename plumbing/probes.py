"""Bounds on the standard services anyone who reaches a port may call: health and reflection.

The game server's and the arena's own methods count every call against their connection's and caller's
limits; ``grpc.health.v1.Health`` and server reflection served beside them did not, so a stranger could
call ``Check`` in a tight loop, send reflection requests without end on one stream, or open health
``Watch`` streams by the hundred thousand, each a coroutine held in memory for as long as it stays open.
A :class:`ProbeGuard` bounds them: calls and reflection requests per second per connection
(:data:`RATE`, :data:`BURST`), far above what a load balancer, a Kubernetes probe or ``grpcurl`` asks, and
health ``Watch`` and reflection streams open at once per replica (:data:`MAX_STREAMS`). A call past a
bound ends RESOURCE_EXHAUSTED with a sentence saying which, its ``ErrorInfo`` and, for the rate, a
``RetryInfo``; each refusal is counted by ``on_refusal``, given ``probe_rate`` or ``probe_streams`` (the
service's refusals metric).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc.aio

from kutnahora.plumbing import status
from kutnahora.plumbing.callers import RateLimiter
from kutnahora.plumbing.errors import Reason, ServiceError, exhausted

RATE = 20.0
"""Health and reflection calls (and reflection requests) one connection may make per second on average."""

BURST = 100
"""How many of them one connection may make at once above :data:`RATE`."""

MAX_STREAMS = 100
"""Health ``Watch`` and reflection streams one replica holds open at once."""


class ProbeGuard:
    """The per-connection rate and the open-stream cap of the health and reflection services."""

    def __init__(
        self,
        rate: float = RATE,
        burst: int = BURST,
        max_streams: int = MAX_STREAMS,
        on_refusal: Callable[[str], None] | None = None,
    ) -> None:
        self.limiter = RateLimiter(rate, burst)
        self.rate = rate
        self.max_streams = max_streams
        self.streams = 0
        self._on_refusal = on_refusal

    async def count(self, context: grpc.aio.ServicerContext[Any, Any], what: str) -> None:
        """Count one call or request of the connection; past the rate, end the call RESOURCE_EXHAUSTED."""
        wait = self.limiter.take(context.peer())
        if wait > 0:
            await self._refuse(
                context,
                "probe_rate",
                exhausted(
                    f"this connection sent more than {self.rate:g} health and reflection requests per "
                    f"second, its limit ({what})",
                    Reason.RATE_LIMITED,
                    retry_after=wait,
                ),
            )

    @contextlib.asynccontextmanager
    async def stream(self, context: grpc.aio.ServicerContext[Any, Any], what: str) -> AsyncIterator[None]:
        """Hold one of the replica's stream places while the block runs; none left: RESOURCE_EXHAUSTED."""
        await self.count(context, what)
        if self.streams >= self.max_streams:
            await self._refuse(
                context,
                "probe_streams",
                exhausted(
                    f"this server already holds {self.max_streams} health Watch and reflection streams open, "
                    f"its limit ({what})",
                    Reason.PROBE_STREAMS,
                ),
            )
        self.streams += 1
        try:
            yield
        finally:
            self.streams -= 1

    async def _refuse(
        self, context: grpc.aio.ServicerContext[Any, Any], limit: str, error: ServiceError
    ) -> None:
        """Count the refusal as ``limit`` and end the call with ``error``."""
        if self._on_refusal is not None:
            self._on_refusal(limit)
        await context.abort(error.code, error.message, trailing_metadata=status.status_details(error))
