"""An ended game's stored record, checked against what its players were told and against the rules engine.

The players of a game note every decision the server confirmed (``DecisionAccepted``: the version it was
applied at, the seat and the option's canonical text) and the result their Play streams ended with.
:func:`check_replay` reads the game's replay (``ReplayService.GetReplay``, as the web's replays and the
tournament read it) and returns the first difference it finds, or None:

- the record's decisions are numbered 0, 1, 2, ... in order;
- every confirmed decision is there, at its version, by its seat, with its text;
- the engine, replaying the record from its options and seed, accepts every decision and ends in the
  state hash the record states;
- a finished game's result, as the engine computes it, is the one the record and every player were told.

A decision the server applied but whose confirmation was lost with a dropped connection is in the record
without being confirmed: that is allowed. A confirmed decision missing from the record is not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kutnahora import engine
from kutnahora.engine.components import ComponentSet
from kutnahora.v1 import game_pb2, replay_service_pb2
from kutnahora.wire.games import game_options_from_wire, result_to_wire
from kutnahora.wire.values import Malformed

Confirmed = Mapping[int, tuple[int, str]]
"""Confirmed decisions of one game: the version each was applied at -> its seat and canonical text."""


def check_replay(
    replay: replay_service_pb2.GetReplayResponse,
    confirmed: Confirmed,
    results_told: Sequence[game_pb2.GameResult | None] = (),
    components: ComponentSet | None = None,
) -> str | None:
    """The first way ``replay`` differs from what the players were told, or from the rules; None if none."""
    game_id = replay.game.game_id
    decisions = replay.decisions
    for index, record in enumerate(decisions):
        if record.version != index:
            return f"game {game_id}: the record's decision {index} is numbered {record.version}"
    for version in sorted(confirmed):
        seat, text = confirmed[version]
        if version >= len(decisions):
            return (
                f"game {game_id}: decision {version} ({text!r} by seat {seat}) was confirmed but the record "
                f"holds only {len(decisions)} decisions"
            )
        record = decisions[version]
        if (record.seat, record.text) != (seat, text):
            return (
                f"game {game_id}: decision {version} was confirmed as {text!r} by seat {seat}, the record "
                f"holds {record.text!r} by seat {record.seat}"
            )
    try:
        options = game_options_from_wire(replay.game.options)
        state = engine.new_game(options, replay.seed, components)
    except (Malformed, engine.SetupError) as error:
        return f"game {game_id}: the engine cannot set the recorded game up ({error})"
    for record in decisions:
        try:
            engine.apply(state, engine.parse_option(record.text), record.seat)
        except ValueError as error:  # a text that does not parse, or a decision the rules refuse
            return f"game {game_id}: the engine refuses the record's decision {record.version} ({error})"
    if engine.state_hash(state) != replay.state_hash:
        return f"game {game_id}: the engine's replay ends in another state than the record states"
    if replay.game.status != game_pb2.GAME_STATUS_FINISHED:
        return None
    result = engine.result(state)
    if result is None:
        return f"game {game_id}: the record says the game finished, but its replay does not end the game"
    expected = _comparable(result_to_wire(result))
    if _comparable(replay.game.result) != expected:
        return f"game {game_id}: the record's result differs from the engine's"
    for told in results_told:
        if told is not None and _comparable(told) != expected:
            return f"game {game_id}: a player was told another result than the engine's"
    return None


def _comparable(result: game_pb2.GameResult) -> tuple[object, ...]:
    """What a result says about the game (who resigned aside, which the replay does not decide)."""
    seats = tuple(
        (s.seat, s.score, s.groschen, s.winner, tuple((b.name, b.points) for b in s.breakdown))
        for s in sorted(result.seats, key=lambda s: s.seat)
    )
    return seats, tuple(sorted(result.winners))
