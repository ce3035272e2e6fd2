"""The PettingZoo AEC environment passes PettingZoo's own API and seed tests for 2, 3 and 4 players."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from kutnahora.envs.pettingzoo_env import env, raw_env

# The observation is a dict of the vector and the action mask, as in PettingZoo's own classic games; its
# API test warns that it is neither a Box nor a NumPy array.
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array"),
]


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_api_test(players: int) -> None:
    api_test(env(players=players), num_cycles=300)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_pettingzoo_seed_test(players: int) -> None:
    seed_test(lambda: env(players=players), num_cycles=300)


def play_to_the_end(game: raw_env, seed: int) -> dict[str, float]:
    """A whole random game; the rewards each agent received at the end."""
    game.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total: dict[str, float] = dict.fromkeys(game.possible_agents, 0.0)
    for agent in game.agent_iter():
        observation, reward, termination, truncation, _ = game.last()
        total[agent] += reward
        if termination or truncation:
            game.step(None)
            continue
        legal = np.flatnonzero(observation["action_mask"])
        game.step(int(rng.choice(legal)))
    return total


def test_a_whole_game_ends_with_zero_sum_returns_for_every_agent() -> None:
    game = raw_env(players=4)
    total = play_to_the_end(game, 3)
    assert game.agents == []
    assert game.engine is not None and game.engine.over
    assert sum(total.values()) == pytest.approx(0.0)
    points = [(p.points, p.groschen) for p in game.engine.players]
    best = max(points)
    for seat, key in enumerate(points):
        if key == best and points.count(best) == 1:
            assert total[f"seat_{seat}"] == 1.0


def test_only_the_seat_that_owes_the_decision_acts() -> None:
    game = raw_env(players=3)
    game.reset(seed=5)
    assert game.engine is not None and game.engine.pending is not None
    owner = f"seat_{game.engine.pending.seat}"
    assert game.agent_selection == owner
    for agent in game.possible_agents:
        mask = game.observe(agent)["action_mask"]
        assert mask.any() == (agent == owner)


def test_an_illegal_action_is_refused_and_changes_nothing() -> None:
    game = raw_env(players=2)
    game.reset(seed=2)
    mask = game.observe(game.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    before = game.engine.version if game.engine else None
    with pytest.raises(ValueError, match="not legal"):
        game.step(illegal)
    assert game.engine is not None and game.engine.version == before


def test_ansi_rendering_shows_the_decision_and_its_options() -> None:
    game = raw_env(players=2, render_mode="ansi")
    game.reset(seed=4)
    text = game.render()
    assert text is not None and game.engine is not None and game.engine.pending is not None
    assert f"seat {game.engine.pending.seat} decides {game.engine.pending.kind.value}" in text
    assert len(text.splitlines()) == 3 + len(game.engine.pending.options)


@pytest.mark.filterwarnings("ignore:Illegal move made")
@pytest.mark.parametrize("players", [2, 4])
def test_pettingzoo_state_test_passes_with_unmasked_random_actions(players: int) -> None:
    """PettingZoo's own state tests: its ``test_state`` steps with ``action_space.sample()`` (no mask), so
    almost every first action is illegal and must end the game, as in PettingZoo's classic games."""
    from pettingzoo.test.state_test import test_state, test_state_space

    game = env(players=players)
    test_state_space(game)
    test_state(game, num_cycles=20)


@pytest.mark.filterwarnings("ignore:Illegal move made")
def test_an_illegal_action_through_env_ends_the_game_with_minus_one_for_its_agent() -> None:
    game = env(players=3)
    game.reset(seed=4)
    agent = game.agent_selection
    observation, *_ = game.last()
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    version = game.unwrapped.engine.version
    game.step(illegal)
    assert game.unwrapped.engine.version == version  # the game itself did not move
    assert all(game.terminations.values())
    seen: dict[str, float] = {}
    for name in game.agent_iter():
        _, reward, termination, truncation, _ = game.last()
        assert termination or truncation
        seen[name] = reward
        game.step(None)
    assert seen[agent] == -1.0
    assert all(reward == 0.0 for name, reward in seen.items() if name != agent)
    assert set(seen) == set(game.possible_agents)


def test_an_action_outside_the_space_is_refused_by_env() -> None:
    game = env(players=2)
    game.reset(seed=1)
    with pytest.raises(AssertionError):
        game.step(10_000)
