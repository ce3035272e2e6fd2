"""The server's domain records: a game's status, who made a decision, a seat as the server tracks it, one
decision of a game's history, a reading of the running clock, and an answer naming a listed option.

They hold engine values and plain Python values only. :class:`kutnahora.server.game.LiveGame` returns them;
:mod:`kutnahora.server.messages` turns them into wire messages, and the stores keep them as rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from functools import lru_cache

from kutnahora.engine import Event, Option, option_text
from kutnahora.engine.options import DecisionKind


class GameStatus(StrEnum):
    """Where a game is in its life. The values are the names the stores keep."""

    WAITING = "waiting"
    ACTIVE = "active"
    FINISHED = "finished"
    ABANDONED = "abandoned"

    @property
    def ended(self) -> bool:
        """Whether the game is over (finished or abandoned): it changes no more."""
        return self in (GameStatus.FINISHED, GameStatus.ABANDONED)


UNFINISHED: tuple[GameStatus, ...] = (GameStatus.WAITING, GameStatus.ACTIVE)
"""The statuses of a game that has not ended."""


class DecisionSource(StrEnum):
    """Who made a decision: the seat's client, its clock running out, or the random policy."""

    SEAT = "seat"
    TIMEOUT = "timeout"
    POLICY = "policy"


@dataclass(frozen=True, slots=True)
class ListedIndex:
    """An answer naming an option by its position in the pending decision's list (the wire's
    ``option_index``); the game resolves it against the options listed at the answered version."""

    index: int


Answer = Option | ListedIndex
"""What a seat submits: an engine option, or the index of a listed one."""


@lru_cache(maxsize=20_000)
def canonical_text(option: Option) -> str:
    """The canonical text of an option (the store's and the logs' form), computed once per distinct option."""
    return option_text(option)


@dataclass(slots=True)
class SeatState:
    """A seat as the server tracks it: who holds it, its clock and whether the policy plays it."""

    seat: int
    name: str = ""
    token_hash: str = ""
    resigned: bool = False
    joined_at: float = 0.0
    strikes: int = 0
    bank_ms: int = 0

    @property
    def joined(self) -> bool:
        """Whether a client has taken the seat."""
        return bool(self.token_hash)


@dataclass(slots=True)
class AppliedDecision:
    """One decision of the history. Read from outside the history's detail window, it has no options or
    events (:mod:`kutnahora.server.history`)."""

    version: int  # the state version it was applied at
    seat: int
    option: Option
    text: str
    source: DecisionSource
    think_ms: int
    applied_at: float
    game_over: bool
    options: tuple[Option, ...] | None = None  # the options listed at that version
    events: tuple[Event, ...] | None = None
    kind: DecisionKind | None = None  # what the decision answered


@dataclass(frozen=True, slots=True)
class ClockReading:
    """The running clock of the pending decision: whose it is, when it runs out (Unix seconds), the seat's
    bank left and the time each decision gets before the bank is drawn on."""

    seat: int
    deadline: float
    bank_ms: int
    decision_ms: int
