"""A seat's Play stream across replicas: which opening is the newest, and telling every replica of it.

With a shared quota store (``--quota-store redis://…``) a seat has one Play stream across every replica
that shares it, as it has one on a replica (:mod:`kutnahora.server.seats`). Each opening of a Play stream
is **announced**: one script in Redis takes it from the seat's bucket of openings (refusing it, announcing
nothing, past the seat's rate), numbers it from a counter every replica shares (so that the newest
opening has the highest number, whatever the replicas' clocks), writes that number as the seat's current
holder, and publishes ``REPLICA NUMBER GAME/SEAT`` on one pub/sub channel. Every replica listens on that
channel; one that holds a stream of that seat with a lower number ends it, as a newer stream on the same
replica would. A replica that lost its subscription and has it again (Redis restarted, the connection
dropped) may have missed announcements: it reads the current holders of the seats it holds streams of,
and ends those a newer opening took over (:data:`HOLDER_SECONDS` says how long a holder is remembered).

Redis pub/sub rather than PostgreSQL's ``LISTEN``/``NOTIFY``: the per-seat limits belong with the other
limits, in the quota store, which is what every replica that counts together shares (replicas may share
Redis whatever their game store, and a game store is no place for a write per stream opened); a publish
costs Redis one message to each replica, and no transaction.

When the store cannot be reached, an opening is not announced (None) and a replica that cannot listen
hears nothing: each replica holds one stream per seat for itself, as without a shared store, the failure
counted and logged by the store (:meth:`kutnahora.plumbing.quota_store.QuotaStore.failed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from kutnahora.plumbing.quota_store import ERRORS, RETRY_SECONDS, TAKE_TOKENS_LUA, Buckets, QuotaStore

HOLDER_SECONDS = 3600.0
"""How long Redis remembers the number of a seat's newest opening, for a replica that missed its
announcement while it could not listen."""

SUBSCRIBED_SECONDS = 2.0
"""How long :meth:`Takeovers.start` waits for the subscription before serving without it."""

_ANNOUNCE = (
    TAKE_TOKENS_LUA
    + """
local rate = tonumber(ARGV[1])
if rate > 0 then
  local wait = take_tokens(KEYS[1], rate, tonumber(ARGV[2]), 1)
  if wait > 0 then
    return {0, string.format('%.6f', wait)}
  end
end
local n = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[3], n, 'PX', tonumber(ARGV[5]))
redis.call('PUBLISH', ARGV[3], ARGV[4] .. ' ' .. n .. ' ' .. ARGV[6])
return {n, '0'}
"""
)

Heard = Callable[[str, int], None]
"""Told of an opening another replica announced: the seat (``GAME/SEAT``) and its number."""

Resync = Callable[[], Awaitable[None]]
"""Run once the subscription is (again) in place: announcements may have been missed before."""


class Takeovers:
    """The announcements of Play stream openings among the replicas that share ``store``."""

    def __init__(self, store: QuotaStore, heard: Heard, resync: Resync) -> None:
        self.store = store
        self.replica = uuid.uuid4().hex[:16]
        self.channel = store.key("seat_streams")
        self._counter = store.key("seat_streams", "sequence")
        self._heard = heard
        self._resync = resync
        redis_client = store.redis
        self._announce = redis_client.register_script(_ANNOUNCE) if redis_client is not None else None
        self._listener: asyncio.Task[None] | None = None
        self._tried = asyncio.Event()  # the listener subscribed, or failed to, at least once

    @property
    def shared(self) -> bool:
        """Whether there are other replicas to tell (a shared store)."""
        return self._announce is not None

    def holder_key(self, seat: str) -> str:
        """The Redis key of the number of a seat's newest opening."""
        return self.store.key("seat_streams", "holder", seat)

    async def announce(self, seat: str, openings: Buckets) -> tuple[float, int | None]:
        """Take a new Play stream of ``seat`` (``GAME/SEAT``) from its bucket in ``openings`` and, when it
        held one, number the stream and tell every replica, in one round trip: the seconds to wait (0.0
        when taken) and the number (None when refused). Without a shared store, or while it fails, the
        opening is taken from this replica's own bucket and not announced (its number is None: the stream
        holds the seat on this replica only)."""
        if self._announce is None or not self.store.usable():
            return openings.local.take(seat), None
        try:
            number, wait = await self._announce(
                keys=[self.store.key(openings.name, seat), self._counter, self.holder_key(seat)],
                args=[
                    openings.rate,
                    openings.burst,
                    self.channel,
                    self.replica,
                    int(HOLDER_SECONDS * 1000),
                    seat,
                ],
            )
        except ERRORS as error:
            self.store.failed(error, "announcing a Play stream")
            return openings.local.take(seat), None
        return float(wait), int(number) or None

    async def holders(self, seats: list[str]) -> list[int | None]:
        """The numbers of the newest openings of ``seats``, as Redis remembers them (None: not known)."""
        if self.store.redis is None or not seats or not self.store.usable():
            return [None] * len(seats)
        try:
            values = await self.store.redis.mget([self.holder_key(seat) for seat in seats])
        except ERRORS as error:
            self.store.failed(error, "reading the holders of seats")
            return [None] * len(seats)
        return [int(value) if value is not None else None for value in values]

    async def start(self) -> None:
        """Listen for the other replicas' announcements from now on; returns once subscribed (and caught
        up), once that failed (it is tried again every few seconds in the background), or after
        :data:`SUBSCRIBED_SECONDS`."""
        if self.store.redis is None or self._listener is not None:
            return
        self._tried.clear()
        self._listener = asyncio.get_running_loop().create_task(self._listen(), name="seat takeovers")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._tried.wait(), SUBSCRIBED_SECONDS)

    async def close(self) -> None:
        """Stop listening."""
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None

    async def _listen(self) -> None:
        assert self.store.redis is not None
        while True:
            pubsub = self.store.redis.pubsub()
            try:
                await pubsub.subscribe(self.channel)
                async for message in pubsub.listen():
                    self._on_message(message)
                    if message.get("type") == "subscribe":
                        await self._resync()
                        self._tried.set()
            except ERRORS as error:
                self._tried.set()
                self.store.failed(error, "listening for the Play streams other replicas open")
            finally:
                with contextlib.suppress(*ERRORS):
                    await asyncio.shield(pubsub.aclose())
            await asyncio.sleep(RETRY_SECONDS)

    def _on_message(self, message: dict[str, Any]) -> None:
        if message.get("type") != "message":
            return
        data = message.get("data")
        text = data.decode() if isinstance(data, bytes) else str(data)
        parts = text.split(" ", 2)
        if len(parts) != 3 or parts[0] == self.replica or not parts[1].isdigit():
            return  # this replica's own openings are ordered where they are made
        self._heard(parts[2], int(parts[1]))
