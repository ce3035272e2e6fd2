"""Hidden information never reaches the wire.

What the rules hide: the order of the mine stack and of every town-hall stack below its top tile, the mine
tiles another seat is choosing from, the face-down event cards, and the random generator. The test
changes exactly those parts of real game states and checks that every observation a spectator or a seat
who does not owe the decision receives is byte for byte the same; the seat that owes the decision may
see its own drawn tiles, and nothing else changes for it either.
"""

from __future__ import annotations

import random

import pytest

from kutnahora import engine
from kutnahora.engine import GameOptions, GameState
from kutnahora.v1 import game_pb2
from kutnahora.wire.encoder import ObservationEncoder
from kutnahora.wire.seat_observation import encode_observation
from tests.hidden_information import disguise


def states_of_a_game(players: int, seed: int, every: int) -> list[GameState]:
    """Copies of the state of a random game, every few decisions."""
    state = engine.new_game(GameOptions(players=players, events=True), seed)
    rng = random.Random(seed)
    states = []
    while not state.over:
        if state.version % every == 0 or state.drawn:
            states.append(state.copy())
        engine.apply(state, rng.choice(engine.legal(state)))
    states.append(state)
    return states


@pytest.mark.parametrize("players", [2, 3, 4])
def test_hidden_parts_do_not_change_any_observation(players: int) -> None:
    rng = random.Random(players)
    checked_drawn = 0
    changed = 0
    for state in states_of_a_game(players, seed=40 + players, every=7):
        pending_seat = state.pending.seat if state.pending is not None else None
        for viewer in [None, *range(players)]:
            owner = viewer is not None and viewer == pending_seat
            other = disguise(state, rng, keep_drawn=owner)
            mine = encode_observation(state, viewer, ObservationEncoder("g"))
            theirs = encode_observation(other, viewer, ObservationEncoder("g"))
            assert mine == theirs, f"viewer {viewer} sees hidden information at version {state.version}"
            changed += engine.state_hash(other) != engine.state_hash(state)
            if not owner and state.drawn:
                checked_drawn += 1
    assert checked_drawn > 0, "no state with drawn mine tiles was checked"
    assert changed > 0, "the disguise changed nothing, so the test proves nothing"


def test_only_the_seat_that_owes_a_decision_sees_its_options_and_drawn_tiles() -> None:
    for state in states_of_a_game(4, seed=3, every=5):
        if state.pending is None:
            continue
        for viewer in [None, 0, 1, 2, 3]:
            wire = game_pb2.Observation.FromString(encode_observation(state, viewer, ObservationEncoder("g")))
            owner = viewer == state.pending.seat
            assert (len(wire.pending.options) > 0) == owner
            if not owner:
                assert list(wire.drawn) == []
            else:
                assert list(wire.drawn) == list(state.drawn)


def test_the_wire_holds_no_seed_before_the_end() -> None:
    names = {field.name for field in game_pb2.GameSummary.DESCRIPTOR.fields}
    names |= {field.name for field in game_pb2.Observation.DESCRIPTOR.fields}
    assert "seed" not in names
