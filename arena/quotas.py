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

Everything is per replica, in memory: the rate buckets of at most :data:`MAX_CALLERS` callers (the one
heard from least recently is forgotten first), the open streams of the callers that hold some.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Any

from kutnahora.plumbing.callers import Caller, Callers, Network, RateLimiter, rate_refusal
from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.plumbing.holds import Holds
from kutnahora.plumbing.logs import RefusalLines

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
    ) -> None:
        self.register_rate = register_rate  # per minute
        self.caller_rate = caller_rate  # per second
        self.caller_streams = caller_streams
        self._registrations = RateLimiter(register_rate / 60, register_burst, clock, max_keys=max_callers)
        self._calls = RateLimiter(caller_rate, caller_burst, clock, max_keys=max_callers)
        self._callers = Callers(exempt, tokens, trusted_proxies)
        self._streams: Holds[str] = Holds(caller_streams)  # by caller key
        self._lines = RefusalLines(LOG_INTERVAL, clock=clock)
        self._log = log

    def caller(self, peer: str, token: str | None, forwarded: Iterable[str] = ()) -> Caller:
        """The caller of a call from ``peer`` carrying ``token`` (or none) and, from a trusted proxy, the
        ``x-forwarded-for`` values ``forwarded``."""
        return self._callers.caller(peer, token, forwarded)

    def count_registration(self, caller: Caller) -> None:
        """Count one RegisterBot call; RESOURCE_EXHAUSTED (RATE_LIMITED, with the delay until the caller's
        bucket holds one again) when the caller has none left."""
        refusal = rate_refusal(
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

    def count_call(self, caller: Caller, rpc: str) -> None:
        """Count one call of ``rpc`` (any but RegisterBot); RESOURCE_EXHAUSTED (RATE_LIMITED, with the
        delay until the caller's bucket holds a call again) when the caller has none left."""
        refusal = rate_refusal(
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

    def open_stream(self, caller: Caller, rpc: str) -> None:
        """Count the opening of a Seek or StreamEvents stream as a call (:meth:`count_call`) and take one
        of the caller's open streams, given back by :meth:`close_stream`; RESOURCE_EXHAUSTED
        (QUOTA_EXCEEDED) when the caller holds ``caller_streams`` already."""
        self.count_call(caller, rpc)
        if caller.exempt:
            return
        if not self._streams.take(caller.key):
            raise self._logged(self._streams_refusal(caller.key, rpc), caller, rpc)

    def close_stream(self, caller: Caller) -> None:
        """Give back the open stream :meth:`open_stream` took."""
        if caller.exempt:
            return
        self._streams.give(caller.key)

    def streams(self, key: str) -> int:
        """The streams the caller ``key`` holds open on this replica."""
        return self._streams.held(key)

    def _streams_refusal(self, key: str, rpc: str) -> ServiceError:
        limit = self.caller_streams
        return exhausted(
            f"{rpc} refused: {key} already holds {limit} open Seek and StreamEvents streams on this arena, "
            "as many as one caller may; close one, then try again",
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
