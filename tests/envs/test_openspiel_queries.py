"""The OpenSpiel state's own answers to who is to play, whether the game is over and which actions are
legal agree with pyspiel's C++ ones and with the engine, at every decision of whole games and after a
clone, a round trip through ``serialize`` and a resampled world; a refused action changes nothing, and
pyspiel still records every applied action (``history``, ``move_number``)."""

from __future__ import annotations

import random

import pyspiel
import pytest

import kutnahora.envs.openspiel_game  # noqa: F401 - registers the game
from kutnahora.engine import state_hash
from kutnahora.envs.openspiel_game import KutnaHoraState


def load(text: str) -> pyspiel.Game:
    return pyspiel.load_game(text)


def check_queries(state: KutnaHoraState, players: int, recorded: bool = True) -> None:
    """Every query the state answers in Python, against pyspiel's C++ path and the engine's state;
    ``recorded``: pyspiel's record of the actions is the state's too (a resampled world starts with none)."""
    engine = state.engine
    seat = None if engine.pending is None else engine.pending.seat
    assert state.is_terminal() == engine.over == (seat is None)
    assert state.current_player() == (int(pyspiel.PlayerId.TERMINAL) if seat is None else seat)
    # pyspiel's C++ LegalActions asks the Python state for _legal_actions (and current_player, is_terminal)
    assert state.legal_actions() == pyspiel.State.legal_actions(state)
    mask = state.legal_actions_mask()
    assert [i for i, legal in enumerate(mask) if legal] == state.legal_actions()
    for player in range(players):
        ours = state.legal_actions(player)
        assert ours == pyspiel.State.legal_actions(state, player)
        assert ours == (state.legal_actions() if player == seat else [])
    if seat is not None:
        assert state.legal_actions() == sorted(state.game.space.ids(engine.pending.options))
        with pytest.raises(pyspiel.SpielError, match="pseudo-player"):
            state.legal_actions(int(pyspiel.PlayerId.CHANCE))
        with pytest.raises(pyspiel.SpielError, match="pseudo-player"):
            pyspiel.State.legal_actions(state, int(pyspiel.PlayerId.CHANCE))
    else:
        assert state.legal_actions() == state.legal_actions(int(pyspiel.PlayerId.CHANCE)) == []
    if recorded:
        assert state.move_number() == len(state.history()) == len(state.play.actions)
        assert state.history() == state.play.actions


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_state_answers_as_pyspiel_and_the_engine_do(players: int) -> None:
    game = load(f"python_kutna_hora(players={players},seed={players + 20})")
    state = game.new_initial_state()
    rng = random.Random(players)
    check_queries(state, players)
    decisions = 0
    while not state.is_terminal():
        if decisions % 23 == 5:
            copy = state.clone()
            check_queries(copy, players)
            back = game.deserialize_state(state.serialize())
            check_queries(back, players)
            sampler = pyspiel.UniformProbabilitySampler(0.0, 1.0)
            world = state.resample_from_infostate(state.current_player(), sampler)
            check_queries(world, players, recorded=False)
            copy.apply_action(copy.legal_actions()[0])  # moves the clone on, not the original
            check_queries(copy, players)
        state.apply_action(rng.choice(state.legal_actions()))
        decisions += 1
        check_queries(state, players)
    assert decisions > 50
    assert state.returns() == pyspiel.State.returns(state)


def test_a_refused_action_changes_nothing() -> None:
    game = load("python_kutna_hora(players=3,seed=6)")
    state = game.new_initial_state()
    for _ in range(12):
        state.apply_action(state.legal_actions()[-1])
    before = (state.current_player(), state.legal_actions(), state.history(), state.serialize())
    illegal = next(a for a in range(game.num_distinct_actions()) if a not in state.legal_actions())
    with pytest.raises(ValueError, match="is not legal for seat"):
        state.apply_action(illegal)
    assert (state.current_player(), state.legal_actions(), state.history(), state.serialize()) == before
    check_queries(state, 3)
    while not state.is_terminal():
        state.apply_action(state.legal_actions()[0])
    with pytest.raises(ValueError, match="the game is over"):
        state.apply_action(0)
    check_queries(state, 3)


def test_a_state_not_yet_dealt_deals_when_asked_who_plays() -> None:
    """A new state deals its game (from the game's next seed) on the first question, whichever it is."""
    first = load("python_kutna_hora(players=2,seed=13)")
    second = load("python_kutna_hora(players=2,seed=13)")
    asked = [first.new_initial_state() for _ in range(3)]
    told = [second.new_initial_state() for _ in range(3)]
    assert asked[0].is_terminal() is False
    asked[1].legal_actions(0)
    asked[2].current_player()
    for state in told:
        state.legal_actions()
    assert len({state_hash(s.engine) for s in asked}) == 3
    for ours, theirs in zip(asked, told, strict=True):
        assert state_hash(ours.engine) == state_hash(theirs.engine)
        assert ours.current_player() == theirs.current_player()
        check_queries(ours, 2)
