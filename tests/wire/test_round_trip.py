"""The codec's round trip: an engine observation to the wire and back is the same observation, whether the
wire message comes from the codec or from the server's caching encoder."""

from __future__ import annotations

import random

import pytest

from kutnahora.engine import GameOptions, apply, legal, new_game, observe
from kutnahora.v1 import game_pb2
from kutnahora.wire import engine_observation, observation_to_wire
from kutnahora.wire.encoder import ObservationEncoder


@pytest.mark.parametrize(("players", "events"), [(2, False), (3, True), (4, False)])
def test_the_wire_observation_converts_back_to_the_engines(players: int, events: bool) -> None:
    """Every position of seeded random games, from every seat and a spectator, through both encoders."""
    checked = 0
    for seed in range(3):
        state = new_game(GameOptions(players=players, events=events), seed)
        encoder = ObservationEncoder("g")
        rng = random.Random(seed)
        while True:
            for viewer in [None, *range(players)]:
                observation = observe(state, viewer)
                assert engine_observation(observation_to_wire(observation, "g")) == observation
                encoded = game_pb2.Observation.FromString(encoder.encode(observation))
                assert engine_observation(encoded) == observation
                checked += 1
            if state.over:
                break
            apply(state, rng.choice(legal(state)))
    assert checked > 500
