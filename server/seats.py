"""What one seat may hold and do: one Play stream at a time, a rate of stream openings, a rate of calls.

A seat has **one Play stream**. A second stream opened for the same seat (with its token) takes the seat
over: the older stream ends at once with ``ABORTED``, the reason ``STREAM_REPLACED`` and a sentence naming
the game and the seat, and the newer one plays on. A bot that reconnects is therefore never locked out by
its own half-dead stream, and a seat never holds more than one of the server's ``--max-players`` places:
a bot cannot take them all through its own seat. Openings of a seat's Play streams have a rate of their
own (``--seat-stream-rate``, ``--seat-stream-burst``), so that two processes taking a seat from each other
in a loop cannot churn the server; past it an opening is refused ``RESOURCE_EXHAUSTED`` (``RATE_LIMITED``,
``ErrorInfo.metadata["quota"]`` ``seat_streams``) with a ``RetryInfo``, and the stream that holds the
seat plays on.

A seat's unary calls (``GetObservation`` and ``WatchGame`` naming the seat, ``GetGame`` carrying its
token, ``SubmitDecision``, ``ResignSeat``) have a rate too (``--seat-rate``, ``--seat-burst``); an
accepted decision is given back its token, so a seat playing over unary calls is never slowed by its own
moves, while a loop of reads is. Past it a call is refused ``RESOURCE_EXHAUSTED`` (``RATE_LIMITED``,
``quota`` ``seat_rate``) with a ``RetryInfo``. Both rates count a seat whoever calls for it: the
exemption of loopback callers from the per-caller quotas does not apply, so a tournament runner's hosted
bots are bounded seat by seat.

Both tables are bounded: a bucket is kept for at most :data:`MAX_SEATS` seats (the least recently used
beyond are forgotten, which only a crowd of that many seats at once can arrange), and a stream's entry
lives while it plays.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc

from kutnahora.plumbing.callers import RateLimiter
from kutnahora.plumbing.errors import ServiceError, exhausted

MAX_SEATS = 20_000
"""Most seats whose rates are remembered at once."""

SeatKey = tuple[str, int]
"""A seat: its game's id and its number."""


class Holder:
    """What holds a seat's Play stream: told to end when a newer stream takes the seat over."""

    def take_over(self) -> None:  # pragma: no cover - the interface
        raise NotImplementedError


class SeatLimits:
    """The per-seat rules of one server: one Play stream, the rate of its openings, the rate of calls."""

    def __init__(
        self,
        rate: float,
        burst: int,
        stream_rate: float,
        stream_burst: int,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.calls = RateLimiter(rate, burst, clock, MAX_SEATS)
        self.openings = RateLimiter(stream_rate, stream_burst, clock, MAX_SEATS)
        self._streams: dict[SeatKey, Holder] = {}
        self.replaced = 0  # streams that another stream of their seat took over

    def check_call(self, game_id: str, seat: int, rpc: str) -> None:
        """Count one unary call for the seat; RESOURCE_EXHAUSTED (RATE_LIMITED) past its rate."""
        wait = self.calls.take(_key(game_id, seat))
        if wait > 0:
            raise exhausted(
                f"{rpc} refused: seat {seat} of game {game_id} made more calls than its "
                f"{self.calls.rate:g} per second allow (an accepted decision is not counted); try again in "
                f"{wait:.2f} s",
                "seat_rate",
                retry_after=wait,
                metadata={"quota": "seat_rate", "game_id": game_id, "seat": str(seat)},
            )

    def accepted(self, game_id: str, seat: int) -> None:
        """An accepted decision: the call that made it is not counted."""
        self.calls.give_back(_key(game_id, seat))

    def open_stream(self, game_id: str, seat: int, holder: Holder) -> None:
        """A Play stream for the seat starts: the stream that held it is taken over. RESOURCE_EXHAUSTED
        (RATE_LIMITED) when the seat opened streams faster than its rate (nothing taken over then)."""
        key = (game_id, seat)
        wait = self.openings.take(_key(game_id, seat))
        if wait > 0:
            raise exhausted(
                f"a Play stream for seat {seat} of game {game_id} refused: the seat opened Play streams "
                f"faster than its {self.openings.rate:g} per second allow (each new one takes the seat "
                f"over from the one before); try again in {wait:.2f} s",
                "seat_rate",
                retry_after=wait,
                metadata={"quota": "seat_streams", "game_id": game_id, "seat": str(seat)},
            )
        before = self._streams.get(key)
        self._streams[key] = holder
        if before is not None and before is not holder:
            self.replaced += 1
            before.take_over()

    def holds_stream(self, game_id: str, seat: int) -> bool:
        """Whether a Play stream holds the seat now."""
        return (game_id, seat) in self._streams

    def close_stream(self, game_id: str, seat: int, holder: Holder) -> None:
        """A Play stream ended (nothing changes when a newer one holds the seat already)."""
        key = (game_id, seat)
        if self._streams.get(key) is holder:
            del self._streams[key]

    def streams(self) -> int:
        """Seats holding a Play stream now."""
        return len(self._streams)


def _key(game_id: str, seat: int) -> str:
    """A seat's key in the rate buckets."""
    return f"{game_id}/{seat}"


def replaced_refusal(game_id: str, seat: int) -> ServiceError:
    """How a Play stream ends when a newer stream of its seat takes it over."""
    return ServiceError(
        grpc.StatusCode.ABORTED,
        f"another Play stream for seat {seat} of game {game_id} took over; this one has ended (a seat has "
        "one Play stream at a time: the newest plays)",
        "stream_replaced",
        metadata={"game_id": game_id, "seat": str(seat)},
    )
