"""Final scoring: city dots, mine rows, income, reputation, extras, and the winner."""

from __future__ import annotations

import pytest

from kutnahora.engine import GameResult, default_components, result
from kutnahora.engine.components import Commodity, Side
from kutnahora.engine.economy import income
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.scoring import mine_row_points, winners
from kutnahora.engine.state import GameState, Phase
from tests.engine.conftest import (
    build,
    claim,
    dig,
    finish_turns,
    give_rights,
    kind,
    named,
    play,
    started,
    texts,
)

SMITHY = named("Smithy")  # dots east and west
SAWMILL = named("Sawmill")  # dot west
GLASSWORKS = named("Glassworks")  # dots east, south, west
BAKERY = named("Bakery")  # dot south
CHURCH_OF_OUR_LADY = named("Church of Our Lady")  # public: dots north and south


def _by_stars(stars: int) -> tuple[int, ...]:
    return tuple(t.id for t in default_components().mine_tiles if t.stars == stars)


NO_STAR, ONE_STAR, TWO_STARS, THREE_STARS = (_by_stars(n) for n in range(4))


def _end(state: GameState) -> GameResult:
    """Play the last round out with no effect, every seat paying its (zero) tax; the final result."""
    state.round = state.components.rounds_tracks[state.options.players].rounds
    finish_turns(state)
    while state.phase is Phase.ROUND_END:
        assert kind(state) is DecisionKind.TAX
        play(state, "yes")
    outcome = result(state)
    assert outcome is not None
    return outcome


def test_city_dots_with_neighbours_and_board_edges() -> None:
    """000 · Game End · 1. Kutná Hora: award the owner of each building 1 point for each matching dot on an
    adjacent building or side of the board."""
    state = started(4)
    dots = state.components.building
    board = state.components.board_for(4)
    assert dots(SMITHY).dots.on(Side.WEST) and dots(SMITHY).dots.on(Side.EAST)
    assert dots(SAWMILL).dots.on(Side.WEST) and not dots(SAWMILL).dots.on(Side.EAST)
    assert board.edge_dot((2, 0), Side.WEST)
    build(state, (2, 0), SMITHY, 0)  # west: the board's dot; east: the Sawmill's west dot
    build(state, (2, 1), SAWMILL, 1)  # west: the Smithy's east dot
    outcome = _end(state)
    assert outcome.breakdown[0]["city"] == 2
    assert outcome.breakdown[1]["city"] == 1


def test_dots_need_a_matching_dot() -> None:
    """000 · How to Win · Matching dots: a dot scores only against a dot on the neighbouring building or
    on the board's side; a dot facing an empty square or a side without a dot scores nothing."""
    state = started(4)
    board = state.components.board_for(4)
    sawmill = state.components.building(SAWMILL).dots
    assert not board.edge_dot((3, 0), Side.WEST) and sawmill.on(Side.WEST)
    build(state, (3, 0), SAWMILL, 0)  # faces a side without a dot
    build(state, (4, 3), SAWMILL, 0)  # faces an empty square
    build(state, (1, 3), GLASSWORKS, 2)
    build(state, (1, 4), SAWMILL, 2)  # its west dot faces the Glassworks' east dot: 1 each
    assert state.components.building(GLASSWORKS).dots.on(Side.EAST)
    outcome = _end(state)
    assert outcome.breakdown[0]["city"] == 0
    assert outcome.breakdown[2]["city"] == 2


def test_public_buildings_score_no_dots_for_anyone() -> None:
    """004 · Public buildings: no points for their owner at the end — but your own buildings beside them
    can score more in city dots."""
    state = started(4)
    church = state.components.building(CHURCH_OF_OUR_LADY).dots
    bakery = state.components.building(BAKERY).dots
    assert church.on(Side.NORTH) and bakery.on(Side.SOUTH)
    build(state, (2, 2), CHURCH_OF_OUR_LADY, None)
    build(state, (1, 2), BAKERY, 3)  # its south dot meets the church's north dot
    outcome = _end(state)
    assert [b["city"] for b in outcome.breakdown] == [0, 0, 0, 1]


def _mines_game() -> GameState:
    state = started(4)
    state.rocks = {}  # the printed row stars alone: 0, 1, 2, 3 from the top row
    assert state.components.mine_area.row_stars == (0, 1, 2, 3)
    return state


def test_mine_row_tables() -> None:
    """000 · Game End · 2. Mines: a row's stars (printed, rocks and mines) set its worth: 0–5 stars
    2/1/0, 6–9 stars 3/2/1, 10+ stars 5/3/2."""
    state = _mines_game()
    # row 0: 3 + 2 + 0 = 5 stars
    dig(state, 0, (0, 0), THREE_STARS[0])
    dig(state, 1, (0, 1), TWO_STARS[0])
    # row 1: 1 printed + 3 + 2 + 1 = 7 stars
    dig(state, 0, (1, 0), THREE_STARS[1])
    dig(state, 1, (1, 1), TWO_STARS[1])
    dig(state, 2, (1, 2), ONE_STAR[1])
    # row 3: 3 printed + a 3-star rock + 3 + 2 + 1 = 12 stars
    state.rocks = {(3, 6): next(r.id for r in state.components.rock_tiles if r.stars == 3)}
    dig(state, 2, (3, 0), THREE_STARS[2])
    dig(state, 1, (3, 1), TWO_STARS[2])
    dig(state, 0, (3, 2), ONE_STAR[2])
    points = mine_row_points(state)
    assert points == {0: 2 + 3 + 2, 1: 1 + 2 + 3, 2: 0 + 1 + 5, 3: 0}
    outcome = _end(state)
    assert [b["mines"] for b in outcome.breakdown] == [7, 6, 6, 0]


def test_tie_for_second() -> None:
    """000 · Game End · 2. Mines: players tied for a place get its full value — tie for second means both
    get second place points, but no one gets third place points."""
    state = _mines_game()
    dig(state, 0, (1, 0), THREE_STARS[0])
    dig(state, 1, (1, 1), TWO_STARS[0])
    dig(state, 2, (1, 2), TWO_STARS[1])
    dig(state, 3, (1, 3), ONE_STAR[0])
    # 1 + 3 + 2 + 2 + 1 = 9 stars: 3 / 2 / 1
    assert mine_row_points(state) == {0: 3, 1: 2, 2: 2, 3: 0}


def test_tie_for_first() -> None:
    """000 · Game End · 2. Mines: tied players get the full value of the place; the next player is
    third."""
    state = _mines_game()
    dig(state, 0, (1, 0), TWO_STARS[0])
    dig(state, 1, (1, 1), TWO_STARS[1])
    dig(state, 2, (1, 2), ONE_STAR[0])
    # 1 + 2 + 2 + 1 = 6 stars: 3 / 2 / 1
    assert mine_row_points(state) == {0: 3, 1: 3, 2: 1, 3: 0}


def test_no_stars_no_points() -> None:
    """000 · Game End · 2. Mines: players with no stars get no points, even if they own a mine in the row."""
    state = _mines_game()
    dig(state, 0, (2, 0), ONE_STAR[0])
    dig(state, 1, (2, 1), NO_STAR[0])
    dig(state, 1, (2, 2), NO_STAR[1])
    assert mine_row_points(state) == {0: 2, 1: 0, 2: 0, 3: 0}


def test_income_divided_by_ten() -> None:
    """000 · Game End · 3. Income: your income at the final prices, divided by 10 and rounded down."""
    state = started(4)
    player = state.players[1]
    player.production[Commodity.BEER] = 5
    player.production[Commodity.FOOD] = 4
    player.mine_ore = 3
    final_income = income(state, 1)
    assert final_income % 10 != 0
    outcome = _end(state)
    assert outcome.breakdown[1]["income"] == final_income // 10
    assert outcome.breakdown[0]["income"] == 0


@pytest.mark.parametrize("reputation", [-5, -1, 0, 3, 9])
def test_reputation_points(reputation: int) -> None:
    """000 · Game End · 4. Reputation: gain or lose points for the final position of your marker."""
    state = started(4)
    state.players[2].reputation = reputation
    outcome = _end(state)
    assert outcome.breakdown[2]["reputation"] == state.components.reputation_points[reputation]


def test_extras() -> None:
    """000 · Game End · 5. Extras: 1 point for each building tile in a slot, each claimed plot you did
    not build on, each pelican token you did not use."""
    state = started(4)
    give_rights(state, 3, SAWMILL, CHURCH_OF_OUR_LADY)
    claim(state, 3, (1, 1), (4, 4))
    state.players[3].pelicans = 3
    state.players[3].pelicans_used = 4
    outcome = _end(state)
    assert outcome.breakdown[3]["extras"] == 2 + 2 + 3
    assert outcome.breakdown[0]["extras"] == 0


def test_total_adds_the_final_scoring_to_the_points_of_play() -> None:
    """000 · Game End: players have accumulated points during play; now the long-term strategies add."""
    state = started(4)
    state.players[0].points = 11
    state.players[0].pelicans = 2
    state.players[0].reputation = 5
    outcome = _end(state)
    parts = outcome.breakdown[0]
    assert parts["during_play"] == 11
    final = parts["city"] + parts["mines"] + parts["income"] + parts["reputation"] + parts["extras"]
    assert outcome.scores[0] == parts["total"] == 11 + final
    assert parts["extras"] == 2


def test_winner_most_points() -> None:
    """000 · Winning: the player with the most points wins."""
    state = started(3)
    state.players[1].points = 9
    assert _end(state).winners == (1,)


def test_winner_tie_broken_by_groschen() -> None:
    """000 · Winning: break ties in favour of the player with the most groschen left."""
    state = started(3)
    state.players[0].points = state.players[2].points = 9
    state.players[0].groschen = 50
    state.players[2].groschen = 51
    assert _end(state).winners == (2,)


def test_winner_still_tied_share_the_victory() -> None:
    """docs/rules.md#r13: players still tied share the victory (000 · Winning: unless they joust)."""
    state = started(3)
    for player in state.players:
        player.points, player.groschen = 9, 30
    state.players[1].groschen = 29
    outcome = _end(state)
    assert outcome.winners == (0, 2)
    assert winners(state) == [0, 2]
    assert texts(state) == []
