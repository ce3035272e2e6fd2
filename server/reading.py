"""The game server's reading of requests: an answer, a game's clock, a listing's status filter.

Malformed wire input raises :class:`kutnahora.wire.Malformed`, which the service answers with
``INVALID_ARGUMENT``; whether what a well-formed request names exists or is allowed is for the game and the
hub to say. The conversions of engine values are :mod:`kutnahora.wire`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from google.protobuf import duration_pb2

from kutnahora.engine import parse_option
from kutnahora.plumbing.errors import clip
from kutnahora.server.config import ClockConfig
from kutnahora.server.messages import STATUS_BACK
from kutnahora.server.records import (
    Answer,
    GameStatus,
    ListedIndex,
)
from kutnahora.v1 import game_pb2
from kutnahora.wire import (
    Malformed,
    decision_to_option,
)
from kutnahora.wire.values import from_wire_enum

if TYPE_CHECKING:
    pass


def answer_from_wire(answer: game_pb2.Answer) -> Answer:
    """What a wire answer names: an engine option, or the index of a listed option.

    Raises :class:`Malformed` for an answer that cannot be read, whatever the options are; whether what it
    names is listed is the game's to say (:meth:`kutnahora.server.game.LiveGame.submit`).
    """
    which = answer.WhichOneof("answer")
    if which is None:
        raise Malformed("the answer sets none of option_index, decision or option_text")
    if which == "option_index":
        index = answer.option_index
        if index < 0:
            raise Malformed(f"option_index must not be negative, got {index}")
        return ListedIndex(index)
    if which == "decision":
        return decision_to_option(answer.decision)
    text = answer.option_text
    try:
        return parse_option(text)
    except ValueError as error:
        raise Malformed(f"option_text {clip(text)!r} is not an option's text ({clip(str(error))})") from None


def clock_from_wire(wire: game_pb2.ClockSettings, defaults: ClockConfig) -> ClockConfig:
    """A game's clock from the request, with the server's defaults for what is unset."""
    if wire.disabled:
        return ClockConfig(defaults.decision_ms, defaults.bank_ms, defaults.max_strikes, enabled=False)
    decision_ms = to_ms(wire.decision_time) if wire.HasField("decision_time") else defaults.decision_ms
    bank_ms = to_ms(wire.time_bank) if wire.HasField("time_bank") else defaults.bank_ms
    if decision_ms <= 0:
        raise Malformed(f"clock.decision_time must be positive, got {decision_ms} ms")
    if bank_ms < 0:
        raise Malformed(f"clock.time_bank must not be negative, got {bank_ms} ms")
    day = 86_400_000
    if decision_ms > day or bank_ms > day:
        raise Malformed("clock.decision_time and clock.time_bank must each be at most one day")
    if wire.max_strikes < 0:
        raise Malformed(f"clock.max_strikes must not be negative, got {wire.max_strikes}")
    # A game that sets any clock field asks for a clock, even on a server whose games have none by default.
    asked = wire.HasField("decision_time") or wire.HasField("time_bank") or wire.max_strikes > 0
    return ClockConfig(
        decision_ms, bank_ms, wire.max_strikes or defaults.max_strikes, enabled=defaults.enabled or asked
    )


def to_ms(duration: duration_pb2.Duration) -> int:
    """A wire duration in whole milliseconds."""
    return duration.seconds * 1000 + duration.nanos // 1_000_000


def status_from_wire(number: int) -> GameStatus | None:
    """The game status a listing filter names (None: any); raises :class:`Malformed` for an unknown one."""
    if number == game_pb2.GAME_STATUS_UNSPECIFIED:
        return None
    return from_wire_enum(STATUS_BACK, number, "status")
