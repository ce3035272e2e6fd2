"""The game server's own messages: summaries, decision records, clocks, results, statuses and refusals.

The game (:class:`kutnahora.server.game.LiveGame`) speaks engine values and domain records only; the
conversions of engine values are :mod:`kutnahora.wire`'s, and the observation a seat is sent is
:mod:`kutnahora.wire.seat_observation`'s. This module builds what is the server's: a game's summary, its
records and clock, the Play stream's acceptances and refusals (with their ``RejectReason``), and the
components answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from google.protobuf import duration_pb2, timestamp_pb2

from kutnahora.engine import GameOptions
from kutnahora.engine import components_hash as engine_components_hash
from kutnahora.engine.components import ComponentSet
from kutnahora.plumbing.errors import ServiceError
from kutnahora.plumbing.status import REJECT_REASONS
from kutnahora.server.config import ClockConfig
from kutnahora.server.records import (
    AppliedDecision,
    ClockReading,
    DecisionSource,
    GameStatus,
)
from kutnahora.server.store import GameRow, SeatRow, result_from_json
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from kutnahora.wire import (
    components_to_wire,
    decision_payload,
    game_options_to_wire,
    result_to_wire,
)
from kutnahora.wire.encoder import embed
from kutnahora.wire.values import DECISION_KIND, enum_table

if TYPE_CHECKING:
    from kutnahora.server.game import LiveGame


# --- Results, times and durations ---------------------------------------------------------------------


def stored_result_to_wire(data: dict[str, Any]) -> game_pb2.GameResult:
    """The wire result of a result kept by the store."""
    result, resigned = result_from_json(data)
    return result_to_wire(result, resigned)


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    """A wire timestamp of a Unix time in seconds."""
    whole = int(seconds)
    return timestamp_pb2.Timestamp(seconds=whole, nanos=int((seconds - whole) * 1e9))


def duration_ms(milliseconds: int) -> duration_pb2.Duration:
    """A wire duration of a number of milliseconds."""
    return duration_pb2.Duration(seconds=milliseconds // 1000, nanos=(milliseconds % 1000) * 1_000_000)


# --- Statuses, sources and refusals ---------------------------------------------------------------------

STATUS, STATUS_BACK = enum_table(GameStatus, game_pb2.GameStatus, "GAME_STATUS_")
SOURCE = enum_table(DecisionSource, game_pb2.DecisionSource, "DECISION_SOURCE_")[0]


def reject_reason(error: ServiceError) -> Any:
    """The ``RejectReason`` of a refusal."""
    return REJECT_REASONS[error.reason]


def rejected_message(error: ServiceError, version: int) -> bytes:
    """A Play stream's ``DecisionRejected`` for a refusal, at the game's current version."""
    rejected = play_service_pb2.DecisionRejected(
        reason=reject_reason(error), code=error.code.value[0], message=error.message, version=version
    )
    return play_service_pb2.PlayResponse(rejected=rejected).SerializeToString()


def accepted_message(record: AppliedDecision) -> bytes:
    """A Play stream's ``DecisionAccepted`` for an applied decision."""
    accepted = play_service_pb2.DecisionAccepted(version=record.version, next_version=record.version + 1)
    return play_service_pb2.PlayResponse(accepted=accepted).SerializeToString()


# --- Games: summaries, records, clocks and results -------------------------------------------------------


def clock_settings(clock: ClockConfig) -> game_pb2.ClockSettings:
    """A game's clock as wire settings."""
    return game_pb2.ClockSettings(
        decision_time=duration_ms(clock.decision_ms),
        time_bank=duration_ms(clock.bank_ms),
        max_strikes=clock.max_strikes,
        disabled=not clock.enabled,
    )


def clock_message(reading: ClockReading) -> game_pb2.Clock:
    """The running clock of the pending decision."""
    return game_pb2.Clock(
        seat=reading.seat,
        deadline=timestamp(reading.deadline),
        time_bank_left=duration_ms(reading.bank_ms),
        decision_time=duration_ms(reading.decision_ms),
    )


def result_message(game: LiveGame) -> game_pb2.GameResult | None:
    """A game's final result, once finished."""
    result = game.result()
    return None if result is None else result_to_wire(result, game.resigned())


def summary(game: LiveGame) -> game_pb2.GameSummary:
    """A loaded game's summary. It never holds the seed."""
    wire = game_pb2.GameSummary(
        game_id=game.game_id,
        options=game_options_to_wire(game.options),
        clock=clock_settings(game.clock),
        status=STATUS[game.status],
        version=game.state.version,
        created_at=timestamp(game.created_at),
        updated_at=timestamp(game.updated_at),
        rules_version=game.rules_version,
        label=game.label,
        abandon_reason=game.abandon_reason,
        components_hash=game.components_hash,
    )
    for seat in game.seats:
        wire.seats.add(
            seat=seat.seat,
            joined=seat.joined,
            name=seat.name,
            resigned=seat.resigned,
            strikes=seat.strikes,
            replaced=game.replaced(seat.seat),
            time_bank_left=duration_ms(seat.bank_ms),
        )
    pending = game.state.pending
    if pending is not None and not game.ended:
        wire.pending_seat = pending.seat
        wire.pending_kind = DECISION_KIND[pending.kind]
    result = result_message(game)
    if result is not None:
        wire.result.CopyFrom(result)
    return wire


def row_summary(row: GameRow, seats: Sequence[SeatRow]) -> game_pb2.GameSummary:
    """The summary of a game that is not loaded, from its store record."""
    clock = ClockConfig.from_json(row.clock)
    status = STATUS.get(GameStatus(row.status), game_pb2.GAME_STATUS_UNSPECIFIED)
    wire = game_pb2.GameSummary(
        game_id=row.game_id,
        options=game_options_to_wire(
            GameOptions(row.players, row.events, row.guild_setup_card, row.mine_setup_card)
        ),
        clock=clock_settings(clock),
        status=status,
        version=row.version,
        created_at=timestamp(row.created_at),
        updated_at=timestamp(row.updated_at or row.created_at),
        rules_version=row.rules_version,
        label=row.label,
        abandon_reason=row.abandon_reason,
        components_hash=row.components_hash,
    )
    by_seat = {s.seat: s for s in seats}
    for index in range(row.players):
        seat = by_seat.get(index, SeatRow(index))
        wire.seats.add(seat=index, joined=seat.joined, name=seat.name, resigned=seat.resigned)
    if row.result is not None:
        wire.result.CopyFrom(stored_result_to_wire(row.result))
    return wire


def record_message(record: AppliedDecision) -> game_pb2.DecisionRecord:
    """One decision of a game's history as a wire record."""
    return game_pb2.DecisionRecord(
        version=record.version,
        seat=record.seat,
        decision=decision_payload(record.option),
        text=record.text,
        source=SOURCE[record.source],
        applied_at=timestamp(record.applied_at),
        think_time=duration_ms(record.think_ms),
        kind=DECISION_KIND[record.kind] if record.kind is not None else game_pb2.DECISION_KIND_UNSPECIFIED,
    )


def components_response(components: ComponentSet, rules_version: int) -> bytes:
    """The serialised ``GetComponentsResponse`` (built once by the server and reused)."""
    tail = game_service_pb2.GetComponentsResponse(
        rules_version=rules_version, components_hash=engine_components_hash(components)
    ).SerializeToString()
    body = components_to_wire(components).SerializeToString()
    return embed(game_service_pb2.GetComponentsResponse.COMPONENTS_FIELD_NUMBER, body) + tail
