"""The engine's random-playout properties (tests/engine/test_properties.py) held by the native core.

Games played in the core alone keep every invariant the engine's tests check after every decision (on
the engine's copy of the core's state), end after the right number of rounds, and replay to the same state
hash; every listed option of every decision met applies in a clone of the core exactly as in a copy of the
engine's state (the same state after, the same events); any seed and any choices reach the engine's
result.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kutnahora.engine import GameOptions, apply, legal, new_game, state_hash
from kutnahora.engine.options import Option
from kutnahora.engine.rounds import rounds_in_game
from kutnahora.native import native_available
from tests.engine.test_properties import check_invariants

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(8))
def test_a_core_playout_keeps_every_invariant(players: int, seed: int) -> None:
    from kutnahora.native.game import NativeGame

    options = GameOptions(players=players, events=seed % 2 == 1)
    game = NativeGame.new(options, seed)
    check_invariants(game.to_state())
    chooser = random.Random(seed)
    decisions: list[Option] = []
    while not game.over:
        listed = game.legal()
        option = listed[chooser.randrange(len(listed))]
        game.apply(option)
        decisions.append(option)
        check_invariants(game.to_state())
        assert len(decisions) < 2000, "a game must end"
    state = game.to_state()
    assert state.round == rounds_in_game(state) == (5 if players == 4 else 6)
    outcome = game.result()
    assert outcome is not None and outcome.winners
    again = NativeGame.new(options, seed)
    for option in decisions:
        again.apply(option)
    assert again.state_hash() == game.state_hash()


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_listed_option_applies_alike(players: int) -> None:
    from kutnahora.native.convert import from_state
    from kutnahora.native.game import NativeGame

    state = new_game(GameOptions(players=players), 99)
    game = NativeGame.new(state.options, 99)
    chooser = random.Random(99)
    while not state.over:
        listed = legal(state)
        for option in listed:
            trial, clone = state.copy(), game.clone()
            assert clone.apply(option) == apply(trial, option)
            assert clone._game.dump() == from_state(trial)
        option = listed[chooser.randrange(len(listed))]
        apply(state, option)
        game.apply(option)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**64), choices=st.randoms())
def test_any_seed_any_choices_reach_the_engines_result(
    players: int, seed: int, choices: random.Random
) -> None:
    from kutnahora.native.game import NativeGame

    state = new_game(GameOptions(players=players), seed)
    game = NativeGame.new(state.options, seed)
    while not state.over:
        listed = legal(state)
        option = listed[choices.randrange(len(listed))]
        apply(state, option)
        game.apply(option)
    assert game.state_hash() == state_hash(state)
