"""The Mine action: the miner pool, drawing tiles, where a mine may go and what it costs, evaluation."""

from __future__ import annotations

import pytest

from kutnahora.engine.components import Commodity, Deck
from kutnahora.engine.economy import price
from kutnahora.engine.mine import mine_square_costs
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import GameState
from tests.engine.conftest import dig, kind, play, repose, stack_top, started, texts

# mine setup card 1 puts rocks on (1,2), (2,5), (3,0) and (3,4); the entrances are (0,1) and (0,5)
ROCKS = {(1, 2), (2, 5), (3, 0), (3, 4)}


def _game() -> GameState:
    state = started(4, mine_setup_card=1)
    assert set(state.rocks) == ROCKS
    return state


def _tile(state: GameState, tile: int) -> tuple[int, int, int, int, int]:
    t = state.components.mine_tile(tile)
    return t.stars, t.ore, t.population, t.points, t.wood_cost


def test_entrances_cost_two_wood() -> None:
    """003 · Where you can dig: on one of the two mine entrances printed on the board, cost 2 (wood)."""
    state = _game()
    assert state.components.mine_area.entrances == ((0, 1), (0, 5))
    assert mine_square_costs(state) == {(0, 1): 2, (0, 5): 2}
    stack_top(state, 0)
    wood = price(state, Commodity.WOOD)
    play(state, "play 2 mine", "no", "tile 0")
    assert kind(state) is DecisionKind.MINE_SQUARE
    assert texts(state) == ["square 0,1", "square 0,5"]
    play(state, "square 0,5")
    assert state.players[0].groschen == 40 - 2 * wood
    assert state.mines[(0, 5)].tile == 0 and state.mines[(0, 5)].owner == 0


def test_beside_or_below_costs_the_highest_neighbour() -> None:
    """003 · Where you can dig: an empty square beside or below a mine costs the wood cost printed on that
    mine; if several apply, pay the highest, not the sum."""
    state = _game()
    dig(state, 1, (0, 2), 0)
    dig(state, 1, (1, 1), 2)
    dig(state, 2, (1, 3), 20)
    low, middle, high = (state.components.mine_tile(t).wood_cost for t in (0, 2, 20))
    assert low < middle < high
    costs = mine_square_costs(state)
    assert costs[(1, 0)] == middle  # beside (1,1) only
    assert costs[(2, 1)] == middle  # below (1,1)
    assert costs[(1, 4)] == high  # beside (1,3)
    assert costs[(0, 1)] == max(2, middle, low)  # an entrance beside (0,2) and above (1,1)
    stack_top(state, 3)
    play(state, "play 2 mine", "no", "tile 3")
    wood = price(state, Commodity.WOOD)
    before = state.players[0].groschen
    play(state, "square 1,4")
    assert state.players[0].groschen == before - high * wood


def test_highest_not_sum_where_several_mines_touch() -> None:
    """003 · Where you can dig: below one mine and beside another, pay the highest, not the sum; the mine
    below the square does not price it."""
    state = _game()
    dig(state, 1, (0, 1), 0)  # wood cost 1, above (1,1)
    dig(state, 1, (1, 0), 2)  # wood cost 2, beside (1,1)
    dig(state, 1, (2, 1), 20)  # wood cost 4, below (1,1)
    assert [state.components.mine_tile(t).wood_cost for t in (0, 2, 20)] == [1, 2, 4]
    assert mine_square_costs(state)[(1, 1)] == 2


def test_a_mine_does_not_open_the_square_above() -> None:
    """001 · Rules Reminders: a mine does not affect the cost of a space above it, nor grant access to it."""
    state = _game()
    dig(state, 1, (2, 3), 20)
    costs = mine_square_costs(state)
    assert (1, 3) not in costs
    wood = state.components.mine_tile(20).wood_cost
    assert {sq: costs[sq] for sq in ((2, 2), (2, 4), (3, 3))} == dict.fromkeys(((2, 2), (2, 4), (3, 3)), wood)


def test_rocks_and_mines_cannot_be_dug() -> None:
    """003 · Where you can dig: never on a rock tile or an existing mine."""
    state = _game()
    dig(state, 1, (0, 2), 0)  # below it (1,2) is a rock
    dig(state, 1, (2, 4), 0)  # beside the rock at (2,5), above the rock at (3,4)
    costs = mine_square_costs(state)
    assert not ROCKS & set(costs)
    assert (0, 2) not in costs and (2, 4) not in costs
    assert (1, 4) not in costs  # above (2,4)
    assert set(costs) == {(0, 1), (0, 3), (0, 5), (2, 3)}


def test_empty_pool_must_be_refilled_for_one_permit() -> None:
    """003 · The Mine action · step 1: if the pool is empty you must first pay one permit (its current
    price) to move up to 2 miners from the reserve into the pool."""
    state = _game()
    player = state.players[0]
    player.miners_pool, player.miners_reserve = 0, 8
    repose(state)
    permit = price(state, Commodity.PERMITS)
    play(state, "play 2 mine")
    assert kind(state) is DecisionKind.MINE_TILE  # no question: the refill is forced
    assert (player.miners_pool, player.miners_reserve) == (2, 6)
    assert player.groschen == 40 - permit
    play(state, "skip")
    assert (player.miners_pool, player.miners_reserve, player.groschen) == (2, 6, 40 - permit)


def test_refill_with_one_miner_is_optional() -> None:
    """003 · The Mine action · step 1: with one miner left you may refill the same way, still for one
    permit; the pool never holds more than 2."""
    state = _game()
    player = state.players[0]
    permit = price(state, Commodity.PERMITS)
    play(state, "play 2 mine")
    assert kind(state) is DecisionKind.REFILL_MINERS and texts(state) == ["yes", "no"]
    play(state, "yes")
    assert (player.miners_pool, player.miners_reserve, player.groschen) == (2, 7, 40 - permit)
    play(state, "skip")
    play(state, "play 4 mine")
    assert kind(state) is DecisionKind.MINE_TILE  # a full pool is not refilled
    play(state, "skip")
    assert (player.miners_pool, player.miners_reserve, player.groschen) == (2, 7, 40 - permit)


def test_declining_the_refill_costs_nothing() -> None:
    """003 · The Mine action · step 1: with one miner in the pool the refill may be declined."""
    state = _game()
    play(state, "play 2 mine", "no")
    assert kind(state) is DecisionKind.MINE_TILE
    assert (state.players[0].miners_pool, state.players[0].groschen) == (1, 40)


@pytest.mark.parametrize(("pool", "reserve", "after"), [(0, 1, (1, 0)), (1, 1, (2, 0)), (0, 5, (2, 3))])
def test_pool_never_above_two(pool: int, reserve: int, after: tuple[int, int]) -> None:
    """000 · The Mine Action · step 1: move up to 2 miners into the pool (it can hold no more than 2)."""
    state = _game()
    player = state.players[0]
    player.miners_pool, player.miners_reserve = pool, reserve
    repose(state)
    play(state, "play 2 mine")
    if kind(state) is DecisionKind.REFILL_MINERS:
        play(state, "yes")
    assert (player.miners_pool, player.miners_reserve) == after


def test_no_refill_question_with_an_empty_reserve() -> None:
    """docs/rules.md#r5: refilling moves miners from the reserve; with none there, nothing to ask."""
    state = _game()
    state.players[0].miners_reserve = 0
    repose(state)
    play(state, "play 2 mine")
    assert kind(state) is DecisionKind.MINE_TILE


@pytest.mark.parametrize("level", [0, 1, 2, 3, 4])
def test_draw_count_follows_the_technology_level(level: int) -> None:
    """003 · The Mine action · step 2: draw as many tiles as the current mining technology level shows
    (1 at the start)."""
    state = _game()
    state.technology_taken = level
    expected = 1 if level == 0 else state.components.technology_tiles[level - 1].draws
    top = list(reversed(state.mine_stack[-expected:]))
    play(state, "play 2 mine", "no")
    assert sorted(state.drawn) == sorted(top)
    assert texts(state) == [f"tile {t}" for t in sorted(top)] + ["skip"]
    assert len(state.mine_stack) == 27 - expected


def test_keep_one_and_discard_the_rest() -> None:
    """003 · The Mine action · step 2: keep one and discard the rest."""
    state = _game()
    state.technology_taken = 2
    stack_top(state, 0, 1, 2)
    play(state, "play 2 mine", "no", "tile 1")
    assert sorted(state.mine_discard) == [0, 2]
    play(state, "square 0,1")
    assert state.mines[(0, 1)].tile == 1


def test_discard_them_all() -> None:
    """001 · Special Cases · Mining regulations: after looking at your choice of mines, you may discard
    them all and build no mine."""
    state = _game()
    state.technology_taken = 1
    stack_top(state, 4, 5)
    play(state, "play 2 mine", "no", "skip")
    assert sorted(state.mine_discard) == [4, 5]
    assert state.mines == {} and state.players[0].miners_pool == 1 and state.players[0].groschen == 40
    assert kind(state) is DecisionKind.PLAY_CARD


def test_reshuffle_the_discards_when_the_stack_runs_out() -> None:
    """003 · The Mine action · step 2: if the stack runs out, shuffle the discards into a new stack —
    tiers I, II and III are mixed from then on."""
    state = _game()
    state.technology_taken = 2  # draw 3
    state.mine_discard = [20, 3, 12, 25]
    state.mine_stack = [7]
    events = play(state, "play 2 mine", "no")
    assert "mine_reshuffled" in [e.kind for e in events]
    assert 7 in state.drawn and len(state.drawn) == 3
    assert set(state.drawn) - {7} <= {20, 3, 12, 25}
    assert sorted(state.mine_stack + state.drawn) == [3, 7, 12, 20, 25]
    assert state.mine_discard == []


def test_evaluating_a_mine() -> None:
    """003 · Evaluating a mine: raise your ore production, advance the ore deck by the same number,
    advance the population deck, score the points; mark it with a miner from your pool."""
    state = _game()
    _, ore, population, points, _ = _tile(state, 21)
    assert ore and population and points
    stack_top(state, 21)
    play(state, "play 2 mine", "no", "tile 21", "square 0,1")
    player = state.players[0]
    assert player.mine_ore == ore and player.production[Commodity.ORE] == 0
    assert state.deck_position == {Deck.ORE: ore, Deck.POPULATION: population}
    assert player.points == points
    assert (player.miners_pool, player.miners_reserve) == (0, 8)
    assert player.mines == [(0, 1)]


def test_running_out_of_miners() -> None:
    """001 · Special Cases · Running out of pieces: an action needing a miner you don't have has no
    effect (docs/rules.md#r4: it is not offered with effect)."""
    state = _game()
    player = state.players[0]
    player.miners_pool = player.miners_reserve = 0
    repose(state)
    assert not [t for t in texts(state) if t.endswith(" mine")]
    assert "play 2 none" in texts(state) and "play 4 none" in texts(state)


def test_mine_may_be_taken_only_to_refill_or_to_look_and_discard() -> None:
    """001 · Special Cases · Mining regulations: you may pay full price to add only 1 miner to your pool,
    and after looking at your choice of mines you may discard them all and build no mine. So a Mine action
    is offered whenever the seat has a miner in the pool or can refill it, even with no square affordable
    (regression: it was offered only when a square was affordable, so nobody could cycle the stack)."""
    state = _game()
    player = state.players[0]
    wood, permit = price(state, Commodity.WOOD), price(state, Commodity.PERMITS)
    assert permit < 2 * wood
    player.groschen = permit  # a permit, but no entrance (2 wood) after paying it
    repose(state)
    assert "play 2 mine" in texts(state)
    top = state.mine_stack[-1]
    play(state, "play 2 mine", "yes")
    assert (player.groschen, player.miners_pool, player.miners_reserve) == (0, 2, 7)
    assert kind(state) is DecisionKind.MINE_TILE and texts(state) == ["skip"]
    play(state, "skip")
    assert state.mine_discard == [top] and state.mines == {}
    # a miner in the pool and nothing to spend: draw and discard
    player.groschen = 0
    repose(state)
    assert "play 4 mine" in texts(state)


def test_mine_with_an_empty_pool_needs_the_refill() -> None:
    """003 · The Mine action · step 1: with no miner in the pool the refill must be paid first; with no
    permit's worth of groschen (or no miner waiting) the action is not offered (docs/rules.md#r4,
    docs/rules.md#r5)."""
    state = _game()
    player = state.players[0]
    permit = price(state, Commodity.PERMITS)
    player.miners_pool = 0
    player.groschen = permit - 1
    repose(state)
    assert "play 2 mine" not in texts(state)
    player.groschen = permit
    repose(state)
    assert "play 2 mine" in texts(state)
    player.miners_reserve = 0
    repose(state)
    assert "play 2 mine" not in texts(state)


def test_no_mine_without_tiles() -> None:
    """003 · The Mine action · step 2: with no tile in the stack or the discards nothing can be drawn, so a
    Mine action is offered only for its refill."""
    state = _game()
    state.mine_stack = []
    state.mine_discard = []
    state.players[0].groschen = 0  # no refill either
    repose(state)
    assert not [t for t in texts(state) if t.endswith(" mine")]
    state.players[0].groschen = 40
    repose(state)
    assert "play 2 mine" in texts(state)
