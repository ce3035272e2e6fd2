"""The adapters' fast path, vectors written straight from the engine's state and kept up to date part by part,
gives exactly the vector of a from-scratch encoding of the engine's observation, in both forms, for every
seat and the spectator, whatever order the states and viewers come in."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kutnahora.engine import (
    GameOptions,
    GameState,
    apply,
    clone,
    default_components,
    legal,
    new_game,
    observe,
)
from kutnahora.learned.encoding import ObservationLayout
from kutnahora.learned.state_encoding import ListEncoder, StateEncoder

COMPONENTS = default_components()


def from_scratch(state: GameState, viewer: int | None, normalized: bool) -> np.ndarray:
    """The vector of ``observe(state, viewer)`` by a layout that has encoded nothing before."""
    return ObservationLayout(COMPONENTS).encode(observe(state, viewer), normalized)


def same(expected: np.ndarray, vector: np.ndarray) -> bool:
    return vector.dtype == np.float32 and np.array_equal(expected, vector)


@settings(max_examples=4, deadline=None)
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**31 - 1), events=st.booleans())
def test_every_vector_of_a_random_playout_equals_a_from_scratch_encoding(
    players: int, seed: int, events: bool
) -> None:
    layout = ObservationLayout(COMPONENTS)
    encoders = {normalized: StateEncoder(layout, normalized) for normalized in (False, True)}
    lists = {normalized: ListEncoder(layout, normalized) for normalized in (False, True)}
    state = new_game(GameOptions(players=players, events=events), seed, COMPONENTS)
    rng = random.Random(seed)
    viewers: list[int | None] = [None, *range(players)]
    while True:
        # the viewers in a random order, and some skipped, as the adapters ask for them
        for viewer in rng.sample(viewers, rng.randint(1, len(viewers))):
            for normalized in (False, True):
                expected = from_scratch(state, viewer, normalized)
                assert same(expected, encoders[normalized].encode(state, viewer))
                tensor = lists[normalized].encode(state, viewer)
                assert all(type(x) is float for x in tensor)
                assert same(expected, np.array(tensor, dtype=np.float32))
        if state.over:
            break
        apply(state, rng.choice(legal(state)))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_seat_and_the_spectator_at_every_position_in_both_forms(players: int) -> None:
    layout = ObservationLayout(COMPONENTS)
    encoders = [StateEncoder(layout), StateEncoder(layout, normalized=True)]
    state = new_game(GameOptions(players=players), 100 + players, COMPONENTS)
    rng = random.Random(players)
    out = np.full(layout.size, 7.0, dtype=np.float32)
    while True:
        for viewer in [None, *range(players)]:
            for encoder in encoders:
                expected = from_scratch(state, viewer, encoder.normalized)
                assert same(expected, encoder.encode(state, viewer))
                assert encoder.encode(state, viewer, out) is out and same(expected, out)
        if state.over:
            break
        apply(state, rng.choice(legal(state)))


def test_one_encoder_serves_several_games_and_clones_in_any_order() -> None:
    """The encoder compares by value, so interleaved games, clones and states of other sizes stay exact."""
    layout = ObservationLayout(COMPONENTS)
    encoder, lists = StateEncoder(layout), ListEncoder(layout)
    rng = random.Random(5)
    games = [new_game(GameOptions(players=n), 40 + n, COMPONENTS) for n in (3, 3, 2, 4)]
    snapshots: list[GameState] = []
    for _ in range(250):
        live = [g for g in games if not g.over]
        if not live:
            break
        state = rng.choice(live)
        apply(state, rng.choice(legal(state)))
        if rng.random() < 0.2:
            snapshots.append(clone(state))
        seen = rng.choice([state, *snapshots[-3:]])
        viewer = rng.choice([None, *range(len(seen.players))])
        expected = from_scratch(seen, viewer, False)
        assert same(expected, encoder.encode(seen, viewer))
        assert same(expected, np.array(lists.encode(seen, viewer), dtype=np.float32))


def test_a_returned_vector_is_the_callers_own() -> None:
    layout = ObservationLayout(COMPONENTS)
    encoder, lists = StateEncoder(layout), ListEncoder(layout)
    state = new_game(GameOptions(players=3), 9, COMPONENTS)
    first, listed = encoder.encode(state, 0), lists.encode(state, 0)
    first[:] = 5.0
    listed[:] = [5.0] * len(listed)
    apply(state, legal(state)[0])
    expected = from_scratch(state, 0, False)
    assert same(expected, encoder.encode(state, 0))
    assert same(expected, np.array(lists.encode(state, 0), dtype=np.float32))


def test_a_seat_outside_the_game_is_refused() -> None:
    encoder = StateEncoder(ObservationLayout(COMPONENTS))
    state = new_game(GameOptions(players=2), 1, COMPONENTS)
    with pytest.raises(ValueError, match=r"seat must be 0\.\.1"):
        encoder.encode(state, 2)
