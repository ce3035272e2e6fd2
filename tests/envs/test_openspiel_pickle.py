"""The OpenSpiel game and its states pickle (through the game string and ``serialize()``), so they cross
process boundaries: OpenSpiel's own ``games_sim_test`` check with pickling on, and a process pool."""

from __future__ import annotations

import multiprocessing
import pickle

import pyspiel
import pytest
from open_spiel.python.tests import games_sim_test  # the module, not its TestCase (pytest would collect it)

import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game
from kutnahora.engine import state_hash


@pytest.mark.parametrize("players", [2, 4])
def test_games_sim_test_with_pickling(players: int) -> None:
    """OpenSpiel's simulation check with pickle on: the game, its type and a state every power of two
    actions round-trip (pyspiel's C++ serialize_game_and_state stays off: see the module's text)."""
    game = pyspiel.load_game(f"python_kutna_hora(players={players},seed=11)")
    checker = games_sim_test.GamesSimTest()
    checker.sim_game(game, check_pyspiel_serialization=False, check_pickle_serialization=True)


def test_an_unpickled_game_deals_the_games_the_original_would_deal_next() -> None:
    game = pyspiel.load_game("python_kutna_hora(players=3,seed=5)")
    game.new_initial_state().legal_actions()  # deals the first game of the sequence
    copy = pickle.loads(pickle.dumps(game))
    assert str(copy) == str(game)
    assert copy is not game
    theirs = copy.new_initial_state()
    ours = game.new_initial_state()
    assert theirs.legal_actions() == ours.legal_actions()
    assert state_hash(theirs.engine) == state_hash(ours.engine)


def test_an_unpickled_state_plays_on_exactly_as_the_original() -> None:
    game = pyspiel.load_game("python_kutna_hora(players=2,seed=9)")
    state = game.new_initial_state()
    for _ in range(30):
        state.apply_action(state.legal_actions()[-1])
    copy = pickle.loads(pickle.dumps(state))
    assert copy.history() == state.history()
    assert str(copy) == str(state)
    for player in range(2):
        assert copy.information_state_string(player) == state.information_state_string(player)
    for _ in range(40):
        action = state.legal_actions()[0]
        state.apply_action(action)
        copy.apply_action(action)
    assert state_hash(copy.engine) == state_hash(state.engine)  # the same future draws, too


def _play_out(state: pyspiel.State) -> list[float]:
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    return list(state.returns())


def test_states_travel_through_a_process_pool() -> None:
    game = pyspiel.load_game("python_kutna_hora(players=2,seed=3)")
    states = []
    for k in range(2):
        state = game.new_initial_state()
        for _ in range(5 + k):
            state.apply_action(state.legal_actions()[0])
        states.append(state)
    expected = [_play_out(pickle.loads(pickle.dumps(s))) for s in states]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        assert pool.map(_play_out, states) == expected
