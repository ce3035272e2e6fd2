"""PettingZoo's global ``state()``; OpenSpiel's shape queries, from Python or from pyspiel's C++, deal nothing
and its observation string reads as text."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
import pytest

import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game
from kutnahora.engine import observe
from kutnahora.envs.pettingzoo_env import env, raw_env
from kutnahora.learned.encoding import ObservationLayout


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_state_is_every_seats_observation_hidden_parts_included(players: int) -> None:
    game = raw_env(players=players)
    game.reset(seed=8)
    rng = np.random.default_rng(8)
    layout = ObservationLayout()
    drawn_section = layout.section("private.drawn")
    saw_private = False
    for _agent in game.agent_iter(max_iter=400):
        observation, _, termination, truncation, _ = game.last()
        assert game.engine is not None
        state = game.state()
        assert state.shape == game.state_space.shape == (players * layout.size,)
        for seat in range(players):
            expected = layout.encode(observe(game.engine, seat))
            assert np.array_equal(state[seat * layout.size : (seat + 1) * layout.size], expected)
        owner = game.engine.pending.seat if game.engine.pending is not None else None
        if owner is not None and game.engine.drawn:
            # the mine tiles one seat is choosing from: in the state, not in another seat's observation
            block = state[owner * layout.size : (owner + 1) * layout.size]
            other = (owner + 1) % players
            assert block[drawn_section.start : drawn_section.stop].any()
            assert not game.observe(f"seat_{other}")["observation"][
                drawn_section.start : drawn_section.stop
            ].any()
            saw_private = True
        if termination or truncation:
            game.step(None)
            continue
        game.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))
    assert saw_private


def test_pettingzoo_state_through_the_wrapper_needs_a_reset_and_is_callable() -> None:
    wrapped = env(players=2)
    wrapped.reset(seed=1)
    assert wrapped.state().shape == (2 * ObservationLayout().size,)
    with pytest.raises(RuntimeError, match="call reset"):
        raw_env(players=2).state()


def deal(query: bool) -> list[int]:
    game = pyspiel.load_game("python_kutna_hora(players=3,seed=11)")
    if query:
        assert game.observation_tensor_shape() == [game.observation_tensor_size()]
        assert game.information_state_tensor_shape() == [game.information_state_tensor_size()]
        assert game.observation_tensor_size() == ObservationLayout().size
    state = game.new_initial_state()
    rng = random.Random(1)
    for _ in range(20):
        state.apply_action(rng.choice(state.legal_actions()))
    return [*state.observation_tensor(0), *state.legal_actions()]


def test_openspiel_shape_queries_before_the_first_state_do_not_change_the_deal() -> None:
    assert deal(query=True) == deal(query=False)


def dealt_seeds(cpp_queries: bool) -> list[int]:
    game = pyspiel.load_game("python_kutna_hora(players=3,seed=11)")
    if cpp_queries:
        # pyspiel's own C++ methods, as C++ code calls them: each makes a new state and observes it
        assert pyspiel.Game.observation_tensor_shape(game) == [ObservationLayout().size]
        assert pyspiel.Game.observation_tensor_size(game) == ObservationLayout().size
        assert pyspiel.Game.information_state_tensor_shape(game) == [game.information_state_tensor_size()]
        assert pyspiel.Game.information_state_tensor_size(game) == game.information_state_tensor_size()
    return [game.new_initial_state().engine.seed for _ in range(3)]


def test_openspiel_cpp_shape_queries_do_not_change_the_deal() -> None:
    assert dealt_seeds(cpp_queries=True) == dealt_seeds(cpp_queries=False)


def test_a_state_observed_before_its_first_use_deals_the_game_it_showed() -> None:
    game = pyspiel.load_game("python_kutna_hora(players=3,seed=5)")
    fresh = game.new_initial_state()
    shown = fresh.observation_tensor(0)
    text = fresh.observation_string(0)
    assert pyspiel.load_game("python_kutna_hora(players=3,seed=5)").new_initial_state().observation_tensor(
        0
    ) == (shown)
    other = game.new_initial_state()
    other.apply_action(other.legal_actions()[0])  # deals the next game of the sequence first
    assert fresh.observation_tensor(0) == shown and fresh.observation_string(0) == text
    fresh.apply_action(fresh.legal_actions()[0])
    # the fresh state plays the game it showed, which the sequence had not given away when it was shown
    assert fresh.engine.seed == other.engine.seed
    assert game.new_initial_state().engine.seed != other.engine.seed


def test_openspiel_observation_string_is_readable_text_without_hidden_parts() -> None:
    game = pyspiel.load_game("python_kutna_hora(players=3,seed=2)")
    state = game.new_initial_state()
    rng = random.Random(2)
    while not state.engine.drawn:
        state.apply_action(rng.choice(state.legal_actions()))
    owner = state.current_player()
    mine = state.observation_string(owner)
    other = state.observation_string((owner + 1) % 3)
    for text in (mine, other):
        assert "Observation(" not in text and "DecisionKind" not in text and "<" not in text
        assert f"round {state.engine.round} of" in text
        assert all(
            f"seat {p.seat}: {p.points} points, {p.groschen} groschen" in text for p in state.engine.players
        )
    assert "mine tiles to choose from" in mine and "mine tiles to choose from" not in other
    assert f"seat {owner} decides {state.engine.pending.kind.value}:" in mine
    assert len(mine) < 1500
    info = state.information_state_string(owner)
    assert info.startswith(mine) and "actions [" in info
