"""Resampling in the native core: the same states, from the same generator, as the engine's resample."""

from __future__ import annotations

import random

import pytest

from kutnahora.engine import GameOptions, apply, legal, new_game, observe, resample, state_hash
from kutnahora.native import native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")


@pytest.mark.parametrize("players", [2, 3, 4])
def test_draws_are_the_engines_draws(players: int) -> None:
    from kutnahora.native.convert import from_state
    from kutnahora.native.resampling import Resampler

    compared = 0
    for seed in range(10):
        state = new_game(GameOptions(players=players, events=seed % 2 == 0), 700 + seed)
        chooser = random.Random(seed)
        while not state.over:
            if chooser.random() < 0.04:
                for viewer in range(players):
                    view = observe(state, viewer)
                    resampler = Resampler(view, state.components)
                    for draw in range(2):
                        engine_rng, native_rng = random.Random(draw + seed), random.Random(draw + seed)
                        drawn = resample(view, engine_rng, state.components)
                        game = resampler.draw(native_rng)
                        assert game._game.dump() == from_state(drawn)  # hidden parts and generator alike
                        assert game.state_hash() == state_hash(drawn)
                        assert native_rng.getstate() == engine_rng.getstate()
                        compared += 1
            options = legal(state)
            apply(state, options[chooser.randrange(len(options))])
    assert compared > 50
