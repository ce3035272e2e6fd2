"""Games both ways: game options, events and results.

A game's options read from the wire raise :class:`~kutnahora.wire.values.Malformed` for an impossible
player count; the engine checks the rest when it sets the game up.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from kutnahora.engine import Event, GameOptions, GameResult
from kutnahora.v1 import game_pb2
from kutnahora.wire.values import Malformed


def game_options_from_wire(wire: game_pb2.GameOptions) -> GameOptions:
    """Engine game options from the wire; raises :class:`Malformed` for an impossible player count."""
    if wire.players not in (2, 3, 4):
        raise Malformed(f"options.players must be 2, 3 or 4, not {wire.players}")
    return GameOptions(
        players=wire.players,
        events=wire.events,
        guild_setup_card=wire.guild_setup_card if wire.HasField("guild_setup_card") else None,
        mine_setup_card=wire.mine_setup_card if wire.HasField("mine_setup_card") else None,
    )


def game_options_to_wire(options: GameOptions) -> game_pb2.GameOptions:
    """Wire game options from the engine's."""
    wire = game_pb2.GameOptions(players=options.players, events=options.events)
    if options.guild_setup_card is not None:
        wire.guild_setup_card = options.guild_setup_card
    if options.mine_setup_card is not None:
        wire.mine_setup_card = options.mine_setup_card
    return wire


def event_to_wire(event: Event) -> game_pb2.Event:
    """One engine event as a wire event."""
    if event.seat is None:
        return game_pb2.Event(kind=event.kind, text=event.text)
    return game_pb2.Event(kind=event.kind, seat=event.seat, text=event.text)


def add_events(target: object, events: Iterable[Event]) -> None:
    """Append engine events to a repeated ``Event`` field."""
    add = target.add  # type: ignore[attr-defined]
    for event in events:
        if event.seat is None:
            add(kind=event.kind, text=event.text)
        else:
            add(kind=event.kind, seat=event.seat, text=event.text)


def result_to_wire(result: GameResult, resigned: Sequence[bool] = ()) -> game_pb2.GameResult:
    """The final result as a wire message; ``resigned`` flags seats that resigned."""
    wire = game_pb2.GameResult(winners=result.winners)
    winners = set(result.winners)
    for seat, score in enumerate(result.scores):
        entry = wire.seats.add(
            seat=seat,
            score=score,
            groschen=result.groschen[seat],
            winner=seat in winners,
            resigned=bool(resigned[seat]) if seat < len(resigned) else False,
        )
        for name, points in result.breakdown[seat].items():
            entry.breakdown.add(name=name, points=points)
    return wire
