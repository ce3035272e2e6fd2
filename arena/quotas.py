"""The arena's per-caller limits, so that no stranger's flood costs the others: how many bots one caller
may register, how often it may call the arena, and how many streams it may hold open.

- **Registrations** (``--register-rate`` a minute, ``--register-burst`` at once): each account is a row
  kept for good.
- **Calls** (``--caller-rate`` a second, ``--caller-burst`` at once): every ``ArenaService`` call but
  ``RegisterBot``, a ``Seek`` or ``StreamEvents`` as it opens; each reads the store (the bot's key, a
  leaderboard, a profile, ratings), so a loop of them, or of ones with a wrong key, costs the arena.
- **Open streams** (``--caller-streams``): the ``Seek`` and ``StreamEvents`` streams one caller holds at
  once; each holds a ticket or a queue of events in memory for as long as it is open, and a bot may
  open any number of event streams.

A caller is who :mod:`kutnahora.plumbing.callers` says (an IPv4 address, an IPv6 /64, ``unix``); a call
carrying the admin token, or from a ``--quota-exempt`` caller, is not counted at all. A refusal is
``RESOURCE_EXHAUSTED`` with a ``RetryInfo``: ``RATE_LIMITED`` past a rate (:func:`rate_refusal`, shared
with the game server), ``QUOTA_EXCEEDED`` past the open streams; the first refusal of a caller by each
limit is logged at info, then at most one a minute, and at most 100 lines a minute from all callers
together (:class:`~kutnahora.plumbing.logs.RefusalLines`, the web front end's rule too; each line says how
many it left out).

The counts live where ``--quota-store`` says (:mod:`kutnahora.plumbing.quota_store`): each replica's
memory by default (the rate buckets of at most :data:`MAX_CALLERS` callers, the one heard from least
recently forgotten first; the open streams of the callers that hold some), so that a caller spread over N
replicas gets N times its allowance; or a Redis every replica shares, so that its allowance is the same
however many replicas it reaches (each replica counting in its memory while Redis cannot be reached).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from kutnahora.plumbing.callers import Caller, Callers, Network
from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.plumbing.logs import RefusalLines
from kutnahora.plumbing.quota_store import Buckets, Places, QuotaStore, rate_refusal

MAX_CALLERS = 10_000
"""Most callers whose registration and call rates are remembered at once."""

STREAMS_RETRY_SECONDS = 10.0
"""The RetryInfo delay of a caller that holds its open streams: a Seek ends when it is matched, an event
stream when its bot leaves."""

LOG_INTERVAL = 60.0
"""Seconds between two lines logged for the refusals of one caller by one limit."""


class ArenaQuotas:
    """The per-caller limits of one arena replica."""

    def __init__(
        self,
        *,
        register_rate: float,
        register_burst: int,
        caller_rate: float,
        caller_burst: int,
        caller_streams: int,
        exempt: tuple[str, ...],
        tokens: tuple[str, ...],
        log: Any,
        clock: Callable[[], float] = time.monotonic,
        max_callers: int = MAX_CALLERS,
        trusted_proxies: tuple[Network, ...] = (),
        store: QuotaStore | None = None,
    ) -> None:
        self.register_rate = register_rate  # per minute
        self.caller_rate = caller_rate  # per second
        self.caller_streams = caller_streams
        self.store = store if store is not None else QuotaStore()
        self._registrations = Buckets(
            self.store, "register_rate", register_rate / 60, register_burst, clock, max_keys=max_callers
        )
        self._calls = Buckets(
            self.store, "caller_rate", caller_rate, caller_burst, clock, max_keys=max_callers
        )
        self._callers = Callers(exempt, tokens, trusted_proxies)
        self._streams = Places(self.store, "caller_streams", caller_streams)
        self._lines = RefusalLines(LOG_INTERVAL, clock=clock)
        self._log = log

    def caller(self, peer: str, token: str | None, forwarded: Iterable[str] = ()) -> Caller:
        """The caller of a call from ``peer`` carrying ``token`` (or none) and, from a trusted proxy, the
        ``x-forwarded-for`` values ``forwarded``."""
        return self._callers.caller(peer, token, forwarded)

    async def count_registration(self, caller: Caller) -> None:
        """Count one RegisterBot call; RESOURCE_EXHAUSTED (RATE_LIMITED, with the delay until the caller's
        bucket holds one again) when the caller has none left."""
        refusal = await rate_refusal(
            self._registrations,
            caller,
            "register_rate",
            lambda key, wait: (
                f"registration refused: {key} asked to register more bots than its "
                f"{self.register_rate:g} per minute allow; try again in {wait:.1f} s"
            ),
        )
        if refusal is not None:
            raise self._logged(refusal, caller, "RegisterBot")

    async def count_call(self, caller: Caller, rpc: str) -> None:
        """Count one call of ``rpc`` (any but RegisterBot); RESOURCE_EXHAUSTED (RATE_LIMITED, with the
        delay until the caller's bucket holds a call again) when the caller has none left."""
        refusal = await rate_refusal(
            self._calls,
            caller,
            "caller_rate",
            lambda key, wait: (
                f"{rpc} refused: {key} made more calls to the arena than its {self.caller_rate:g} per "
                f"second allow; try again in {wait:.2f} s"
            ),
        )
        if refusal is not None:
            raise self._logged(refusal, caller, rpc)

    async def open_stream(self, caller: Caller, rpc: str) -> str | None:
        """Count the opening of a Seek or StreamEvents stream as a call (:meth:`count_call`) and take one
        of the caller's open streams: what to give :meth:`close_stream` when the stream ends (None for an
        exempt caller); RESOURCE_EXHAUSTED (QUOTA_EXCEEDED) when the caller holds ``caller_streams``
        already."""
        await self.count_call(caller, rpc)
        if caller.exempt:
            return None
        place = await self._streams.take(caller.key)
        if place is None:
            raise self._logged(self._streams_refusal(caller.key, rpc), caller, rpc)
        return place

    def close_stream(self, place: str | None) -> None:
        """Give back the open stream :meth:`open_stream` took."""
        if place is not None:
            self._streams.give(place)

    def streams(self, key: str) -> int:
        """The streams the caller ``key`` holds open through this replica."""
        return self._streams.held(key)

    def _streams_refusal(self, key: str, rpc: str) -> ServiceError:
        limit = self.caller_streams
        return exhausted(
            f"{rpc} refused: {key} already holds {limit} open Seek and StreamEvents streams, as many as one "
            "caller may; close one, then try again",
            "caller_streams",
            retry_after=STREAMS_RETRY_SECONDS,
            metadata={"quota": "caller_streams", "limit": str(limit), "caller": key},
        )

    def _logged(self, refusal: ServiceError, caller: Caller, rpc: str) -> ServiceError:
        """Log a refusal at info, as :class:`~kutnahora.plumbing.logs.RefusalLines` allows: the first of
        this caller and limit in :data:`LOG_INTERVAL` seconds, and at most 100 lines in that time from all
        callers together (each line says how many were left out)."""
        quota = refusal.metadata["quota"]
        counts = self._lines.take(caller.key, quota)
        if counts is not None:
            self._log.info(
                "caller refused", detail=refusal.message, caller=caller.key, quota=quota, rpc=rpc, **counts
            )
        return refusal
