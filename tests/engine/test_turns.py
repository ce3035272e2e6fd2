"""Rounds and turns: 2-2-1 cards, seat order, the starting player, the action cards and the Joker."""

from __future__ import annotations

import pytest

from kutnahora.engine import NotAnOption, NotYourTurn, apply, parse_option, state_hash
from kutnahora.engine.components import Action, Color
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import Phase
from tests.engine.conftest import finish_turns, kind, play, repose, started, texts


def _seats_of_one_round(players: int) -> list[int]:
    state = started(players)
    seats = []
    while state.phase is Phase.TURNS:
        assert state.pending is not None
        seats.append(state.pending.seat)
        play(state, f"play {min(state.players[state.pending.seat].hand)} none")
    return seats


@pytest.mark.parametrize("players", [2, 3, 4])
def test_two_two_one_cards_in_seat_order(players: int) -> None:
    """002 · A round: the starting player goes first and play goes clockwise; everyone takes 3 turns,
    2 cards on the first turn, 2 on the second, 1 on the third."""
    order = list(range(players))
    expected = [s for s in order for _ in range(2)] * 2 + order
    assert _seats_of_one_round(players) == expected


def test_five_of_six_cards_are_played() -> None:
    """000 · Round Structure: the round ends once all players have played 5 of their 6 cards."""
    state = started(3)
    finish_turns(state)
    assert state.phase is Phase.ROUND_END
    assert all(len(p.hand) == 1 for p in state.players)


def test_cards_come_back_and_start_player_moves_left() -> None:
    """002 · A round · 4: everyone takes all 6 cards back and the starting player marker moves one seat
    left; the new starting player starts the new round."""
    state = started(4)
    finish_turns(state)
    while state.phase is Phase.ROUND_END:
        play(state, "yes" if kind(state) is DecisionKind.TAX else texts(state)[0])
    assert state.round == 2 and state.start_seat == 1
    assert all(sorted(p.hand) == [1, 2, 3, 4, 5, 6] for p in state.players)
    assert state.pending is not None and state.pending.seat == 1 and kind(state) is DecisionKind.PLAY_CARD
    seats = []
    while state.phase is Phase.TURNS:
        assert state.pending is not None
        seats.append(state.pending.seat)
        play(state, f"play {min(state.players[state.pending.seat].hand)} none")
    assert seats == [1, 1, 2, 2, 3, 3, 0, 0] * 2 + [1, 2, 3, 0]


def test_action_cards_pairs() -> None:
    """002 · Action cards and docs/rules.md#r1: 1 Rights/Income, 2 Plot/Mine, 3 Building/Plot, 4 Mine/Joker,
    5 Income/Building, 6 St. Barbara/Rights."""
    cards = {c.number: (c.top, c.bottom) for c in started(2).components.action_cards}
    assert cards == {
        1: (Action.RIGHTS, Action.INCOME),
        2: (Action.PLOT, Action.MINE),
        3: (Action.BUILDING, Action.PLOT),
        4: (Action.MINE, Action.JOKER),
        5: (Action.INCOME, Action.BUILDING),
        6: (Action.ST_BARBARA, Action.RIGHTS),
    }


def test_a_card_offers_only_its_own_halves() -> None:
    """002 · Your turn: choose a card from your hand and do one of its two actions."""
    state = started(4)
    options = texts(state)
    assert "play 1 rights" in options and "play 1 income" in options
    assert "play 1 mine" not in options and "play 2 income" not in options


def test_a_played_card_is_spent_until_the_round_ends() -> None:
    """000 · Round Structure: once played, the card cannot be used again for the rest of the round."""
    state = started(4)
    play(state, "play 1 income")
    assert 1 not in state.players[0].hand
    assert not [t for t in texts(state) if t.startswith("play 1 ")]
    before = state_hash(state)
    with pytest.raises(NotAnOption):
        apply(state, parse_option("play 1 rights"))
    assert state_hash(state) == before


def test_only_the_seat_owing_the_decision_may_answer() -> None:
    """002 · Your turn: only the player whose turn it is plays a card (STYLE 5: nothing half-applied)."""
    state = started(4)
    before = state_hash(state)
    with pytest.raises(NotYourTurn):
        apply(state, parse_option("play 1 income"), seat=1)
    assert state_hash(state) == before


def test_play_for_no_effect_is_always_offered() -> None:
    """001 · Special Cases · Ignoring actions (docs/rules.md#r3): any card may be played for no effect, so a
    player is never stuck, even when nothing could have an effect."""
    state = started(4)
    player = state.players[0]
    player.groschen = 0
    player.miners_pool = player.miners_reserve = 0
    player.reputation = -5
    repose(state)
    options = texts(state)
    assert {f"play {n} none" for n in range(1, 7)} <= set(options)
    before = (player.groschen, player.reputation, player.points)
    play(state, "play 3 none")
    assert (player.groschen, player.reputation, player.points) == before
    assert 3 not in player.hand


def test_no_effect_remains_offered_for_every_card_in_hand() -> None:
    """001 · Special Cases · Ignoring actions: every card in hand, at every turn, may be played for no
    effect."""
    state = started(2)
    while state.phase is Phase.TURNS:
        assert state.pending is not None
        hand = state.players[state.pending.seat].hand
        assert {f"play {n} none" for n in hand} <= set(texts(state))
        play(state, texts(state)[-1])


def test_the_second_card_follows_the_first_action() -> None:
    """docs/rules.md#r2: the second card of a turn is played after the first card's action is fully
    resolved."""
    state = started(4)
    state.patrician_pool[Color.GREEN] = 1
    play(state, "play 1 income")
    assert kind(state) is DecisionKind.SEAT_PATRICIAN  # the first action is still being resolved
    play(state, "skip")
    assert kind(state) is DecisionKind.PLAY_CARD and state.pending is not None and state.pending.seat == 0
    play(state, "play 2 plot")
    assert kind(state) is DecisionKind.PLOT_SQUARE
    play(state, "square 2,2")
    assert state.pending is not None and state.pending.seat == 1


def test_joker_costs_one_reputation() -> None:
    """003 · The Joker: take any one of the other actions; first lose 1 reputation."""
    state = started(4)
    play(state, "play 4 joker")
    assert state.players[0].reputation == -1
    assert kind(state) is DecisionKind.JOKER_ACTION
    assert texts(state) == ["action mine", "action rights", "action plot", "action income"]
    play(state, "action income")
    assert kind(state) is DecisionKind.PLAY_CARD


@pytest.mark.parametrize(("reputation", "after"), [(5, 4), (6, 6), (9, 9)])
def test_joker_is_free_at_reputation_six(reputation: int, after: int) -> None:
    """000 · Reputation: at reputation 6 or more, using the Joker no longer costs any reputation."""
    state = started(4)
    state.players[0].reputation = reputation
    repose(state)
    play(state, "play 4 joker", "action income")
    assert state.players[0].reputation == after


def test_joker_at_the_bottom_of_the_track_costs_points() -> None:
    """000 · Reputation · Beyond the track ends: each step off the negative end loses 2 points instead."""
    state = started(4)
    state.players[0].reputation = -5
    repose(state)
    play(state, "play 4 joker")
    assert (state.players[0].reputation, state.players[0].points) == (-5, -2)


def test_joker_cost_is_judged_before_the_plot_discount() -> None:
    """003 · The Joker and 000 · Reputation: the Joker first costs 1 reputation, so at reputation 3 a
    Joker plot is no longer discounted to 1 groschen."""
    state = started(4)
    player = state.players[0]
    player.reputation = 3
    player.groschen = 4  # enough for a 1-groschen plot, not for a 5-groschen one
    repose(state)
    assert "play 2 plot" in texts(state)
    assert "play 4 joker" in texts(state)
    play(state, "play 4 joker")
    assert player.reputation == 2
    assert "action plot" not in texts(state)
