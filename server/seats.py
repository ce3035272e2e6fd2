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

The tables are bounded: a bucket, and what a replica last heard of a seat's shared bucket, is kept for at
most :data:`MAX_SEATS` seats (the least recently used beyond are forgotten, which only a crowd of that
many seats at once can arrange), and a stream's entry lives while it plays.

**Across replicas.** Without a shared store (``--quota-store memory``) each replica keeps these for
itself: a seat may hold one Play stream on each replica, and has its rates on each. With a shared store
(``--quota-store redis://…``, :mod:`kutnahora.plumbing.quota_store`) they hold across every replica that
shares it:

- one Play stream per seat: each opening is announced to every replica (:mod:`.takeovers`), and the
  replica that holds an older stream of the seat ends it as above, within a pub/sub message's time;
- the rate of openings is one bucket in Redis, taken from by the same script that announces an opening;
- the rate of calls is one bucket in Redis, which a seat's reads, watches and resignations take from as
  they come. ``SubmitDecision`` does not ask Redis before it runs, since every decision passes this check:
  it takes from this replica's own bucket (as without a shared store), and an accepted decision gives its
  token back there and never reaches Redis. A decision that is not accepted is **settled** before its refusal
  is sent: charged to the seat's bucket in Redis even when that holds nothing (the seat then owes the
  tokens), and this replica remembers until when, as Redis answered, that bucket holds no token, and
  refuses the seat's decisions until then. So over any ``t`` seconds the calls a seat makes that are not
  accepted decisions, across N replicas, are at most ``burst + rate * t + N * k``, where ``k`` is the
  most decisions that will not be accepted the seat has in flight at once on one replica (1 for a bot
  that waits for each answer; never more than ``burst``): each replica lets at most that many through
  before it hears that the allowance is spent, and lets no more through until the bucket has made up
  every token charged to it before. Without the shared store, or while it cannot be reached, each
  replica counts for itself as above (counted and logged by the store).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

import grpc

from kutnahora.plumbing.errors import ServiceError, exhausted
from kutnahora.plumbing.quota_store import Buckets, QuotaStore
from kutnahora.server.takeovers import Takeovers

MAX_SEATS = 20_000
"""Most seats whose rates are remembered at once."""

SeatKey = tuple[str, int]
"""A seat: its game's id and its number."""


class Holder:
    """What holds a seat's Play stream: told to end when a newer stream takes the seat over."""

    def take_over(self) -> None:  # pragma: no cover - the interface
        raise NotImplementedError


@dataclass(slots=True)
class _Held:
    holder: Holder
    number: int | None  # the opening's number across replicas (None: not announced)


@dataclass(slots=True)
class _Opening:
    pending: int = 0  # openings of the seat being announced from this replica
    newest: int = 0  # the highest number another replica announced for the seat meanwhile


class SeatLimits:
    """The per-seat rules of one server: one Play stream, the rate of its openings, the rate of calls,
    counted in ``store`` (this replica's memory by default, else shared by the replicas)."""

    def __init__(
        self,
        rate: float,
        burst: int,
        stream_rate: float,
        stream_burst: int,
        clock: Callable[[], float] = time.monotonic,
        store: QuotaStore | None = None,
    ) -> None:
        self.store = store if store is not None else QuotaStore()
        self.calls = Buckets(self.store, "seat_rate", rate, burst, clock, max_keys=MAX_SEATS)
        self.openings = Buckets(self.store, "seat_streams", stream_rate, stream_burst, clock, MAX_SEATS)
        self.takeovers = Takeovers(self.store, self._heard, self._resync)
        self._clock = clock
        self._streams: dict[SeatKey, _Held] = {}
        self._opening: dict[SeatKey, _Opening] = {}
        self._spent: OrderedDict[str, float] = OrderedDict()  # seat -> until when its shared bucket is empty
        self.replaced = 0  # streams that another stream of their seat took over

    async def start(self) -> None:
        """Hear the Play streams other replicas open (with a shared store)."""
        await self.takeovers.start()

    async def close(self) -> None:
        """Stop hearing them."""
        await self.takeovers.close()

    # --- the rate of calls ----------------------------------------------------------------------------

    async def check_call(self, game_id: str, seat: int, rpc: str) -> None:
        """Count one unary call for the seat (other than SubmitDecision: :meth:`check_decision`);
        RESOURCE_EXHAUSTED (RATE_LIMITED) past its rate."""
        key = _key(game_id, seat)
        wait = await self.calls.take(key)
        if self.store.shared:
            self._learn(key, wait)
        if wait > 0:
            raise self._call_refusal(game_id, seat, rpc, wait)

    def check_decision(self, game_id: str, seat: int) -> None:
        """Count a SubmitDecision for the seat on this replica's own bucket (and, with a shared store, what
        this replica last heard of the seat's bucket there); RESOURCE_EXHAUSTED (RATE_LIMITED) past its
        rate. Then :meth:`accepted`, or :meth:`not_accepted`."""
        key = _key(game_id, seat)
        wait = self.calls.local.take(key)
        if wait <= 0 and self._spent:
            until = self._spent.get(key)
            if until is not None:
                wait = until - self._clock()
                if wait > 0:
                    self.calls.local.give_back(key)  # refused: nothing taken
                else:
                    del self._spent[key]
        if wait > 0:
            raise self._call_refusal(game_id, seat, "SubmitDecision", wait)

    def accepted(self, game_id: str, seat: int) -> None:
        """An accepted decision: the call that made it is not counted."""
        self.calls.local.give_back(_key(game_id, seat))

    async def not_accepted(self, game_id: str, seat: int) -> None:
        """A decision that was not accepted: with a shared store, charge it to the seat's bucket there
        (it was counted on this replica only), and remember until when that bucket holds no token."""
        if not self.store.shared:
            return
        key = _key(game_id, seat)
        wait = await self.calls.charge(key)
        if wait is not None:
            self._learn(key, wait)

    def _learn(self, key: str, wait: float) -> None:
        """What the shared store answered of a seat's bucket: empty for ``wait`` seconds (0: not empty)."""
        if wait <= 0:
            self._spent.pop(key, None)
            return
        self._spent[key] = self._clock() + wait
        self._spent.move_to_end(key)
        while len(self._spent) > MAX_SEATS:
            self._spent.popitem(last=False)

    def _call_refusal(self, game_id: str, seat: int, rpc: str, wait: float) -> ServiceError:
        return exhausted(
            f"{rpc} refused: seat {seat} of game {game_id} made more calls than its "
            f"{self.calls.rate:g} per second allow (an accepted decision is not counted); try again in "
            f"{wait:.2f} s",
            "seat_rate",
            retry_after=wait,
            metadata={"quota": "seat_rate", "game_id": game_id, "seat": str(seat)},
        )

    # --- one Play stream ------------------------------------------------------------------------------

    async def open_stream(self, game_id: str, seat: int, holder: Holder) -> None:
        """A Play stream for the seat starts: the stream that held it is taken over, on this replica or
        (with a shared store) another. RESOURCE_EXHAUSTED (RATE_LIMITED) when the seat opened streams
        faster than its rate (nothing taken over then). A stream that a newer one, opened on another
        replica, overtook while this one was announced is taken over at once."""
        key = (game_id, seat)
        name = _key(game_id, seat)
        number: int | None = None
        newest = 0
        if self.takeovers.shared:
            opening = self._opening.setdefault(key, _Opening())
            opening.pending += 1
            try:
                wait, number = await self.takeovers.announce(name, self.openings)
            finally:
                opening.pending -= 1
                newest = opening.newest
                if opening.pending == 0:
                    del self._opening[key]
        else:
            wait = await self.openings.take(name)
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
        if number is not None and (
            newest > number or (before is not None and before.number is not None and before.number > number)
        ):
            self.replaced += 1  # overtaken while it was announced
            holder.take_over()
            return
        self._streams[key] = _Held(holder, number)
        if before is not None and before.holder is not holder:
            self.replaced += 1
            before.holder.take_over()

    def _heard(self, name: str, number: int) -> None:
        """Another replica announced a stream of seat ``name`` numbered ``number``: an older one here ends."""
        game_id, _, seat_text = name.rpartition("/")
        if not seat_text.isdigit():
            return
        key = (game_id, int(seat_text))
        opening = self._opening.get(key)
        if opening is not None:
            opening.newest = max(opening.newest, number)
        held = self._streams.get(key)
        if held is not None and (held.number is None or held.number < number):
            del self._streams[key]
            self.replaced += 1
            held.holder.take_over()

    async def _resync(self) -> None:
        """Once listening again: end the streams whose seats a newer opening took while nobody heard."""
        held = [(key, entry) for key, entry in self._streams.items() if entry.number is not None]
        if not held:
            return
        numbers = await self.takeovers.holders([_key(*key) for key, _ in held])
        for (key, entry), newest in zip(held, numbers, strict=True):
            assert entry.number is not None
            if newest is not None and newest > entry.number and self._streams.get(key) is entry:
                del self._streams[key]
                self.replaced += 1
                entry.holder.take_over()

    def holds_stream(self, game_id: str, seat: int) -> bool:
        """Whether a Play stream holds the seat on this replica now."""
        return (game_id, seat) in self._streams

    def close_stream(self, game_id: str, seat: int, holder: Holder) -> None:
        """A Play stream ended (nothing changes when a newer one holds the seat already)."""
        key = (game_id, seat)
        held = self._streams.get(key)
        if held is not None and held.holder is holder:
            del self._streams[key]

    def streams(self) -> int:
        """Seats holding a Play stream on this replica now."""
        return len(self._streams)


def _key(game_id: str, seat: int) -> str:
    """A seat's key in the rate buckets and the announcements."""
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
