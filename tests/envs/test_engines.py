"""The environments step the same games on the native core as on the pure engine.

Each environment is made twice, with ``KUTNAHORA_ENGINE=python`` and ``=native``, and both play the same
seeded episodes with the same choices; every observation vector, action mask, reward, termination and
info must be equal (bit for bit), in the raw and the normalised form: PettingZoo's AEC loop (and its
global state), Gymnasium's single agent against random, policy and bot opponents, and OpenSpiel's legal
actions, observation and information-state tensors, returns and resampled worlds.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from kutnahora.engine import observe, state_hash
from kutnahora.learned.outcome import returns
from kutnahora.native import ENGINE_VARIABLE, NATIVE, PYTHON, native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")


def made_on(engine: str, make: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> Any:
    """What ``make`` makes with ``KUTNAHORA_ENGINE`` set to ``engine`` (the environments keep it)."""
    with monkeypatch.context() as patch:
        patch.setenv(ENGINE_VARIABLE, engine)
        return make()


def pettingzoo_episode(game: Any, seed: int) -> Iterator[tuple[Any, ...]]:
    """Every step of a random episode: the agent, its observation, mask, reward and ending, and (every
    tenth step) the global state."""
    game.reset(seed=seed)
    rng = random.Random(seed)
    for step, agent in enumerate(game.agent_iter()):
        observation, reward, termination, truncation, info = game.last()
        state = game.state().tobytes() if step % 10 == 0 else b""
        yield (
            agent,
            observation["observation"].tobytes(),
            observation["action_mask"].tobytes(),
            reward,
            termination,
            truncation,
            info,
            state,
        )
        if termination or truncation:
            game.step(None)
        else:
            game.step(int(rng.choice(np.flatnonzero(observation["action_mask"]))))


@pytest.mark.parametrize(("players", "normalized"), [(2, False), (3, True), (4, False)])
def test_pettingzoo_steps_the_same_episodes(
    players: int, normalized: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kutnahora.envs.pettingzoo_env import raw_env

    python = made_on(PYTHON, lambda: raw_env(players=players, normalized=normalized), monkeypatch)
    native = made_on(NATIVE, lambda: raw_env(players=players, normalized=normalized), monkeypatch)
    assert python.stepper.engine == PYTHON and native.stepper.engine == NATIVE
    for seed in range(3):
        steps = 0
        for ours, theirs in zip(
            pettingzoo_episode(python, seed), pettingzoo_episode(native, seed), strict=True
        ):
            assert ours == theirs, f"seed {seed}: step {steps} differs"
            steps += 1
        assert steps > 100
        assert state_hash(python.engine) == state_hash(native.engine)
        assert python.engine.over and native.engine.over


def pettingzoo_refusal(game: Any) -> str:
    game.reset(seed=4)
    mask = game.observe(game.agent_selection)["action_mask"]
    with pytest.raises(ValueError) as refused:
        game.step(int(np.flatnonzero(mask == 0)[0]))
    return str(refused.value)


def test_an_illegal_action_is_refused_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    from kutnahora.envs.pettingzoo_env import raw_env

    python = made_on(PYTHON, lambda: raw_env(players=3), monkeypatch)
    native = made_on(NATIVE, lambda: raw_env(players=3), monkeypatch)
    assert pettingzoo_refusal(python) == pettingzoo_refusal(native)
    assert python.engine.version == native.engine.version == 0


def first_legal(vector: npt.NDArray[np.float32], mask: npt.NDArray[np.int8]) -> int:
    """A policy: the legal id picked by the vector's sum (so that the vector matters)."""
    legal = np.flatnonzero(mask)
    return int(legal[int(vector.sum()) % len(legal)])


def gymnasium_episode(env: Any, seed: int) -> Iterator[tuple[Any, ...]]:
    observation, info = env.reset(seed=seed)
    rng = random.Random(seed)
    yield observation["observation"].tobytes(), observation["action_mask"].tobytes(), info
    terminated = False
    while not terminated:
        assert np.array_equal(env.action_masks(), observation["action_mask"])
        action = int(rng.choice(np.flatnonzero(observation["action_mask"])))
        observation, reward, terminated, truncated, info = env.step(action)
        yield (
            observation["observation"].tobytes(),
            observation["action_mask"].tobytes(),
            reward,
            terminated,
            truncated,
            info,
        )


@pytest.mark.parametrize(
    ("players", "opponents", "normalized"),
    [(2, "random", False), (3, "random", True), (4, first_legal, True), (2, "greedy", False)],
)
def test_gymnasium_steps_the_same_episodes(
    players: int, opponents: Any, normalized: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    from kutnahora.envs.gymnasium_env import KutnaHoraEnv

    def make() -> KutnaHoraEnv:
        return KutnaHoraEnv(players=players, seat=1, opponents=opponents, normalized=normalized)

    python = made_on(PYTHON, make, monkeypatch)
    native = made_on(NATIVE, make, monkeypatch)
    assert python.stepper.engine == PYTHON and native.stepper.engine == NATIVE
    episodes = 2 if opponents == "greedy" else 3
    for seed in range(episodes):
        steps = 0
        for ours, theirs in zip(
            gymnasium_episode(python, seed), gymnasium_episode(native, seed), strict=True
        ):
            assert ours == theirs, f"seed {seed}: step {steps} differs"
            steps += 1
        assert steps > 20
        assert state_hash(python.state) == state_hash(native.state)


def test_gymnasium_illegal_actions_end_the_episode_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    from kutnahora.envs.gymnasium_env import KutnaHoraEnv

    results = []
    for engine in (PYTHON, NATIVE):
        env = made_on(engine, lambda: KutnaHoraEnv(players=3), monkeypatch)
        observation, _ = env.reset(seed=2)
        illegal = int(np.flatnonzero(observation["action_mask"] == 0)[0])
        observation, reward, terminated, _, info = env.step(illegal)
        results.append((observation["observation"].tobytes(), reward, terminated, info["illegal_action"]))
    assert results[0] == results[1]
    assert results[0][1] == -1.0 and results[0][2]


def openspiel_episode(game: Any, seed: int) -> Iterator[tuple[Any, ...]]:
    """Every decision of a random game through pyspiel's API: the player, legal actions, every player's
    observation tensor and the acting one's information-state tensor; then the returns."""
    state = game.new_initial_state()
    rng = random.Random(seed)
    players = game.num_players()
    while not state.is_terminal():
        player = state.current_player()
        legal = state.legal_actions()
        tensors = [state.observation_tensor(p) for p in range(players)]
        yield player, legal, tensors, state.information_state_tensor(player), state.rewards()
        state.apply_action(rng.choice(legal))
    yield state.returns(), state.is_terminal(), state.current_player(), state_hash(state.engine)


@pytest.mark.parametrize(("players", "normalized"), [(2, True), (3, False), (4, False)])
def test_openspiel_plays_the_same_games(
    players: int, normalized: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    import pyspiel

    import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game

    name = f"python_kutna_hora(players={players},seed=9,normalized={str(normalized).lower()})"
    python = made_on(PYTHON, lambda: pyspiel.load_game(name), monkeypatch)
    native = made_on(NATIVE, lambda: pyspiel.load_game(name), monkeypatch)
    assert python.stepper.engine == PYTHON and native.stepper.engine == NATIVE
    for seed in range(2):
        decisions = 0
        for ours, theirs in zip(
            openspiel_episode(python, seed), openspiel_episode(native, seed), strict=True
        ):
            assert ours == theirs, f"game {seed}: decision {decisions} differs"
            decisions += 1
        assert decisions > 100


def test_openspiel_clones_observers_and_resampling_agree(monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspiel

    import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game

    name = "python_kutna_hora(players=3,seed=4)"
    states = []
    for engine in (PYTHON, NATIVE):
        game = made_on(engine, lambda: pyspiel.load_game(name), monkeypatch)
        state = game.new_initial_state()
        rng = random.Random(1)
        for _ in range(70):
            state.apply_action(rng.choice(state.legal_actions()))
        states.append((game, state))
    (python_game, ours), (native_game, theirs) = states
    for seat in range(3):
        assert ours.observation_string(seat) == theirs.observation_string(seat)
        assert ours.information_state_string(seat) == theirs.information_state_string(seat)
        mine, yours = (
            g.make_py_observer(pyspiel.IIGObservationType(perfect_recall=True))
            for g in (python_game, native_game)
        )
        mine.set_from(ours, seat)
        yours.set_from(theirs, seat)
        assert np.array_equal(mine.tensor, yours.tensor)
    copy = theirs.clone()
    copy.apply_action(copy.legal_actions()[0])
    assert state_hash(theirs.engine) == state_hash(ours.engine)  # the clone is independent
    worlds = [s.resample_from_infostate(1, lambda: 0.25) for s in (ours, theirs)]
    assert state_hash(worlds[0].engine) == state_hash(worlds[1].engine)
    assert worlds[0].legal_actions() == worlds[1].legal_actions()
    assert worlds[0].observation_tensor(1) == worlds[1].observation_tensor(1)
    back = native_game.deserialize_state(theirs.serialize())
    assert state_hash(back.engine) == state_hash(theirs.engine)
    assert back.observation_tensor(0) == theirs.observation_tensor(0)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_core_writes_every_seats_vector_as_the_engine_does(players: int) -> None:
    from kutnahora.engine import GameOptions, apply, legal, new_game
    from kutnahora.envs.stepping import CoreStepper
    from kutnahora.learned.actions import ActionSpace
    from kutnahora.learned.encoding import ObservationLayout

    layout = ObservationLayout()
    space = ActionSpace(layout.components)
    for normalized in (False, True):
        steps = CoreStepper(layout, space, normalized)
        for seed in range(2):
            options = GameOptions(players=players, events=seed == 1)
            state = new_game(options, 300 + seed)
            game = steps.new(options, 300 + seed)
            rng = random.Random(seed)
            while True:
                for viewer in (*range(players), None):  # every seat and the spectator, from scratch
                    expected = layout.encode(observe(state, viewer), normalized)
                    assert game.vector(viewer).tobytes() == expected.tobytes(), (state.version, viewer)
                    assert game.tensor(viewer) == expected.tolist()
                if state.over:
                    break
                assert game.ids() == space.ids(legal(state))
                index = rng.randrange(len(legal(state)))
                apply(state, legal(state)[index])
                game.apply(index)
            assert game.over and game.returns() == returns(state)
