"""Raw and normalised observations: every adapter declares Box bounds for the form it gives, and random
playouts of 2, 3 and 4 players never leave them."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game
from kutnahora.engine import GameOptions, apply, legal, new_game, observe
from kutnahora.envs.gymnasium_env import KutnaHoraEnv
from kutnahora.envs.pettingzoo_env import raw_env
from kutnahora.learned.encoding import COUNTER_SCALES, COUNTERS, HIGH, LOW, SEAT_COUNTERS, ObservationLayout


def inside(vector: np.ndarray, low: np.ndarray, high: np.ndarray) -> bool:
    return bool(np.all(vector >= low) and np.all(vector <= high))


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_seat_and_the_spectator_stay_inside_both_forms_bounds(players: int) -> None:
    layout = ObservationLayout()
    raw_low, raw_high = layout.bounds(False)
    low, high = layout.bounds(True)
    assert raw_low.min() == LOW and raw_high.max() == HIGH
    assert set(np.unique(low)) <= {-1.0, 0.0} and np.all(high == 1.0)
    for seed in range(3):
        state = new_game(GameOptions(players=players, events=seed == 1), seed)
        rng = random.Random(seed)
        while True:
            for seat in [None, *range(players)]:
                view = observe(state, seat)
                raw = layout.encode(view)
                normalized = layout.encode(view, normalized=True)
                assert inside(raw, raw_low, raw_high)
                assert inside(normalized, low, high)
                assert np.allclose(normalized, layout.normalize(raw))
            if state.over:
                break
            apply(state, rng.choice(legal(state)))


def test_the_normalised_form_divides_by_the_documented_scales_and_clips() -> None:
    layout = ObservationLayout()
    state = new_game(GameOptions(players=3), 4)
    view = observe(state, 0)
    raw = layout.encode(view)
    normalized = layout.encode(view, normalized=True)
    counters = layout.section("counters")
    expected = raw[counters.start : counters.stop] / np.array(COUNTER_SCALES)
    assert len(COUNTER_SCALES) == len(COUNTERS)
    assert np.allclose(normalized[counters.start : counters.stop], np.minimum(expected, 1.0))
    seat = layout.section("seat +0").start
    groschen = seat + SEAT_COUNTERS.index("groschen")
    assert normalized[groschen] == pytest.approx(raw[groschen] / 200)
    # a number past its scale is clipped to 1; a signed one below −scale to −1
    big = raw.copy()
    big[groschen] = 5000.0
    big[seat + SEAT_COUNTERS.index("points")] = -900.0
    clipped = layout.normalize(big)
    assert clipped[groschen] == 1.0 and clipped[seat + SEAT_COUNTERS.index("points")] == -1.0
    # flags and one-hot entries are unchanged
    players = layout.section("players")
    assert np.array_equal(normalized[players.start : players.stop], raw[players.start : players.stop])


@pytest.mark.parametrize("normalized", [False, True])
@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_observations_and_state_stay_in_declared_spaces(players: int, normalized: bool) -> None:
    env = raw_env(players=players, normalized=normalized)
    env.reset(seed=players)
    rng = np.random.default_rng(players)
    for agent in env.agent_iter():
        observation, _, termination, truncation, _ = env.last()
        assert env.observation_space(agent).contains(observation)
        if termination or truncation:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert env.engine is not None and env.engine.over
    assert env.state_space.contains(env.state())


@pytest.mark.parametrize("normalized", [False, True])
def test_gymnasium_observations_stay_in_the_declared_space(normalized: bool) -> None:
    env = KutnaHoraEnv(players=3, normalized=normalized)
    observation, _ = env.reset(seed=2)
    rng = np.random.default_rng(2)
    done = False
    while not done:
        assert env.observation_space.contains(observation)
        observation, _, done, _, _ = env.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert env.observation_space.contains(observation)


def test_openspiel_normalised_tensors_lie_in_the_normalised_bounds() -> None:
    layout = ObservationLayout()
    low, high = layout.bounds(True)
    raw_game = pyspiel.load_game("python_kutna_hora(players=3,seed=4)")
    game = pyspiel.load_game("python_kutna_hora(players=3,seed=4,normalized=True)")
    raw_state, state = raw_game.new_initial_state(), game.new_initial_state()
    rng = random.Random(4)
    while not state.is_terminal():
        tensor = np.array(state.observation_tensor(), dtype=np.float32)
        assert inside(tensor, low, high)
        assert np.allclose(tensor, layout.normalize(np.array(raw_state.observation_tensor(), np.float32)))
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        raw_state.apply_action(action)
