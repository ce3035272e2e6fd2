"""The St. Barbara action and its eleven tiles."""

from __future__ import annotations

import pytest

from kutnahora.engine.components import Color, Commodity, Guild, Side
from kutnahora.engine.economy import income, price
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import GameState
from tests.engine.conftest import (
    build,
    claim,
    dig,
    give_rights,
    kind,
    named,
    play,
    repose,
    set_guilds,
    stack_top,
    started,
    texts,
)

SMITHY = named("Smithy")  # dots east and west
SAWMILL = named("Sawmill")  # a dot on the west side
NOTARY = named("Notary")  # scribes: flips St. Barbara
BAKERY = named("Bakery")
CHURCH_OF_OUR_LADY = named("Church of Our Lady")
ST_JAMES = named("St. James Church")
CORPUS_CHRISTI = named("Corpus Christi Chapel")


def _at_tile(number: int, pelicans: int = 1, **fields: object) -> GameState:
    """Seat 0 to play, with unused pelicans and St. Barbara tile ``number`` current."""
    state = started(4, mine_setup_card=1)
    set_guilds(state, 0, Guild.GROCERS, Guild.SCRIBES, Guild.BUILDERS)
    player = state.players[0]
    player.pelicans = pelicans
    for name, value in fields.items():
        setattr(player, name, value)
    state.barbara_next = number
    repose(state)
    return state


def test_needs_an_unused_pelican() -> None:
    """003 · The St. Barbara action: turn one unused pelican token (no unused token: no St. Barbara
    action)."""
    state = _at_tile(1, pelicans=0, pelicans_used=3)
    assert "play 6 st_barbara" not in texts(state)
    play(state, "play 4 joker")
    assert "action st_barbara" not in texts(state)
    state = _at_tile(1, pelicans=2)
    assert "play 6 st_barbara" in texts(state)
    play(state, "play 6 st_barbara")
    assert (state.players[0].pelicans, state.players[0].pelicans_used) == (1, 1)
    assert state.barbara_next == 2


def test_tile_1_gain_two_reputation() -> None:
    """004 · The eleven tiles · Tile 1: gain 2 reputation."""
    state = _at_tile(1)
    play(state, "play 6 st_barbara")
    assert state.players[0].reputation == 2 and state.barbara_next == 2


def test_tile_2_free_rights() -> None:
    """004 · Tile 2: gain 1 reputation; a Rights action with the tile free."""
    state = _at_tile(2)
    public = state.town_hall[0][2].tiles[-1]  # the 2-permit column
    play(state, "play 6 st_barbara")
    assert state.players[0].reputation == 1
    assert kind(state) is DecisionKind.RIGHTS_TILE and texts(state)[-1] == "skip"
    play(state, f"tile {public}")
    assert state.players[0].slots == [public] and state.players[0].groschen == 40


def test_tile_2_rights_may_be_skipped() -> None:
    """001 · Special Cases · Ignoring actions: a St. Barbara action may ignore the middle effect."""
    state = _at_tile(2)
    play(state, "play 6 st_barbara", "skip")
    assert state.players[0].reputation == 1 and state.players[0].slots == []


def test_tile_3_house_for_production() -> None:
    """004 · Tile 3: lose 1 reputation; remove the leftmost house of one guild (no house effect) and raise
    that production by 2."""
    state = _at_tile(3)
    play(state, "play 6 st_barbara")
    player = state.players[0]
    assert player.reputation == -1
    assert kind(state) is DecisionKind.BARBARA_HOUSE
    assert texts(state) == ["guild grocers", "guild scribes", "guild builders", "skip"]
    pelicans, points = player.pelicans, player.points
    play(state, "guild scribes")
    assert player.houses_removed == [0, 1, 0]
    assert player.production[Commodity.PERMITS] == 2
    assert (player.reputation, player.pelicans, player.points) == (-1, pelicans, points)  # no house reward


def test_tile_3_reputation_loss_is_not_optional() -> None:
    """001 · Special Cases: on tile 3 you must lose 1 reputation, but you can choose to not remove a
    house (docs/rules.md#r12)."""
    state = _at_tile(3)
    play(state, "play 6 st_barbara", "skip")
    player = state.players[0]
    assert player.reputation == -1 and player.houses_removed == [0, 0, 0]
    assert all(v == 0 for v in player.production.values())


def test_tile_4_free_plot_anywhere() -> None:
    """004 · Tile 4: gain 1 reputation; a free Plot action on any free square, not required to be next to
    a building."""
    state = _at_tile(4)
    build(state, (2, 2), SAWMILL, 1)
    board = state.components.board_for(4)
    play(state, "play 6 st_barbara")
    assert state.players[0].reputation == 1
    assert kind(state) is DecisionKind.PLOT_SQUARE
    assert len(texts(state)) == len(board.squares())  # every square but the built one, and skip
    play(state, "square 5,3")
    assert state.players[0].plots == [(5, 3)] and state.players[0].groschen == 40


def test_tile_4_needs_a_plot_marker() -> None:
    """001 · Special Cases · Running out of pieces: without a plot marker the plot has no effect."""
    state = _at_tile(4)
    claim(state, 0, (1, 1), (1, 2), (1, 3))
    play(state, "play 6 st_barbara")
    assert state.players[0].reputation == 1 and kind(state) is DecisionKind.PLAY_CARD


def test_tile_5_two_income_actions() -> None:
    """004 · Tile 5: lose 2 reputation; 2 Income actions (2 chances to seat a patrician)."""
    state = _at_tile(5)
    player = state.players[0]
    player.production[Commodity.FOOD] = 3
    state.patrician_pool[Color.GREEN] = 2
    gained = income(state, 0)
    assert gained == 3 * price(state, Commodity.FOOD)
    play(state, "play 6 st_barbara")
    assert player.reputation == -2
    assert kind(state) is DecisionKind.SEAT_PATRICIAN and player.groschen == 40 + gained
    play(state, "patrician green")
    assert kind(state) is DecisionKind.SEAT_PATRICIAN and player.groschen == 40 + 2 * gained - 10
    play(state, "patrician green")
    assert player.groschen == 40 + 2 * gained - 20 and state.council[Color.GREEN] == 2


def test_tile_5_reputation_loss_is_not_optional() -> None:
    """docs/rules.md#r12: the reputation loss of tile 5 may not be skipped."""
    state = _at_tile(5, reputation=-4)
    play(state, "play 6 st_barbara")
    assert (state.players[0].reputation, state.players[0].points) == (-5, -2)


def test_tile_6_points_and_a_patrician_from_the_bank() -> None:
    """004 · Tile 6: score 2; take a patrician token from the bank (not the board) and seat it."""
    state = _at_tile(6)
    state.patrician_bank[Color.GREEN] = 0
    state.patrician_pool[Color.YELLOW] = 1
    play(state, "play 6 st_barbara")
    assert state.players[0].points == 2
    assert kind(state) is DecisionKind.BARBARA_PATRICIAN
    assert texts(state) == ["patrician silver", "patrician yellow", "patrician red", "skip"]
    play(state, "patrician yellow")
    assert state.council[Color.YELLOW] == 1 and state.patrician_bank[Color.YELLOW] == 2
    assert state.patrician_pool[Color.YELLOW] == 1 and state.players[0].groschen == 40


def test_tile_6_skip_keeps_the_points() -> None:
    """004 · St. Barbara Cathedral: you may skip the middle part of a tile and keep the rest — for example
    take tile 6's 2 points without seating a patrician."""
    state = _at_tile(6)
    play(state, "play 6 st_barbara", "skip")
    assert state.players[0].points == 2 and sum(state.council.values()) == 0


def test_tile_7_reputation_for_public_neighbours() -> None:
    """004 · Tile 7: for each of your buildings, gain 1 reputation for each public building beside it."""
    state = _at_tile(7)
    build(state, (2, 2), SAWMILL, 0)
    build(state, (2, 4), BAKERY, 0)
    build(state, (2, 3), CHURCH_OF_OUR_LADY, None)  # beside both
    build(state, (1, 2), ST_JAMES, None)  # beside (2,2)
    build(state, (4, 4), NOTARY, 1)
    build(state, (4, 3), CORPUS_CHRISTI, None)  # beside another seat's building only
    play(state, "play 6 st_barbara")
    assert state.players[0].reputation == 3


def test_tile_8_free_building() -> None:
    """004 · Tile 8: score 1; a Building action with no wood to pay."""
    state = _at_tile(8)
    give_rights(state, 0, BAKERY)
    claim(state, 0, (2, 2))
    play(state, "play 6 st_barbara")
    assert state.players[0].points == 1
    assert kind(state) is DecisionKind.BUILD_TILE and texts(state) == [f"tile {BAKERY}", "skip"]
    play(state, f"tile {BAKERY}", "square 2,2")
    assert state.players[0].groschen == 40 and state.city[(2, 2)].building == BAKERY


def test_tile_8_building_that_flips_turns_the_next_tile() -> None:
    """docs/rules.md#r22: the tile in use is turned as its action begins, so a guild
    building built by tile 8's free Building action flips the next tile."""
    state = _at_tile(8)
    give_rights(state, 0, NOTARY)
    claim(state, 0, (2, 2))
    play(state, "play 6 st_barbara", f"tile {NOTARY}", "square 2,2")
    assert state.barbara_next == 10
    assert state.tax == state.components.barbara_tiles[8].flip_tax


def test_tile_9_two_free_mines() -> None:
    """004 · Tile 9: 2 Mine actions, no wood, miners from outside your pool."""
    state = _at_tile(9)
    stack_top(state, 20, 21)
    play(state, "play 6 st_barbara")
    assert kind(state) is DecisionKind.MINE_TILE
    play(state, "tile 20", "square 0,1")
    assert kind(state) is DecisionKind.MINE_TILE
    play(state, "tile 21", "square 0,2")
    player = state.players[0]
    assert player.groschen == 40
    assert (player.miners_pool, player.miners_reserve) == (1, 6)
    assert set(player.mines) == {(0, 1), (0, 2)}


def test_tile_9_uses_the_pool_when_no_other_miner_is_left() -> None:
    """000 · St. Barbara Tiles · 9: you can use miners in the pool if they are the only ones left."""
    state = _at_tile(9, miners_pool=1, miners_reserve=0)
    stack_top(state, 20, 21)
    play(state, "play 6 st_barbara", "tile 20", "square 0,1")
    assert state.players[0].miners_pool == 0
    assert kind(state) is DecisionKind.PLAY_CARD  # the second mine has no miner: no effect


def test_tile_9_without_any_miner_has_no_effect() -> None:
    """001 · Special Cases · Running out of pieces: an action needing a miner you don't have has no effect
    (regression: tile 9 placed mines with a miner the seat did not have)."""
    state = _at_tile(9, miners_pool=0, miners_reserve=0)
    stack = list(state.mine_stack)
    play(state, "play 6 st_barbara")
    player = state.players[0]
    assert kind(state) is DecisionKind.PLAY_CARD
    assert state.mines == {} and player.miners_pool == 0 and state.mine_stack == stack


def test_tile_10_scores_one_building() -> None:
    """004 · Tile 10: choose one of your buildings and score 1 point for each matching dot against an
    adjacent building or the board's edge."""
    state = _at_tile(10)
    board = state.components.board_for(4)
    smithy = state.components.building(SMITHY).dots
    sawmill = state.components.building(SAWMILL).dots
    assert smithy.on(Side.WEST) and smithy.on(Side.EAST) and sawmill.on(Side.WEST)
    assert board.edge_dot((2, 0), Side.WEST)
    build(state, (2, 0), SMITHY, 0)
    build(state, (2, 1), SAWMILL, 0)
    play(state, "play 6 st_barbara")
    assert kind(state) is DecisionKind.SCORE_BUILDING
    assert texts(state) == [f"tile {SMITHY}", f"tile {SAWMILL}", "skip"]
    play(state, f"tile {SMITHY}")
    assert state.players[0].points == 2  # the board edge's dot and the Sawmill's


def test_tile_11_and_after() -> None:
    """004 · Tile 11: score 5; from now on every St. Barbara action gives 2 reputation (docs/rules.md#r12: and
    still uses a pelican)."""
    state = _at_tile(11, pelicans=2)
    play(state, "play 6 st_barbara")
    player = state.players[0]
    assert player.points == 5 and state.barbara_next == 12 and player.reputation == 0
    play(state, "play 1 none")
    for _ in range(3):  # the other seats' turns
        assert state.pending is not None
        play(state, f"play {min(state.players[state.pending.seat].hand)} none")
        play(state, f"play {min(state.players[state.pending.seat].hand)} none")
    assert state.pending is not None and state.pending.seat == 0
    repose(state)
    play(state, "play 4 joker", "action st_barbara")
    assert (player.reputation, player.points, player.pelicans, player.pelicans_used) == (1, 5, 0, 2)


def test_the_action_ignores_the_tile_tax() -> None:
    """003 · The St. Barbara action: ignore the tax printed on the tile; it applies only when a guild
    building flips it."""
    state = _at_tile(6)
    assert state.components.barbara_tiles[5].flip_tax > 0
    play(state, "play 6 st_barbara", "skip")
    assert state.tax == 0


@pytest.mark.parametrize("number", range(1, 12))
def test_each_action_turns_the_current_tile(number: int) -> None:
    """003 · The St. Barbara action · step 2: after resolving, turn the tile face down; tiles become current
    in number order."""
    state = _at_tile(number)
    dig(state, 1, (3, 6), 0)  # an unrelated mine: tile 9's free mines have squares either way
    play(state, "play 6 st_barbara")
    assert state.barbara_next == number + 1
