"""What an option costs (``engine.costs``): each price as the rules state it, and, over random games, the
listed cost is exactly what applying the option takes."""

from __future__ import annotations

import random

import pytest

from kutnahora.engine import GameOptions, apply, legal, new_game
from kutnahora.engine.components import Commodity, Guild
from kutnahora.engine.costs import FREE, Cost, option_cost, option_costs
from kutnahora.engine.economy import price
from kutnahora.engine.options import DecisionKind, parse_option
from kutnahora.engine.rounds import reputation_penalty, tax_due
from kutnahora.engine.state import GameState
from kutnahora.engine.text import describe_cost
from tests.engine.conftest import (
    claim,
    finish_turns,
    give_rights,
    kind,
    named,
    play,
    repose,
    set_guilds,
    stack_top,
    started,
)


def cost_of(state: GameState, text: str) -> Cost:
    option = parse_option(text)
    assert option in legal(state), text
    return option_cost(state, option)


def test_play_card_costs() -> None:
    """002 · Action cards: the Joker costs 1 reputation, nothing at 6 or more (docs/rules.md#r10);
    003 · The Mine action · step 1: with no miner in the pool the refill's permit must be paid; 003 · The
    St. Barbara action uses a pelican. Other halves cost nothing until their choices."""
    state = started(4)
    player = state.players[0]
    player.pelicans = 1
    repose(state)
    assert cost_of(state, "play 4 joker") == Cost(reputation=1)
    assert cost_of(state, "play 2 mine") == FREE
    assert cost_of(state, "play 1 rights") == FREE and cost_of(state, "play 2 none") == FREE
    assert cost_of(state, "play 6 st_barbara").pelicans == 1
    player.reputation = 6
    player.miners_pool = 0
    repose(state)
    assert cost_of(state, "play 4 joker") == FREE
    permit = price(state, Commodity.PERMITS)
    assert cost_of(state, "play 2 mine") == Cost(groschen=permit, permits=1)


def test_joker_below_the_track_costs_points() -> None:
    """docs/rules.md#r10: a reputation step below −5 costs 2 points instead."""
    state = started(4)
    state.players[0].reputation = -5
    repose(state)
    assert cost_of(state, "play 4 joker") == Cost(points=2)


def test_st_barbara_tile_reputation_loss() -> None:
    """004 · The eleven tiles: tile 3 costs 1 reputation and tile 5 costs 2, besides the pelican."""
    state = started(4)
    state.players[0].pelicans = 1
    for tile, loss in ((3, 1), (5, 2), (1, 0)):
        state.barbara_next = tile
        repose(state)
        assert cost_of(state, "play 6 st_barbara") == Cost(reputation=loss, pelicans=1)


def test_refill_and_mine_square_costs() -> None:
    """003 · The Mine action: a permit to refill the pool; an entrance costs 2 wood at the wood price."""
    state = started(4, mine_setup_card=1)
    stack_top(state, 0)
    play(state, "play 2 mine")
    permit = price(state, Commodity.PERMITS)
    assert kind(state) is DecisionKind.REFILL_MINERS
    assert cost_of(state, "yes") == Cost(groschen=permit, permits=1) and cost_of(state, "no") == FREE
    play(state, "no", "tile 0")
    wood = price(state, Commodity.WOOD)
    assert cost_of(state, "square 0,1") == Cost(groschen=2 * wood, wood=2)


def test_rights_costs_follow_the_columns() -> None:
    """docs/rules.md#r6: the town-hall columns cost 1 groschen, then 1, 2, 3 permits at the permit price."""
    state = started(4)
    play(state, "play 1 rights")
    permit = price(state, Commodity.PERMITS)
    costs = {}
    for row in state.town_hall:
        for col, stack in enumerate(row):
            option = parse_option(f"tile {stack.tiles[-1]}")
            if option in legal(state):
                costs[col] = option_cost(state, option)
    assert costs[0] == Cost(groschen=1)
    assert costs[1] == Cost(groschen=permit, permits=1)
    assert costs[2] == Cost(groschen=2 * permit, permits=2)


def test_plot_and_building_costs() -> None:
    """003 · The Plot action: the first plots cost the default; at reputation 3 or more every plot costs 1
    (docs/rules.md#r10). 003 · The Building action · step 2: the wood cost at the wood price, on the tile and
    again on each plot it may stand on (paid when it is placed)."""
    state = started(4)
    play(state, "play 2 plot")
    default = state.components.default_plot_cost
    assert {option_cost(state, o) for o in legal(state)} == {Cost(groschen=default)}
    state = started(4)
    state.players[0].reputation = 3
    repose(state)
    play(state, "play 2 plot")
    assert {option_cost(state, o) for o in legal(state)} == {Cost(groschen=1)}

    state = started(4)
    sawmill = named("Sawmill")
    set_guilds(state, 0, Guild.BUILDERS, Guild.GROCERS, Guild.SCRIBES)
    give_rights(state, 0, sawmill)
    claim(state, 0, (2, 2))
    repose(state)
    play(state, "play 3 building")
    wood = state.components.building(sawmill).wood_cost
    expected = Cost(groschen=wood * price(state, Commodity.WOOD), wood=wood)
    assert cost_of(state, f"tile {sawmill}") == expected
    play(state, f"tile {sawmill}")
    assert cost_of(state, "square 2,2") == expected


def test_tax_costs() -> None:
    """docs/rules.md#r9: pay the tax counter's value plus the plot surcharge, or lose the rounds track's
    reputation for this round."""
    state = started(2)
    state.tax = 4
    finish_turns(state)
    while state.pending is not None and state.pending.kind is not DecisionKind.TAX:
        apply(state, legal(state)[0])
    assert state.pending is not None
    seat = state.pending.seat
    assert cost_of(state, "yes") == Cost(groschen=tax_due(state, seat))
    assert cost_of(state, "no") == Cost(reputation=reputation_penalty(state))


def test_describe_cost_words() -> None:
    """Costs in words, as the terminal client shows them."""
    assert describe_cost(FREE) == "free"
    assert describe_cost(Cost(groschen=12, wood=4)) == "12 groschen (4 wood)"
    assert describe_cost(Cost(groschen=3, permits=1)) == "3 groschen (1 permit)"
    assert describe_cost(Cost(reputation=1, points=2, pelicans=1)) == "1 reputation, 2 points, 1 pelican"


PAID_ON_RESOLVE = (
    DecisionKind.REFILL_MINERS,
    DecisionKind.MINE_SQUARE,
    DecisionKind.RIGHTS_TILE,
    DecisionKind.PLOT_SQUARE,
    DecisionKind.BUILD_SQUARE,
    DecisionKind.SEAT_PATRICIAN,
    DecisionKind.TAX,
)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_listed_cost_is_what_applying_takes(players: int) -> None:
    """Over random games, every option of a decision that pays at once (refill, mine square, rights, plot,
    building square, patrician, tax) takes exactly its listed groschen, and refusing the tax exactly its
    listed reputation; a played card's listed pelicans and reputation are what it takes."""
    checked = 0
    for seed in range(6):
        state = new_game(GameOptions(players=players), seed)
        rng = random.Random(seed)
        while state.pending is not None:
            pending = state.pending
            costs = option_costs(state)
            assert costs == tuple(option_cost(state, option) for option in pending.options)
            if pending.kind in PAID_ON_RESOLVE or pending.kind is DecisionKind.PLAY_CARD:
                for option, cost in zip(pending.options, costs, strict=True):
                    twin = state.copy()
                    before = twin.players[pending.seat]
                    groschen, reputation, pelicans = before.groschen, before.reputation, before.pelicans
                    apply(twin, option)
                    after = twin.players[pending.seat]
                    if pending.kind is DecisionKind.PLAY_CARD:
                        assert pelicans - after.pelicans == cost.pelicans, option
                        if cost.reputation:
                            assert reputation - after.reputation >= cost.reputation, option
                        continue
                    assert groschen - after.groschen == cost.groschen, (pending.kind, option)
                    if pending.kind is DecisionKind.TAX and cost.reputation:
                        assert reputation - after.reputation == cost.reputation
                    checked += 1
            apply(state, rng.choice(legal(state)))
    assert checked > 50
