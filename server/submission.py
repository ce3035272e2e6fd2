"""The checks of a seat's submission that are the game's and not the engine's: the game is active, the
seat is not played by the random policy, a listed index names a listed option, and an answer to a version
already played is an exact retry or stale.

Each refusal is a :class:`~kutnahora.plumbing.errors.ServiceError` with a sentence naming the game; the
rules themselves are the engine's to check (:func:`kutnahora.server.refusals.engine_refusal`).
"""

from __future__ import annotations

from collections.abc import Sequence

from kutnahora.engine import Option
from kutnahora.engine.options import PendingDecision
from kutnahora.plumbing.errors import ServiceError, precondition, stale
from kutnahora.server.records import Answer, AppliedDecision, GameStatus, ListedIndex, SeatState


def check_active(game_id: str, status: GameStatus, seats: Sequence[SeatState], abandon_reason: str) -> None:
    """Refuse a decision while the game waits for seats or after it was abandoned (the engine knows
    neither); a finished game is the engine's to refuse."""
    if status is GameStatus.WAITING:
        joined = sum(1 for s in seats if s.joined)
        raise precondition(
            f"game {game_id} is waiting for seats ({joined} of {len(seats)} joined)", "game_not_active"
        )
    if status is GameStatus.ABANDONED:
        raise precondition(
            f"game {game_id} was abandoned ({abandon_reason or 'no reason given'})", "game_not_active"
        )


def refuse_replaced(seat: SeatState) -> ServiceError:
    """The refusal of a seat that the random policy plays now."""
    why = "resigned" if seat.resigned else f"struck out ({seat.strikes} strikes)"
    return precondition(f"seat {seat.seat} {why}; the random policy plays it now", "not_your_turn")


def listed_option(answer: ListedIndex, pending: PendingDecision) -> Option:
    """The option at a listed index (the wire's way of naming one of the listed options)."""
    options = pending.options
    if answer.index >= len(options):
        raise precondition(
            f"option index {answer.index} is not listed: the pending decision has {len(options)} "
            "options" + (f" (0..{len(options) - 1})" if options else ""),
            "not_an_option",
        )
    return options[answer.index]


def answered_option(answer: Answer, listed: Sequence[Option]) -> Option | None:
    """The option an answer names among those ``listed`` at its version (None for an index past them)."""
    if isinstance(answer, ListedIndex):
        return listed[answer.index] if answer.index < len(listed) else None
    return answer


def already_answered(game_id: str, current: int, version: int, record: AppliedDecision) -> ServiceError:
    """The refusal of an answer to ``version``, which ``record`` answered already."""
    return stale(
        f"game {game_id} is at version {current}; version {version} was already answered "
        f"({record.text!r} by seat {record.seat}): read the new observation and answer its version"
    )
