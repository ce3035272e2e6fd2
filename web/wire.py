"""Wire messages as the JSON the pages read: observations, moves, summaries and lobby rows.

Every message is turned into a plain dict with ``json_format`` (field names as in the ``.proto`` files, enum
values by name, fields without presence always written), so the scripts read the protocol's own names. The
descriptions of moves reuse :mod:`kutnahora.clients.render`, the terminal client's wording. Nothing here adds
information: a page gets exactly what the game server sent to the viewer it asked as.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message

from kutnahora.clients.render import BARBARA_TEXT, Names, describe_decision, readable
from kutnahora.clients.sdk import status_name
from kutnahora.v1 import game_pb2, play_service_pb2

ENDED = (game_pb2.GAME_STATUS_FINISHED, game_pb2.GAME_STATUS_ABANDONED)


def to_json(message: Message) -> dict[str, Any]:
    """A message as a dict with the ``.proto`` field names; 64-bit integers become numbers."""
    data: dict[str, Any] = json_format.MessageToDict(
        message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True
    )
    converted: dict[str, Any] = _numbers(data)
    return converted


INT64_FIELDS = frozenset({"version", "seed", "next_version"})


def _numbers(value: Any) -> Any:
    """``json_format`` writes int64 fields (versions, seeds) as strings; the pages want numbers."""
    if isinstance(value, dict):
        return {
            key: int(item) if key in INT64_FIELDS and isinstance(item, str) else _numbers(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_numbers(item) for item in value]
    return value


def move(record: game_pb2.DecisionRecord, events: list[game_pb2.Event], names: Names) -> dict[str, Any]:
    """One applied decision with what it caused, in words."""
    words = describe_decision(record.decision, record.kind, names) or record.text
    source = {
        game_pb2.DECISION_SOURCE_TIMEOUT: "clock ran out",
        game_pb2.DECISION_SOURCE_POLICY: "played by the server",
    }.get(record.source, "")
    return {
        "version": int(record.version),
        "seat": record.seat,
        "text": record.text,
        "description": words,
        "source": source,
        "events": [readable(event.text) for event in events],
    }


def watch_message(message: play_service_pb2.WatchGameResponse, names: Names) -> dict[str, Any]:
    """One version of a game: the observation, the move that led to it, the status and any result."""
    data: dict[str, Any] = {
        "version": int(message.observation.version),
        "observation": to_json(message.observation),
        "status": status_name(message.status),
        "move": move(message.decision, list(message.events), names) if message.HasField("decision") else None,
        "result": to_json(message.result) if message.HasField("result") else None,
    }
    return data


def seats_message(message: play_service_pb2.WatchGameResponse) -> dict[str, Any]:
    """Who holds the seats of a game waiting for players, and which seat was just taken."""
    return {
        "seats": [
            {"seat": s.seat, "name": s.name, "joined": s.joined, "resigned": s.resigned or s.replaced}
            for s in message.seats
        ],
        "joined_seat": message.joined_seat if message.HasField("joined_seat") else None,
        "status": status_name(message.status),
    }


def seat_names(summary: game_pb2.GameSummary) -> list[str]:
    """The name each seat joined with (empty for a seat nobody has taken)."""
    return [seat.name for seat in summary.seats]


def summary(game: game_pb2.GameSummary) -> dict[str, Any]:
    """A game's summary for the pages: status by name, seats, moves made, and the result once finished."""
    result = None
    if game.HasField("result") and game.result.seats:
        result = {
            "scores": [seat.score for seat in sorted(game.result.seats, key=lambda s: s.seat)],
            "winners": list(game.result.winners),
        }
    return {
        "game_id": game.game_id,
        "status": status_name(game.status),
        "players": game.options.players,
        "version": int(game.version),
        "label": game.label,
        "seats": [
            {"seat": s.seat, "name": s.name, "joined": s.joined, "resigned": s.resigned or s.replaced}
            for s in game.seats
        ],
        "pending_seat": game.pending_seat if game.HasField("pending_seat") else None,
        "created": game.created_at.ToJsonString() if game.HasField("created_at") else None,
        "abandon_reason": game.abandon_reason,
        "result": result,
        "clock": None if game.clock.disabled else {"decision_ms": _ms(game.clock.decision_time)},
        "time_banks_ms": [_ms(s.time_bank_left) for s in game.seats],
    }


def _ms(duration: Any) -> int:
    return int(duration.seconds * 1000 + duration.nanos // 1_000_000)


def clock(response: play_service_pb2.GetObservationResponse) -> dict[str, Any] | None:
    """The running clock of the pending decision: its deadline (ms since the epoch) and the bank left."""
    if not response.HasField("clock") or not response.clock.HasField("deadline"):
        return None
    running = response.clock
    return {
        "seat": running.seat,
        "deadline_ms": running.deadline.seconds * 1000 + running.deadline.nanos // 1_000_000,
        "bank_ms": _ms(running.time_bank_left),
        "decision_ms": _ms(running.decision_time),
    }


def words(names: Names) -> dict[str, dict[str, str]]:
    """What each building, St. Barbara tile and event card does, in the terminal client's wording, for the
    board's hover and tap explanations (keyed by id or number, as JSON keys)."""
    components = names.components
    return {
        "buildings": {str(b.id): names.building_line(b.id) for b in components.buildings},
        "barbara": {
            str(t.number): f"St. Barbara tile {t.number}: {BARBARA_TEXT.get(t.effect, '')}"
            + (f"; turning it raises the tax by {t.flip_tax}" if t.flip_tax else "")
            for t in components.barbara_tiles
        },
        "events": {
            str(e.id): f"Event {e.name} (deck {e.deck}): the tax rises by {e.tax}, the population deck "
            f"advances {e.population}, the ore deck advances {e.ore}"
            for e in components.event_cards
        },
        "mine_tiles": {
            str(t.id): names.mine_tile(t.id) for t in (*components.mine_tiles, *components.technology_tiles)
        },
    }
