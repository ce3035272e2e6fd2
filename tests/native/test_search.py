"""The search bot's rollouts in the native core: the same draws, the same games, the same decisions."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from kutnahora.clients.bots.mcts import ROLLOUTS, rewards, search
from kutnahora.engine import GameOptions, Observation, apply, legal, new_game, observe
from kutnahora.engine.game import state_hash
from kutnahora.native import NATIVE, PYTHON, native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")


@pytest.mark.parametrize("policy", sorted(ROLLOUTS))
def test_a_rollout_plays_the_python_policys_game(policy: str) -> None:
    from kutnahora.native.game import rollout

    for seed in range(12):
        state = new_game(GameOptions(players=2 + seed % 3), seed)
        chooser = random.Random(seed)
        for _ in range(chooser.randrange(0, 150)):
            if state.over:
                break
            apply(state, chooser.choice(legal(state)))
        if state.over:
            continue
        before = state_hash(state)
        python_rng, native_rng = random.Random(seed + 99), random.Random(seed + 99)
        points, won = rollout(state, policy, native_rng)
        assert state_hash(state) == before  # the engine's state is left as it was
        while state.pending is not None:
            apply(state, ROLLOUTS[policy](state, python_rng))
        assert points == [p.points for p in state.players]
        assert rewards(state) == rewards_from(points, won)
        assert native_rng.getstate() == python_rng.getstate()  # the same draws, no more, no fewer


def rewards_from(points: list[int], won: list[int]) -> list[float]:
    from kutnahora.clients.bots.mcts import rewards_of

    return rewards_of([float(p) for p in points], won)


def test_a_search_decides_alike_with_either_engine() -> None:
    for seed in range(6):
        view = drawn_view(seed, 20 + 7 * seed)
        if len(view.pending.options) < 2:  # type: ignore[union-attr]
            continue
        found = {
            engine: search(view, random.Random(seed), iterations=25, engine=engine)
            for engine in (PYTHON, NATIVE)
        }
        assert found[PYTHON].option == found[NATIVE].option
        assert found[PYTHON].visits == found[NATIVE].visits
        assert found[PYTHON].value == pytest.approx(found[NATIVE].value)


def drawn_view(seed: int, moves: int) -> Observation:
    """The deciding seat's view after ``moves`` random moves of a 2-, 3- or 4-player game (by ``seed``)."""
    state = new_game(GameOptions(players=2 + seed % 3), seed)
    chooser = random.Random(seed)
    for _ in range(moves):
        apply(state, chooser.choice(legal(state)))
    assert state.pending is not None
    return observe(state, state.pending.seat)


def test_a_guided_search_decides_alike_with_either_engine() -> None:
    """With a guide (as neural-mcts searches), the guide is asked about the same states either way."""
    from kutnahora.engine import GameState
    from kutnahora.engine.options import Option

    asked: dict[str, list[int]] = {PYTHON: [], NATIVE: []}

    def guide_for(engine: str) -> Callable[[GameState, tuple[Option, ...]], list[float]]:
        def guide(state: GameState, options: tuple[Option, ...]) -> list[float]:
            # scores that depend on hidden parts too, so that a different state would be searched differently
            salt = (
                sum(p.groschen for p in state.players)
                + sum(state.mine_stack[-3:])
                + state.rng.getstate()[1][5] % 7
            )
            asked[engine].append(salt)
            return [float((salt * 31 + 7 * i) % 11) for i in range(len(options))]

        return guide

    for seed in range(4):
        view = drawn_view(seed, 25 + 9 * seed)
        found = {
            engine: search(
                view, random.Random(seed), iterations=30, engine=engine, guide=guide_for(engine), top=2
            )
            for engine in (PYTHON, NATIVE)
        }
        assert found[PYTHON].option == found[NATIVE].option
        assert found[PYTHON].visits == found[NATIVE].visits
    assert asked[PYTHON] == asked[NATIVE] and asked[PYTHON]


def test_the_networks_scores_read_from_the_core_are_the_engines() -> None:
    """The guided search on the core scores its drawn games from the vector the core writes: the very
    logits the network gives of the engine's copy of the state, at every decision of 2-, 3- and 4-player
    games, for every seat's decision."""
    from kutnahora.clients.bots.mcts import tree_options
    from kutnahora.clients.bots.neural import NeuralBot
    from kutnahora.native.game import NativeGame

    evaluator = NeuralBot(candidates=4, simulations=10).evaluator
    scored = 0
    for seed in range(3):
        state = new_game(GameOptions(players=2 + seed), 40 + seed)
        chooser = random.Random(seed)
        while state.pending is not None:
            options = tree_options(state)
            if len(options) > 1:
                game = NativeGame.from_state(state)
                assert evaluator.native_scores(game, options) == evaluator.scores(state, options)
                scored += 1
            apply(state, chooser.choice(legal(state)))
    assert scored > 300


def test_the_guided_search_decides_alike_reading_the_core() -> None:
    """neural-mcts on the core (its guide reading the core's games) searches the tree the engine's
    guided search searches: the same choice and the same visits."""
    from kutnahora.clients.bots.neural import NeuralBot

    evaluator = NeuralBot(candidates=4, simulations=10).evaluator
    for seed in range(4):
        view = drawn_view(seed, 30 + 11 * seed)
        found = {
            engine: search(
                view,
                random.Random(seed),
                iterations=30,
                engine=engine,
                guide=evaluator.scores,
                native_guide=evaluator.native_scores if engine == NATIVE else None,
                top=2,
            )
            for engine in (PYTHON, NATIVE)
        }
        assert found[PYTHON].option == found[NATIVE].option
        assert found[PYTHON].visits == found[NATIVE].visits
