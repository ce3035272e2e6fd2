"""The OpenSpiel game passes OpenSpiel's own random-simulation checks, resamples from a seat's information
state, and plays a game with OpenSpiel's IS-MCTS bot against its uniform random bot."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts, mcts
from open_spiel.python.bots import uniform_random
from open_spiel.python.observation import make_observation

from kutnahora.engine import observe, state_hash
from kutnahora.envs.openspiel_game import KutnaHoraState, max_game_length
from kutnahora.learned.encoding import ObservationLayout

LAYOUT = ObservationLayout()


def load(text: str) -> pyspiel.Game:
    return pyspiel.load_game(text)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_openspiel_random_simulation_checks(players: int) -> None:
    """pyspiel.random_sim_test plays random games and checks the API's consistency as it goes (legal
    actions, observations and information states for every player, clones, returns, game length)."""
    game = load(f"python_kutna_hora(players={players},seed={players})")
    pyspiel.random_sim_test(game, num_sims=1, serialize=False, verbose=False)


def test_the_game_string_carries_the_options() -> None:
    game = load("python_kutna_hora(players=3,events=True,seed=7)")
    assert game.num_players() == 3
    assert game.get_type().chance_mode == pyspiel.GameType.ChanceMode.SAMPLED_STOCHASTIC
    assert game.get_type().information == pyspiel.GameType.Information.IMPERFECT_INFORMATION
    assert game.num_distinct_actions() == 240
    assert game.max_game_length() == max_game_length(3) == 2 * 3 + 16 * 6 * 5 * 3
    assert (game.min_utility(), game.max_utility(), game.utility_sum()) == (-1.0, 1.0, 0.0)
    state = game.new_initial_state()
    assert isinstance(state, KutnaHoraState)
    assert state.engine.options.events and len(state.engine.players) == 3
    with pytest.raises(ValueError, match="2, 3 or 4 players"):
        load("python_kutna_hora(players=5)")


def test_a_seed_reproduces_the_sequence_of_games_and_clones_take_no_seed() -> None:
    first = load("python_kutna_hora(players=2,seed=11)")
    second = load("python_kutna_hora(players=2,seed=11)")
    a1 = first.new_initial_state()
    for _ in range(3):
        a1.clone()
    a2 = first.new_initial_state()
    b1, b2 = second.new_initial_state(), second.new_initial_state()
    assert state_hash(a1.engine) == state_hash(b1.engine)
    assert state_hash(a2.engine) == state_hash(b2.engine)
    assert state_hash(a1.engine) != state_hash(a2.engine)


def test_a_clone_is_independent_and_equal() -> None:
    game = load("python_kutna_hora(players=3,seed=2)")
    state = game.new_initial_state()
    for _ in range(30):
        state.apply_action(state.legal_actions()[0])
    copy = state.clone()
    assert state_hash(copy.engine) == state_hash(state.engine)
    assert copy.history() == state.history()
    assert copy.information_state_string(1) == state.information_state_string(1)
    before = state_hash(state.engine)
    copy.apply_action(copy.legal_actions()[-1])
    assert state_hash(state.engine) == before


def test_a_state_serializes_and_comes_back_equal() -> None:
    """game.deserialize_state(state.serialize()) gives the same position, history and information states.
    (random_sim_test's own serialize check also asks for the game's random state, which pyspiel cannot
    take from a Python game, so the checks above run with serialize=False.)"""
    game = load("python_kutna_hora(players=3,seed=4)")
    state = game.new_initial_state()
    for _ in range(25):
        state.apply_action(state.legal_actions()[-1])
    back = game.deserialize_state(state.serialize())
    assert state_hash(back.engine) == state_hash(state.engine)
    assert back.history() == state.history()
    assert back.information_state_string(1) == state.information_state_string(1)
    assert back.legal_actions() == state.legal_actions()


def test_tensors_are_the_seats_vectors() -> None:
    game = load("python_kutna_hora(players=4,seed=5)")
    state = game.new_initial_state()
    rng = np.random.default_rng(5)
    for _ in range(50):
        state.apply_action(int(rng.choice(state.legal_actions())))
    for player in range(4):
        vector = LAYOUT.encode(observe(state.engine, player))
        assert np.array_equal(np.asarray(state.observation_tensor(player), np.float32), vector)
        # pyspiel's own path (through the registered observer) gives the same numbers.
        assert pyspiel.State.observation_tensor(state, player) == state.observation_tensor(player)
        assert pyspiel.State.information_state_tensor(state, player) == state.information_state_tensor(player)
        info = np.asarray(state.information_state_tensor(player), np.float32)
        assert np.array_equal(info[: LAYOUT.size], vector)
        assert info[LAYOUT.size :].sum() == len(state.play.shown[player])
    public = make_observation(
        game,
        pyspiel.IIGObservationType(
            public_info=True, perfect_recall=False, private_info=pyspiel.PrivateInfoType.NONE
        ),
    )
    public.set_from(state, 0)
    assert np.array_equal(public.tensor, LAYOUT.encode(observe(state.engine, None)))


def test_resampling_keeps_what_the_seat_knows_and_redraws_the_rest() -> None:
    game = load("python_kutna_hora(players=3,seed=9)")
    state = game.new_initial_state()
    rng = np.random.default_rng(9)
    for _ in range(40):
        state.apply_action(int(rng.choice(state.legal_actions())))
    player = state.current_player()
    sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
    stacks = set()
    for _ in range(5):
        world = state.resample_from_infostate(player, sampler)
        assert world.information_state_string(player) == state.information_state_string(player)
        assert world.observation_tensor(player) == state.observation_tensor(player)
        assert world.legal_actions() == state.legal_actions()
        stacks.add(tuple(world.engine.mine_stack))
    assert len(stacks) > 1, "five resampled worlds all had the same mine stack"


def test_ismcts_plays_a_game_against_the_uniform_random_bot() -> None:
    """OpenSpiel's IS-MCTS (resampling worlds from its information state) against its uniform random bot."""
    game = load("python_kutna_hora(players=2,seed=3)")
    rng = np.random.RandomState(1)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=rng)
    search = ismcts.ISMCTSBot(game, evaluator, uct_c=1.5, max_simulations=8, random_state=rng)
    random_bot = uniform_random.UniformRandomBot(1, rng)
    state = game.new_initial_state()
    searched = 0
    while not state.is_terminal():
        if state.current_player() == 0:
            action = search.step(state)
            searched += 1
        else:
            action = random_bot.step(state)
        assert action in state.legal_actions()
        state.apply_action(action)
    assert searched > 20
    returns = state.returns()
    assert sum(returns) == 0.0 and returns[0] in (-1.0, 0.0, 1.0)


def test_the_process_exits_cleanly_when_the_module_is_gone() -> None:
    """pyspiel's registry releases the game's factory after the interpreter has finished; with no Python
    reference left by then (the module dropped), that must not abort the process."""
    script = (
        "import sys, kutnahora.envs, kutnahora.envs.openspiel_game as m\n"
        "del sys.modules['kutnahora.envs.openspiel_game'], kutnahora.envs.openspiel_game\n"
        "m.__dict__.clear()\n"
        "del m\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr[-500:]
