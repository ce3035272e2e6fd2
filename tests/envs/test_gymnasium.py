"""The single-agent Gymnasium environment passes Gymnasium's environment checker and plays whole games."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from kutnahora.envs.gymnasium_env import KutnaHoraEnv


@pytest.mark.parametrize(("players", "opponents"), [(2, "random"), (3, "greedy"), (4, "random")])
def test_gymnasium_check_env(players: int, opponents: str) -> None:
    check_env(KutnaHoraEnv(players=players, opponents=opponents), skip_render_check=True)


def test_the_registered_id_makes_the_environment() -> None:
    env = gymnasium.make("KutnaHora-v0", players=2, seat=1)
    observation, _ = env.reset(seed=3)
    assert observation["action_mask"].any()
    env.close()


def play(env: KutnaHoraEnv, seed: int) -> tuple[float, int]:
    """A whole game with uniformly random legal actions: the final reward and the agent's decisions."""
    observation, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    steps = 0
    while True:
        assert env.state is not None and env.state.pending is not None
        assert env.state.pending.seat == env.seat
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observation, reward, terminated, truncated, _ = env.step(action)
        steps += 1
        assert not truncated
        if terminated:
            return reward, steps
        assert reward == 0.0


def test_the_agent_decides_only_for_its_seat_and_is_paid_at_the_end() -> None:
    env = KutnaHoraEnv(players=3, seat=2, opponents=["greedy", "random"])
    reward, steps = play(env, 4)
    assert env.state is not None and env.state.over
    keys = [(p.points, p.groschen) for p in env.state.players]
    mine = keys[2]
    expected = (sum(mine > k for k in keys) - sum(mine < k for k in keys)) / 2
    assert reward == expected
    assert steps > 20
    assert not env.action_masks().any()


def test_greedy_opponents_beat_a_random_agent_more_often_than_not() -> None:
    """The opponents are the project's bots: against two greedy bots a random agent mostly loses."""
    env = KutnaHoraEnv(players=3, opponents="greedy")
    rewards = [play(env, seed)[0] for seed in range(6)]
    assert sum(rewards) < 0


def test_a_search_bot_can_be_an_opponent() -> None:
    """The project's mcts bot, with a small budget, plays the other seat of a whole game."""
    env = KutnaHoraEnv(players=2, opponents="mcts:8")
    _, steps = play(env, 2)
    assert env.state is not None and env.state.over and steps > 20


def test_an_illegal_action_loses_or_raises() -> None:
    env = KutnaHoraEnv(players=2)
    observation, _ = env.reset(seed=1)
    illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
    _, reward, terminated, _, info = env.step(illegal)
    assert (reward, terminated) == (-1.0, True) and "not legal" in info["illegal_action"]
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    strict = KutnaHoraEnv(players=2, illegal_action="raise")
    strict.reset(seed=1)
    assert strict.state is not None
    version = strict.state.version
    with pytest.raises(ValueError, match="not legal"):
        strict.step(illegal)
    assert strict.state.version == version


def test_ansi_rendering_shows_the_position_and_the_decision() -> None:
    env = KutnaHoraEnv(players=2, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert text is not None and "round 1" in text and "seat 0 decides" in text


def test_bad_arguments_are_refused_with_a_sentence() -> None:
    with pytest.raises(ValueError, match="2, 3 or 4"):
        KutnaHoraEnv(players=5)
    with pytest.raises(ValueError, match="unknown opponent"):
        KutnaHoraEnv(players=2, opponents="nobody")
    with pytest.raises(ValueError, match="one per other seat"):
        KutnaHoraEnv(players=3, opponents=["random"])
