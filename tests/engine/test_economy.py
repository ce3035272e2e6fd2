"""Prices and the dynamic economy: the card stands, economic-adjustment symbols, reputation and taxes."""

from __future__ import annotations

import pytest

from kutnahora.engine.components import COMMODITY_ARM, Arm, Commodity, Deck, Guild
from kutnahora.engine.economy import advance_deck, change_reputation, find_stack, front_card, price, raise_tax
from kutnahora.engine.events import Event
from kutnahora.engine.state import GameState
from tests.engine.conftest import (
    claim,
    give_rights,
    named,
    play,
    pull_tile,
    repose,
    set_deck,
    set_guilds,
    started,
    texts,
)

SAWMILL = named("Sawmill")  # builders
ROASTING_KILN = named("Roasting Kiln")  # metallurgists: arm, 1 point
ASSAY_HOUSE = named("Assay House")  # metallurgists: arm, flip St. Barbara
TAVERN = named("Tavern")  # innkeepers


def _card_with(state: GameState, deck: Deck, symbol: str, commodity: Commodity) -> int:
    """The first position on a deck whose card shows a symbol ('town_builds' or 'red_x') for a commodity."""
    cards = state.components.deck(deck).cards
    return next(i for i, card in enumerate(cards) if commodity in getattr(card, symbol))


def test_price_is_read_at_the_arm_on_the_front_card() -> None:
    """002 · Prices: the visible number in the arm's window, on the front card of its deck, is the
    current price."""
    state = started(4)
    set_deck(state, Deck.POPULATION, 13)
    state.arms[Arm.FOOD] = 2
    card = state.components.population_deck.cards[13]
    assert price(state, Commodity.FOOD) == card.prices[Commodity.FOOD][2]


def test_deck_advances_one_card_at_a_time() -> None:
    """000 · Prices: whenever an effect advances a deck, the top card slides to the back; every new front
    card shows new prices."""
    state = started(4)
    events: list[Event] = []
    advance_deck(state, Deck.ORE, 3, events)
    assert state.deck_position[Deck.ORE] == 3
    assert front_card(state, Deck.ORE).number == 3
    assert [e.kind for e in events].count("deck_advanced") == 3
    ore = state.components.ore_deck.cards[3]
    assert price(state, Commodity.SILVER) == ore.prices[Commodity.SILVER][0]


@pytest.mark.parametrize(
    ("deck", "last_front", "first_back"), [(Deck.POPULATION, 19, 20), (Deck.ORE, 14, 15)]
)
def test_deck_turns_over(deck: Deck, last_front: int, first_back: int) -> None:
    """000 · Economic Adjustments · Turn-over icon: the population deck goes from 19 to 20; the ore deck
    goes from 14 to 15."""
    state = started(4)
    set_deck(state, deck, last_front)
    assert state.components.deck(deck).turn_over_after == last_front
    advance_deck(state, deck, 1, [])
    assert front_card(state, deck).number == first_back


@pytest.mark.parametrize("deck", [Deck.POPULATION, Deck.ORE])
def test_deck_limit(deck: Deck) -> None:
    """001 · Special Cases · Limits: if a deck reaches its maximum card, ignore effects that try to
    increase it (002: a deck is never turned a second time)."""
    state = started(4)
    last = state.components.deck(deck).last
    set_deck(state, deck, last - 1)
    advance_deck(state, deck, 5, [])
    assert state.deck_position[deck] == last
    advance_deck(state, deck, 1, [])
    assert state.deck_position[deck] == last


def test_town_builds() -> None:
    """000 · Economic Adjustments · Town builds a building: move the arm one notch right, discard the top
    tile of that guild's stack, move the stack to the end of the row and slide the others left."""
    state = started(4)
    position = _card_with(state, Deck.POPULATION, "town_builds", Commodity.WOOD)
    set_deck(state, Deck.POPULATION, position - 2)
    where = find_stack(state, Guild.BUILDERS)
    assert where is not None
    row, col = where
    stack = state.town_hall[row][col]
    top = stack.tiles[-1]
    others = [s.label for s in state.town_hall[row] if s is not stack]
    advance_deck(state, Deck.POPULATION, 3, [])  # passes over the town-builds card
    assert state.arms[Arm.WOOD] == 1
    assert [s.label for s in state.town_hall[row]] == [*others, Guild.BUILDERS.value]
    assert top not in state.town_hall[row][-1].tiles and len(state.town_hall[row][-1].tiles) == 3
    assert top in state.town_discards


def test_town_builds_when_the_stack_is_gone() -> None:
    """000 · Economic Adjustments: if the stack is gone, no tile is discarded, but the arm still moves."""
    state = started(4)
    where = find_stack(state, Guild.BUILDERS)
    assert where is not None
    for tile in list(state.town_hall[where[0]][where[1]].tiles):
        pull_tile(state, tile)
    position = _card_with(state, Deck.POPULATION, "town_builds", Commodity.WOOD)
    set_deck(state, Deck.POPULATION, position - 1)
    halls = [[list(s.tiles) for s in row] for row in state.town_hall]
    advance_deck(state, Deck.POPULATION, 1, [])
    assert state.arms[Arm.WOOD] == 1
    assert [[list(s.tiles) for s in row] for row in state.town_hall] == halls


def test_red_x_blocks_building_but_not_rights() -> None:
    """000 · Economic Adjustments · Red X: no one may build a building of that type until demand
    increases; you can still buy Rights to those buildings."""
    state = started(4)
    set_guilds(state, 0, Guild.INNKEEPERS, Guild.GROCERS, Guild.SCRIBES)
    give_rights(state, 0, TAVERN)
    claim(state, 0, (2, 2))
    red_x = _card_with(state, Deck.POPULATION, "red_x", Commodity.BEER)
    set_deck(state, Deck.POPULATION, red_x)
    repose(state)
    assert not [t for t in texts(state) if t.endswith(" building")]
    play(state, "play 1 rights")
    innkeepers = find_stack(state, Guild.INNKEEPERS)
    assert innkeepers is not None
    top = state.town_hall[innkeepers[0]][innkeepers[1]].tiles[-1]
    assert f"tile {top}" in texts(state)
    # a deck advance that removes the X opens the market again
    state2 = started(4)
    set_guilds(state2, 0, Guild.INNKEEPERS, Guild.GROCERS, Guild.SCRIBES)
    give_rights(state2, 0, TAVERN)
    claim(state2, 0, (2, 2))
    set_deck(state2, Deck.POPULATION, red_x)
    advance_deck(state2, Deck.POPULATION, 1, [])
    assert Commodity.BEER not in front_card(state2, Deck.POPULATION).red_x
    repose(state2)
    assert "play 3 building" in texts(state2)


@pytest.mark.parametrize(
    ("start", "delta", "reputation", "points"),
    [(8, 3, 9, 4), (9, 1, 9, 2), (-4, -3, -5, -4), (-5, -1, -5, -2), (2, -4, -2, 0), (-5, 3, -2, 0)],
)
def test_reputation_beyond_the_track(start: int, delta: int, reputation: int, points: int) -> None:
    """000 · Reputation · Beyond the track ends: for each step off the negative end lose 2 points
    instead; for each step off the positive end gain 2 points instead (002: the track runs −5 to 9)."""
    state = started(4)
    state.players[1].reputation = start
    change_reputation(state, 1, delta, [])
    assert (state.players[1].reputation, state.players[1].points) == (reputation, points)


def test_reputation_beyond_the_track_through_an_action() -> None:
    """000 · Reputation · Beyond the track ends, through St. Barbara tile 1 (gain 2 reputation) at 8."""
    state = started(4)
    state.players[0].reputation = 8
    state.players[0].pelicans = 1
    repose(state)
    play(state, "play 6 st_barbara")
    assert (state.players[0].reputation, state.players[0].points) == (9, 2)


@pytest.mark.parametrize(("tax", "amount", "after"), [(20, 3, 23), (24, 3, 25), (25, 1, 25)])
def test_tax_limit(tax: int, amount: int, after: int) -> None:
    """001 · Special Cases · Limits: taxes can't go above 25."""
    state = started(4)
    state.tax = tax
    raise_tax(state, amount, [])
    assert state.tax == after


def test_tax_limit_through_a_building_flip() -> None:
    """001 · Special Cases · Limits and 000 · Guild Buildings: a guild building that flips St. Barbara
    raises the tax by the tile's tax, but never above 25."""
    state = started(4)
    set_guilds(state, 0, Guild.METALLURGISTS, Guild.GROCERS, Guild.SCRIBES)
    give_rights(state, 0, ASSAY_HOUSE)
    claim(state, 0, (2, 2))
    state.barbara_next = 6
    assert state.components.barbara_tiles[5].flip_tax == 3
    state.tax = 24
    repose(state)
    play(state, "play 3 building", f"tile {ASSAY_HOUSE}", "square 2,2")
    assert state.tax == 25 and state.barbara_next == 7


def test_silver_and_ore_share_one_arm() -> None:
    """000 · Supply and Demand: silver buildings make silver prices go down but ore prices go up
    (docs/rules.md#r28: silver and ore share one arm on the ore stand)."""
    state = started(4)
    assert COMMODITY_ARM[Commodity.SILVER] is COMMODITY_ARM[Commodity.ORE] is Arm.SILVER_ORE
    set_guilds(state, 0, Guild.METALLURGISTS, Guild.GROCERS, Guild.SCRIBES)
    give_rights(state, 0, ROASTING_KILN, ASSAY_HOUSE)
    claim(state, 0, (2, 2), (2, 3))
    silver, ore = price(state, Commodity.SILVER), price(state, Commodity.ORE)
    permits = price(state, Commodity.PERMITS)
    repose(state)
    play(state, "play 3 building", f"tile {ROASTING_KILN}", "square 2,2")
    play(state, "play 5 building", f"tile {ASSAY_HOUSE}", "square 2,3")
    assert state.arms[Arm.SILVER_ORE] == 2
    card = front_card(state, Deck.ORE)
    assert price(state, Commodity.SILVER) == card.prices[Commodity.SILVER][2] < silver
    assert price(state, Commodity.ORE) == card.prices[Commodity.ORE][2] > ore
    assert price(state, Commodity.PERMITS) == permits and state.arms[Arm.PERMITS] == 0


def test_a_guild_building_lowers_its_price() -> None:
    """000 · Supply and Demand: when you build a guild building, its indicator moves right and prices go
    down."""
    state = started(4)
    set_guilds(state, 0, Guild.BUILDERS, Guild.GROCERS, Guild.SCRIBES)
    give_rights(state, 0, SAWMILL)
    claim(state, 0, (2, 2))
    set_deck(state, Deck.POPULATION, 5)  # a card where the first notch step lowers wood
    wood = price(state, Commodity.WOOD)
    repose(state)
    play(state, "play 3 building", f"tile {SAWMILL}", "square 2,2")
    assert state.arms[Arm.WOOD] == 1
    assert price(state, Commodity.WOOD) == front_card(state, Deck.POPULATION).prices[Commodity.WOOD][1]
    assert price(state, Commodity.WOOD) < wood
