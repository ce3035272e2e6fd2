"""Gymnasium opponents that are policies (callables and objects with predict), and a self-play loop
against the learner itself and a frozen copy of it."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from kutnahora.envs.gymnasium_env import KutnaHoraEnv


class LinearPolicy:
    """A tiny learner in Stable-Baselines3's manner: ``predict(observation, action_masks=...)``."""

    def __init__(self, size: int, actions: int, seed: int) -> None:
        self.weights = np.random.default_rng(seed).normal(size=(actions, size)).astype(np.float32)
        self.calls = 0

    def predict(
        self,
        observation: npt.NDArray[np.float32],
        action_masks: npt.NDArray[np.int8],
        deterministic: bool = True,
    ) -> tuple[npt.NDArray[np.int64], None]:
        self.calls += 1
        scores = self.weights @ observation
        scores[action_masks == 0] = -np.inf
        return np.array(int(np.argmax(scores))), None

    def update(self, rng: np.random.Generator) -> None:
        self.weights += rng.normal(scale=0.1, size=self.weights.shape).astype(np.float32)


def play(env: KutnaHoraEnv, policy: LinearPolicy, seed: int) -> float:
    observation, _ = env.reset(seed=seed)
    reward, done = 0.0, False
    while not done:
        action, _ = policy.predict(observation["observation"], observation["action_mask"])
        observation, reward, done, _, _ = env.step(int(action))
    return reward


def test_a_callable_opponent_chooses_from_its_own_observation_and_mask() -> None:
    seen: list[tuple[npt.NDArray[np.float32], npt.NDArray[np.int8]]] = []

    def lowest(observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
        seen.append((observation, mask))
        return int(np.flatnonzero(mask)[0])

    env = KutnaHoraEnv(players=2, opponents=lowest, normalized=True)
    observation, _ = env.reset(seed=3)
    done = False
    while not done:
        observation, _, done, _, _ = env.step(int(np.flatnonzero(observation["action_mask"])[-1]))
    assert env.state is not None and env.state.over
    assert len(seen) > 10
    low, high = env.layout.bounds(True)
    for vector, mask in seen:
        assert vector.shape == (env.layout.size,) and np.all(vector >= low) and np.all(vector <= high)
        assert mask.shape == (env.space.size,) and mask.sum() >= 1
    # seats are relative to the viewer: the opponent's own seat block says "present" and it is seat +0
    assert all(vector[env.layout.section("seat +0").start] == 1.0 for vector, _ in seen)


def test_a_policy_object_plays_a_seat_instead_of_failing() -> None:
    env = KutnaHoraEnv(players=3)
    policy = LinearPolicy(env.layout.size, env.space.size, seed=1)
    env.set_opponents([policy, "random"])
    reward = play(env, LinearPolicy(env.layout.size, env.space.size, seed=2), seed=4)
    assert policy.calls > 0 and reward in (-1.0, -0.5, 0.0, 0.5, 1.0)


def test_a_policy_choosing_an_illegal_id_is_refused_with_a_sentence() -> None:
    def illegal(observation: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
        return int(np.flatnonzero(mask == 0)[0])

    env = KutnaHoraEnv(players=2, seat=1, opponents=illegal)
    with pytest.raises(ValueError, match=r"the policy of seat 0 chose action \d+ is not legal"):
        observation, _ = env.reset(seed=1)
        for _ in range(10):
            observation, *_ = env.step(int(np.flatnonzero(observation["action_mask"])[0]))


def test_what_is_neither_a_name_nor_a_policy_is_refused_clearly() -> None:
    with pytest.raises(TypeError, match="an opponent is a bot's name, a callable"):
        KutnaHoraEnv(players=2, opponents=[42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="unknown opponent 'chess'"):
        KutnaHoraEnv(players=2, opponents="chess")
    with pytest.raises(ValueError, match="give one opponent, or 2"):
        KutnaHoraEnv(players=3, opponents=["random"])


def test_new_opponents_take_their_seats_at_the_next_reset() -> None:
    env = KutnaHoraEnv(players=2)
    observation, _ = env.reset(seed=1)
    calls: list[int] = []

    def counting(observation: Any, mask: npt.NDArray[np.int8]) -> int:
        calls.append(1)
        return int(np.flatnonzero(mask)[0])

    env.set_opponents(counting)
    done = False
    while not done:
        observation, _, done, _, _ = env.step(int(np.flatnonzero(observation["action_mask"])[0]))
    assert calls == []  # the game under way kept its random opponent
    play(env, LinearPolicy(env.layout.size, env.space.size, seed=0), seed=2)
    assert calls


def test_self_play_against_itself_and_a_frozen_copy() -> None:
    """The loop docs/envs.md shows: the learner plays seat 0; the live learner and a copy frozen at the
    start of each generation play the others; the copy does not follow the learner's updates."""
    env = KutnaHoraEnv(players=3, normalized=True)
    learner = LinearPolicy(env.layout.size, env.space.size, seed=7)
    rng = np.random.default_rng(7)
    for generation in range(2):
        frozen = copy.deepcopy(learner)
        frozen_weights = frozen.weights.copy()
        env.set_opponents([learner, frozen])
        before = (learner.calls, frozen.calls)
        returns = [play(env, learner, seed=100 * generation + game) for game in range(2)]
        learner.update(rng)
        assert frozen.calls > before[1] and learner.calls > before[0]
        assert np.array_equal(frozen.weights, frozen_weights)
        assert not np.array_equal(learner.weights, frozen_weights)
        assert all(-1.0 <= r <= 1.0 for r in returns)
