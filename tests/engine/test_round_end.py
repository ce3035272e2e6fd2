"""The end of a round: events, taxes, patrician scoring, the red-patrician buildings and the next round."""

from __future__ import annotations

import pytest

from kutnahora.engine.components import Color, Deck
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.rounds import rounds_in_game
from kutnahora.engine.state import GameState, Phase
from tests.engine.conftest import build, claim, dig, finish_turns, kind, named, play, repose, started, texts

SAWMILL = named("Sawmill")
BAKERY = named("Bakery")
CHURCH_OF_OUR_LADY = named("Church of Our Lady")
ST_JAMES = named("St. James Church")


def _to_taxes(state: GameState) -> None:
    finish_turns(state)
    assert kind(state) is DecisionKind.TAX or state.phase is not Phase.TURNS


def _answer_round_end(state: GameState, pay: bool = True) -> None:
    """Answer every round-end decision (taxes: pay or not) until the next round or the end."""
    while state.phase is Phase.ROUND_END:
        if kind(state) is DecisionKind.TAX:
            play(state, "yes" if pay else "no")
        else:
            play(state, texts(state)[-1])


def _penalty(state: GameState) -> int:
    return state.components.rounds_tracks[state.options.players].reputation_penalty[state.round - 1]


def test_event_advances_before_taxes() -> None:
    """000 · Setup for Next Round · Event Card: advance the population/ore deck if the event specifies,
    before taxes and scoring (docs/rules.md#r11)."""
    state = started(2)
    settlers = next(e for e in state.components.event_cards if e.population and e.ore == 0 and e.tax == 0)
    state.events[0] = settlers.id
    finish_turns(state)
    assert kind(state) is DecisionKind.TAX
    assert state.deck_position == {Deck.POPULATION: settlers.population, Deck.ORE: 0}


def test_pay_tax_or_lose_reputation() -> None:
    """000 · Round End Procedure · 1. Taxes: each player must either pay taxes or lose the reputation the
    rounds track shows for the round; the loss may be taken even with money to pay."""
    state = started(3)
    state.tax = 4
    finish_turns(state)
    assert kind(state) is DecisionKind.TAX and texts(state) == ["yes", "no"]
    assert state.pending is not None and state.pending.seat == 0
    play(state, "yes")
    play(state, "no")
    assert state.players[0].groschen == 36 and state.players[0].reputation == 0
    assert state.players[1].groschen == 41 and state.players[1].reputation == -_penalty(state)


def test_taxes_in_seat_order_from_the_starting_player() -> None:
    """docs/rules.md#r9: each player, in seat order from the starting player, chooses."""
    state = started(4)
    state.start_seat = 2
    repose(state, 2)
    finish_turns(state)
    seats = []
    while kind(state) is DecisionKind.TAX:
        assert state.pending is not None
        seats.append(state.pending.seat)
        play(state, "yes")
    assert seats == [2, 3, 0, 1]


@pytest.mark.parametrize(("plots", "surcharge"), [(0, 0), (1, 0), (2, 3), (3, 8)])
def test_plot_surcharge(plots: int, surcharge: int) -> None:
    """000 · Taxes · Plot surcharge: +3 groschen with two markers in Kutná Hora, +8 with all three."""
    state = started(4)
    state.tax = 5
    claim(state, 0, *[(1, c) for c in range(1, 1 + plots)])
    finish_turns(state)
    play(state, "yes")
    assert state.players[0].groschen == 40 - 5 - surcharge


def test_refusing_the_tax_skips_the_surcharge() -> None:
    """000 · Taxes: if you choose not to pay taxes, you don't pay the plot tax either."""
    state = started(4)
    state.tax = 5
    claim(state, 0, (1, 1), (1, 2), (1, 3))
    finish_turns(state)
    play(state, "no")
    assert state.players[0].groschen == 40 and state.players[0].reputation == -_penalty(state)


def test_cannot_pay_loses_reputation() -> None:
    """000 · Taxes: if you don't have enough money, you take the reputation loss and pay nothing."""
    state = started(4)
    state.tax = 6
    claim(state, 0, (1, 1), (1, 2))
    state.players[0].groschen = 8  # 6 + 3 due
    finish_turns(state)
    assert state.pending is not None and state.pending.seat == 1  # seat 0 was not asked
    assert state.players[0].groschen == 8 and state.players[0].reputation == -_penalty(state)


def test_reputation_penalty_follows_the_round() -> None:
    """000 · Taxes: lose the amount of reputation indicated for the current round."""
    state = started(4)
    state.round = 4
    state.tax = 1
    for player in state.players:
        player.groschen = 0
    finish_turns(state)  # nobody can pay: no decision, round 5 begins
    penalty = state.components.rounds_tracks[4].reputation_penalty[3]
    assert penalty != state.components.rounds_tracks[4].reputation_penalty[0]
    assert state.round == 5 and [p.reputation for p in state.players] == [-penalty] * 4


def _scoring_position(state: GameState) -> None:
    """Seat 0 owns two buildings beside public ones, used 5 pelicans, has mines and emptied columns."""
    build(state, (2, 2), SAWMILL, 0)
    build(state, (2, 4), BAKERY, 0)
    build(state, (2, 3), CHURCH_OF_OUR_LADY, None)  # beside both
    build(state, (1, 2), ST_JAMES, None)  # beside (2,2)
    state.players[0].pelicans_used = 5
    for square in ((0, 1), (1, 1), (2, 1), (3, 1)):
        dig(state, 0, square, 0)
    state.players[0].houses_removed = [2, 1, 3]


GREEN, SILVER, YELLOW, RED = 3, 2 * 3, 2, 1 * 3  # seat 0's points per patrician of each colour


@pytest.mark.parametrize(
    ("color", "count", "points"),
    [
        (Color.GREEN, 1, GREEN),
        (Color.GREEN, 2, 2 * GREEN),
        (Color.SILVER, 1, SILVER),
        (Color.YELLOW, 3, 3 * YELLOW),
        (Color.RED, 2, 2 * RED),
    ],
)
def test_patrician_scoring_formulas(color: Color, count: int, points: int) -> None:
    """000 · 2. Patrician Scoring: green 1 point per public building beside each of your buildings; silver
    3 per pair of used pelicans; yellow 2 with a mine in every row of the mines (4 with two); red 3 per
    column of your board with every house removed; each multiplied by that colour's patricians."""
    state = started(4, mine_setup_card=1)  # no rock in column 1 of the mines
    state.round = 3
    _scoring_position(state)
    state.council[color] = count
    _to_taxes(state)
    _answer_round_end(state)
    assert state.players[0].points == points
    assert all(p.points == 0 for p in state.players[1:])


def test_yellow_with_two_mines_in_every_row() -> None:
    """000 · 2. Patrician Scoring · Yellow: at least 2 mines in each row gains 4 points."""
    state = started(4, mine_setup_card=1)  # rocks at (1,2), (2,5), (3,0), (3,4)
    state.round = 3
    for square in ((0, 1), (0, 2), (1, 0), (1, 1), (2, 0), (2, 1), (3, 1), (3, 2)):
        dig(state, 0, square, 0)
    for square in ((0, 3), (1, 3), (2, 3)):
        dig(state, 1, square, 0)  # no mine in the bottom row: nothing
    state.council[Color.YELLOW] = 1
    _to_taxes(state)
    _answer_round_end(state)
    assert [p.points for p in state.players] == [4, 0, 0, 0]


@pytest.mark.parametrize(("players", "rounds"), [(4, (3, 4, 5)), (3, (4, 5, 6)), (2, (4, 5, 6))])
def test_patrician_scoring_in_the_final_three_rounds_only(players: int, rounds: tuple[int, ...]) -> None:
    """000 · How to Win and docs/rules.md#r8: patricians score after taxes at the end of each of the final
    three rounds, and only then."""
    for round_number in range(1, rounds_in_game(started(players)) + 1):
        state = started(players)
        state.round = round_number
        state.events = []
        state.players[0].pelicans_used = 2
        state.council[Color.SILVER] = 1
        _to_taxes(state)
        _answer_round_end(state)
        assert state.players[0].points == (3 if round_number in rounds else 0), round_number


def test_patrician_scoring_comes_after_taxes() -> None:
    """000 · 2. Patrician Scoring: at the ends of each of the final 3 rounds, after taxes."""
    state = started(4)
    state.round = 3
    state.players[0].pelicans_used = 2
    state.council[Color.SILVER] = 1
    _to_taxes(state)
    assert state.players[0].points == 0
    play(state, "yes", "yes", "yes")
    assert state.players[0].points == 0  # the last seat has not yet decided
    play(state, "yes")
    assert state.players[0].points == 3


@pytest.mark.parametrize(("players", "arrival"), [(4, 2), (3, 3), (2, 3)])
def test_red_patrician_buildings_arrive(players: int, arrival: int) -> None:
    """000 · 3. Setup for Next Round: the red-patrician buildings come into play at the end of round 2
    with four players, round 3 with two or three; shuffle them and place one at the end of each row."""
    state = started(players)
    red = set(state.red_stack)
    while state.round < arrival:
        _to_taxes(state)
        _answer_round_end(state)
        assert all(s.label != "red" for row in state.town_hall for s in row)
    _to_taxes(state)
    lengths = [len(row) for row in state.town_hall]
    _answer_round_end(state)
    assert state.round == arrival + 1
    assert [len(row) for row in state.town_hall] == [n + 1 for n in lengths]
    assert all(row[-1].label == "red" and len(row[-1].tiles) == 1 for row in state.town_hall)
    assert {row[-1].tiles[0] for row in state.town_hall} == red and state.red_stack == []


def test_next_round_event_is_revealed_and_taxes_rise() -> None:
    """000 · Setup for Next Round · Event Card: when setting up the new round, reveal the next event card;
    if it increases taxes, advance the tax counter."""
    state = started(2)
    levy = next(e for e in state.components.event_cards if e.tax and e.deck == "A")
    state.events[1] = levy.id
    state.tax = 3
    _to_taxes(state)
    _answer_round_end(state)
    assert state.round == 2 and state.tax == 3 + levy.tax


@pytest.mark.parametrize(("players", "rounds"), [(2, 6), (3, 6), (4, 5)])
def test_game_length(players: int, rounds: int) -> None:
    """000 · Game End: a four-player game ends after 5 rounds, a two- or three-player game after 6."""
    state = started(players)
    played = 0
    while not state.over:
        _to_taxes(state)
        _answer_round_end(state, pay=False)
        played += 1
    assert played == rounds and state.round == rounds
    assert state.pending is None and state.final_scores is not None


def test_start_player_and_cards_at_the_next_round() -> None:
    """000 · 3. Setup for Next Round: the starting player marker moves to the next player on the left, and
    all players pick up their action cards."""
    state = started(3)
    for expected in (1, 2, 0):
        _to_taxes(state)
        _answer_round_end(state)
        assert state.start_seat == expected
        assert all(sorted(p.hand) == [1, 2, 3, 4, 5, 6] for p in state.players)
        assert state.pending is not None and state.pending.seat == expected
