"""Who waits on a game's changes: watchers, woken on every change, and Play streams, woken only when
their seat comes to owe the decision (or on a change of status or seats), so that the streams of the other
seats are not woken for nothing."""

from __future__ import annotations

import asyncio


class Subscribers:
    """The events a game sets when it changes."""

    __slots__ = ("_by_seat", "_watchers")

    def __init__(self) -> None:
        self._watchers: set[asyncio.Event] = set()
        self._by_seat: dict[int, set[asyncio.Event]] = {}

    def subscribe(self, seat: int | None = None) -> asyncio.Event:
        """An event set on every change (without a seat) or when ``seat`` comes to owe the decision."""
        event = asyncio.Event()
        if seat is None:
            self._watchers.add(event)
        else:
            self._by_seat.setdefault(seat, set()).add(event)
        return event

    def unsubscribe(self, event: asyncio.Event) -> None:
        """Stop waking ``event``."""
        self._watchers.discard(event)
        for events in self._by_seat.values():
            events.discard(event)

    def waiting(self, seat: int) -> bool:
        """Whether a Play stream of ``seat`` waits."""
        return bool(self._by_seat.get(seat))

    def playing(self) -> list[int]:
        """The seats with a Play stream waiting."""
        return [seat for seat, events in self._by_seat.items() if events]

    def notify(self, seat: int | None = None) -> None:
        """Wake every subscriber, or (after a new decision) the watchers and the seat that owes it."""
        for event in self._watchers:
            event.set()
        if seat is None:
            for events in self._by_seat.values():
                for event in events:
                    event.set()
        else:
            for event in self._by_seat.get(seat, ()):
                event.set()
