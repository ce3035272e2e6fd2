"""A game's clock: what a decision costs its seat, the timer of the pending decision, and what plays when
it runs out.

A seat has ``decision_ms`` for each decision and a bank for overtime. When both run out, the seat's
default decision is applied (:func:`default_option`) and the seat takes a strike; a seat that struck out
``max_strikes`` times, or resigned, is played by a random policy (:func:`policy_option`), reproducible
from the game's seed and version. :class:`TurnTimer` holds the pending decision's timer and the automatic
decisions it started; the game says what to apply (:meth:`kutnahora.server.game.LiveGame.start`).
"""

from __future__ import annotations

import asyncio
import contextvars
import random
import time
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from kutnahora.engine import Option
from kutnahora.engine.options import PlayCard, Skip
from kutnahora.server.config import ClockConfig
from kutnahora.server.records import ClockReading, DecisionSource, SeatState

Automatic = Callable[[int, DecisionSource], Coroutine[Any, Any, None]]
"""What applies an automatic decision: given the version it is for and its source (timeout or policy)."""


def default_option(options: Sequence[Option]) -> Option:
    """The decision applied when a clock runs out.

    Skip where it is listed, else the first "play a card for no effect" option, else the first option.
    """
    for option in options:
        if isinstance(option, Skip):
            return option
    for option in options:
        if isinstance(option, PlayCard) and option.action is None:
            return option
    return options[0]


def policy_option(seed: int, version: int, options: Sequence[Option]) -> Option:
    """The random policy's choice: uniform over the listed options, reproducible from seed and version."""
    return random.Random(f"{seed}:{version}").choice(list(options))


def replaced(seat: SeatState, clock: ClockConfig) -> bool:
    """Whether the random policy plays this seat (it resigned, or struck out on the clock)."""
    return seat.resigned or (clock.enabled and seat.strikes >= clock.max_strikes)


def charge_clock(seat: SeatState, source: DecisionSource, think_ms: int, clock: ClockConfig) -> None:
    """Charge a decision to its seat's clock: overtime draws on the bank; a timeout empties it and strikes."""
    if not clock.enabled:
        return
    if source is DecisionSource.TIMEOUT:
        seat.bank_ms = 0
        seat.strikes += 1
    elif source is DecisionSource.SEAT:
        seat.bank_ms = max(0, seat.bank_ms - max(0, think_ms - clock.decision_ms))


class TurnTimer:
    """When the pending decision was put to its seat, the timer that applies an automatic decision, and
    the tasks applying one. Runs on the event loop."""

    __slots__ = ("_tasks", "_timer", "started")

    def __init__(self) -> None:
        self.started = asyncio.get_running_loop().time()
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def restart(self) -> None:
        """A new decision is pending from now: the timer of the last one is stopped."""
        self.cancel()
        self.started = asyncio.get_running_loop().time()

    def schedule(self, when: float, automatic: Automatic, version: int, source: DecisionSource) -> None:
        """Run ``automatic(version, source)`` in a task at loop time ``when``."""
        # A fresh context: the automatic move's log lines must not carry the request that scheduled it.
        self._timer = asyncio.get_running_loop().call_at(
            when, self._spawn, automatic, version, source, context=contextvars.Context()
        )

    def _spawn(self, automatic: Automatic, version: int, source: DecisionSource) -> None:
        self._timer = None
        task = asyncio.get_running_loop().create_task(automatic(version, source))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def think_ms(self) -> int:
        """Milliseconds since the pending decision was put to its seat."""
        return int((asyncio.get_running_loop().time() - self.started) * 1000)

    def reading(self, seat: int, bank_ms: int, clock: ClockConfig) -> ClockReading:
        """The running clock of the pending decision, owed by ``seat`` with ``bank_ms`` in its bank."""
        elapsed = asyncio.get_running_loop().time() - self.started
        deadline = time.time() - elapsed + (clock.decision_ms + bank_ms) / 1000
        return ClockReading(seat, deadline, bank_ms, clock.decision_ms)

    def cancel(self) -> None:
        """Stop the timer (a task already applying a decision goes on)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    def close(self) -> None:
        """Stop the timer and every task applying an automatic decision."""
        self.cancel()
        for task in list(self._tasks):
            task.cancel()
