"""The Building action: wood, plots, production, arms, the Miners' guild and mining technology, houses,
public buildings and the building effects."""

from __future__ import annotations

import pytest

from kutnahora.engine.components import Arm, Color, Commodity, Deck, Guild, HouseRewardKind
from kutnahora.engine.economy import find_stack, price
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import GameState
from tests.engine.conftest import (
    claim,
    give_rights,
    kind,
    named,
    play,
    repose,
    set_deck,
    set_guilds,
    started,
    texts,
)

SMITHY = named("Smithy")  # miners: production 1, mining technology
WINDING_HOUSE = named("Winding House")  # miners: production 2, remove a house
ORE_WASHERY = named("Ore Washery")  # miners: production 3, 1 point
SAWMILL = named("Sawmill")  # builders: arm
CARPENTERS = named("Carpenters' Workshop")  # builders: arm, population deck +1
NOTARY = named("Notary")  # scribes: arm, flip St. Barbara
CHURCH_OF_OUR_LADY = named("Church of Our Lady")  # green: patrician, 3 reputation
CORPUS_CHRISTI = named("Corpus Christi Chapel")  # silver: patrician, 2 pelicans


def _ready(
    guilds: tuple[Guild, Guild, Guild], *tiles: int, plots: tuple[tuple[int, int], ...] = ((2, 2),)
) -> GameState:
    """Seat 0 with these guilds, these tiles in its slots and plots claimed, to play its first card."""
    state = started(4, mine_setup_card=1)
    set_guilds(state, 0, *guilds)
    give_rights(state, 0, *tiles)
    claim(state, 0, *plots)
    repose(state)
    return state


BUILDERS_FIRST = (Guild.BUILDERS, Guild.GROCERS, Guild.SCRIBES)
MINERS_FIRST = (Guild.MINERS, Guild.GROCERS, Guild.SCRIBES)


def test_wood_cost_at_the_current_price() -> None:
    """003 · The Building action · step 2: pay the tile's wood cost at the current wood price
    (002 · Paying in wood: a cost of 4 with wood priced at 3 means 12 groschen)."""
    state = _ready(BUILDERS_FIRST, CARPENTERS)
    set_deck(state, Deck.POPULATION, 20)
    wood = price(state, Commodity.WOOD)
    cost = state.components.building(CARPENTERS).wood_cost
    assert cost > 1 and wood > 1
    play(state, "play 3 building")
    assert kind(state) is DecisionKind.BUILD_TILE and texts(state) == [f"tile {CARPENTERS}"]
    play(state, f"tile {CARPENTERS}")
    assert kind(state) is DecisionKind.BUILD_SQUARE and texts(state) == ["square 2,2"]
    play(state, "square 2,2")
    assert state.players[0].groschen == 40 - cost * wood


def test_plot_marker_returns_and_the_tile_stands_in_town() -> None:
    """003 · The Building action · step 1: pick one of your plots and return its marker to your board;
    place the tile on that square; the guild building is yours."""
    state = _ready(BUILDERS_FIRST, SAWMILL, plots=((2, 2), (4, 4)))
    play(state, "play 3 building", f"tile {SAWMILL}")
    assert texts(state) == ["square 2,2", "square 4,4"]
    play(state, "square 4,4")
    player = state.players[0]
    assert player.plots == [(2, 2)] and (4, 4) not in state.plots
    assert player.slots == [] and player.buildings == [SAWMILL]
    assert state.city[(4, 4)].building == SAWMILL and state.city[(4, 4)].owner == 0


def test_production_arm_and_effects() -> None:
    """004 · Production and Building effects: production rises by the tile's number, the commodity's arm
    moves one notch right, and printed effects (here the population deck) resolve."""
    state = _ready(BUILDERS_FIRST, CARPENTERS)
    building = state.components.building(CARPENTERS)
    play(state, "play 3 building", f"tile {CARPENTERS}", "square 2,2")
    player = state.players[0]
    assert player.production[Commodity.WOOD] == building.production > 0
    assert state.arms[Arm.WOOD] == 1
    assert sum(state.arms.values()) == 1
    assert state.deck_position[Deck.POPULATION] == 1


def test_building_needs_rights_and_a_plot() -> None:
    """000 · The Building Action: you need a building tile (Rights) and a plot in town (Plot)."""
    state = _ready(BUILDERS_FIRST, plots=((2, 2),))
    assert not [t for t in texts(state) if t.endswith(" building")]
    state = _ready(BUILDERS_FIRST, SAWMILL, plots=())
    assert not [t for t in texts(state) if t.endswith(" building")]


def test_building_must_be_affordable() -> None:
    """003 · The Building action · step 2: the wood must be paid (docs/rules.md#r4)."""
    state = _ready(BUILDERS_FIRST, CARPENTERS)
    cost = state.components.building(CARPENTERS).wood_cost * price(state, Commodity.WOOD)
    state.players[0].groschen = cost - 1
    repose(state)
    assert "play 3 building" not in texts(state)
    state.players[0].groschen = cost
    repose(state)
    assert "play 3 building" in texts(state)


def test_miners_building_advances_the_ore_deck_and_never_moves_an_arm() -> None:
    """004 · Miners guild: a Miners' building raises your ore production and advances the ore deck by the
    same amount — it never moves an arm."""
    state = _ready(MINERS_FIRST, ORE_WASHERY)
    ore = state.components.building(ORE_WASHERY).production
    play(state, "play 3 building", f"tile {ORE_WASHERY}", "square 2,2")
    player = state.players[0]
    assert player.production[Commodity.ORE] == ore and player.mine_ore == 0
    assert state.deck_position[Deck.ORE] == ore
    assert set(state.arms.values()) == {0}


def test_mining_technology_is_a_free_mine() -> None:
    """004 · Mining technology: play the top technology tile at once as a free mine — any square a new
    mine could use, no wood, a miner from the reserve — and the technology level rises."""
    state = _ready(MINERS_FIRST, SMITHY)
    player = state.players[0]
    play(state, "play 3 building", f"tile {SMITHY}", "square 2,2")
    assert kind(state) is DecisionKind.TECH_SQUARE
    assert texts(state) == ["square 0,1", "square 0,5", "skip"]
    assert state.technology_taken == 1
    groschen = player.groschen
    ore_deck = state.deck_position[Deck.ORE]
    play(state, "square 0,5")
    tile = state.components.technology_tiles[0]
    assert state.mines[(0, 5)].tile == tile.id and state.mines[(0, 5)].owner == 0
    assert player.groschen == groschen
    assert (player.miners_pool, player.miners_reserve) == (1, 7)
    assert player.mine_ore == tile.ore and state.deck_position[Deck.ORE] == ore_deck + tile.ore
    play(state, "play 2 mine", "no")
    assert len(state.drawn) == tile.draws


def test_mining_technology_may_be_removed_from_the_game() -> None:
    """001 · Special Cases · Mining regulations: a technology tile may be removed from the game instead;
    the level still rises (docs/rules.md#r21)."""
    state = _ready(MINERS_FIRST, SMITHY)
    play(state, "play 3 building", f"tile {SMITHY}", "square 2,2", "skip")
    assert state.mines == {} and state.technology_taken == 1
    assert state.players[0].miners_reserve == 8


def test_mining_technology_uses_a_pool_miner_only_when_the_reserve_is_empty() -> None:
    """000 · Miners' Guild: use a miner from your pool only if there are no others left on your board."""
    state = _ready(MINERS_FIRST, SMITHY)
    player = state.players[0]
    player.miners_reserve = 0
    play(state, "play 3 building", f"tile {SMITHY}", "square 2,2", "square 0,1")
    assert (player.miners_pool, player.miners_reserve) == (0, 0)


def test_mining_technology_with_no_miner_left_is_taken_and_removed() -> None:
    """001 · Special Cases · Mining regulations: a technology tile may always be removed from the game
    instead of placed, so it needs no miner (docs/rules.md#r4): a seat with no miner left takes the tile
    (the level rises), removes it from the game, and the rest of the Building action happens (regression:
    the tile stayed on its stack)."""
    state = _ready(MINERS_FIRST, WINDING_HOUSE)
    player = state.players[0]
    player.miners_pool = player.miners_reserve = 0
    repose(state)
    events = play(state, "play 3 building", f"tile {WINDING_HOUSE}", "square 2,2")
    assert kind(state) is DecisionKind.REMOVE_HOUSE  # the Winding House's other effect still happens
    events += play(state, "skip")
    assert state.technology_taken == 1 and state.mines == {}
    assert any(e.kind == "technology" and "removes the tile" in e.text for e in events)
    assert player.houses_removed == [1, 0, 0]  # the house step happened too
    play(state, "play 2 none")
    assert state.technology_taken == 1


@pytest.mark.parametrize("name", ["Pump", "Smithy", "Winding House", "Ore Washery"])
def test_every_miners_building_raises_the_technology_level(name: str) -> None:
    """001 · Guild Buildings: a miners' guild building additionally draws the top technology tile; there are
    four miners' buildings and four tiles (docs/rules.md#component-facts), so each of them
    raises the level (regression: only two carried the symbol and the level never passed 2)."""
    tile = named(name)
    state = _ready(MINERS_FIRST, tile)
    state.technology_taken = 3
    state.players[0].groschen = 100
    repose(state)
    play(state, "play 3 building", f"tile {tile}", "square 2,2")
    while kind(state) is not DecisionKind.TECH_SQUARE:
        play(state, "skip")
    assert state.technology_taken == 4
    play(state, "square 0,1")
    assert state.mines[(0, 1)].tile == state.components.technology_tiles[3].id


def test_mining_technology_level_rises_only_with_miners_buildings() -> None:
    """001 · Rules Reminders: the mining technology level increases only when a player builds a Miners'
    guild building."""
    state = _ready(BUILDERS_FIRST, SAWMILL)
    play(state, "play 3 building", f"tile {SAWMILL}", "square 2,2")
    play(state, "play 2 mine", "no", "skip")
    assert state.technology_taken == 0


def _house_space(state: GameState, kind_: HouseRewardKind) -> tuple[int, int]:
    rewards = state.components.house_rewards
    return next((r, c) for r in range(3) for c in range(4) if rewards[r][c].kind is kind_)


def _build_with_house(state: GameState, reward: HouseRewardKind) -> tuple[int, int]:
    """Seat 0 builds a Sawmill with the Builders on the row whose next house shows ``reward``."""
    row, column = _house_space(state, reward)
    guilds = [Guild.GROCERS, Guild.SCRIBES]
    guilds.insert(row, Guild.BUILDERS)
    set_guilds(state, 0, *guilds)
    state.players[0].houses_removed[row] = column
    give_rights(state, 0, SAWMILL)
    claim(state, 0, (2, 2))
    repose(state)
    play(state, "play 3 building", f"tile {SAWMILL}", "square 2,2")
    return row, column


@pytest.mark.parametrize(
    "reward", [HouseRewardKind.REPUTATION, HouseRewardKind.POINTS, HouseRewardKind.PELICAN]
)
def test_house_reward(reward: HouseRewardKind) -> None:
    """003 · The Building action · step 5 and House effects: a guild building takes the leftmost house of
    its guild's row; the space it leaves shows the reward (reputation, points, a pelican)."""
    state = started(4)
    row, column = _build_with_house(state, reward)
    player = state.players[0]
    amount = state.components.house_rewards[row][column].amount
    assert player.houses_removed[row] == column + 1
    assert sum(player.houses_removed) == column + 1
    got = {
        HouseRewardKind.REPUTATION: player.reputation,
        HouseRewardKind.POINTS: player.points,
        HouseRewardKind.PELICAN: player.pelicans,
    }[reward]
    assert got == (amount or 1)


def test_house_reward_public_building_is_free() -> None:
    """003 · House effects: take the top tile of any public building stack for free, then move that stack
    to the end (001 · Rules Reminders: only public buildings)."""
    state = started(4)
    tops = {
        stack.tiles[-1]: stack.label for row in state.town_hall for stack in row if stack.label in set(Color)
    }
    row, column = _build_with_house(state, HouseRewardKind.PUBLIC_BUILDING)
    assert state.players[0].houses_removed[row] == column + 1
    assert kind(state) is DecisionKind.PUBLIC_REWARD
    assert texts(state) == [f"tile {t}" for t in tops] + ["skip"]
    groschen = state.players[0].groschen
    tile = next(iter(tops))
    play(state, f"tile {tile}")
    assert state.players[0].slots == [tile] and state.players[0].groschen == groschen
    where = find_stack(state, tops[tile])
    assert where is not None and where[1] == len(state.town_hall[where[0]]) - 1


def test_house_reward_public_building_may_be_declined() -> None:
    """001 · Special Cases · Ignoring actions: you can ignore the public-building Rights action of a house
    token."""
    state = started(4)
    _build_with_house(state, HouseRewardKind.PUBLIC_BUILDING)
    play(state, "skip")
    assert state.players[0].slots == [] and kind(state) is DecisionKind.PLAY_CARD


def test_public_building() -> None:
    """004 · Public buildings: no house, no owner, no production; its patrician goes from the bank to the
    pool; its immediate effects resolve."""
    state = _ready(BUILDERS_FIRST, CHURCH_OF_OUR_LADY)
    reputation = next(e.amount for e in state.components.building(CHURCH_OF_OUR_LADY).effects if e.amount)
    wood = state.components.building(CHURCH_OF_OUR_LADY).wood_cost * price(state, Commodity.WOOD)
    play(state, "play 3 building", f"tile {CHURCH_OF_OUR_LADY}", "square 2,2")
    player = state.players[0]
    assert state.city[(2, 2)].owner is None
    assert player.buildings == [] and player.houses_removed == [0, 0, 0]
    assert all(v == 0 for v in player.production.values())
    assert set(state.arms.values()) == {0}
    assert state.patrician_bank[Color.GREEN] == 2 and state.patrician_pool[Color.GREEN] == 1
    assert player.reputation == reputation and player.groschen == 40 - wood


def test_public_building_with_no_patrician_in_the_bank() -> None:
    """004 · Patrician pool: only 3 tokens of each colour exist; with none left in the bank, ignore that
    part (the other effects still resolve)."""
    state = _ready(BUILDERS_FIRST, CORPUS_CHRISTI)
    state.patrician_bank[Color.SILVER] = 0
    state.council[Color.SILVER] = 3
    play(state, "play 3 building", f"tile {CORPUS_CHRISTI}", "square 2,2")
    assert state.patrician_pool[Color.SILVER] == 0 and state.council[Color.SILVER] == 3
    assert state.players[0].pelicans == 2


def _house_gain(state: GameState, row: int, column: int, reward: HouseRewardKind) -> int:
    """What the house space at (row, column) gives of one reward kind (0 for the other kinds)."""
    space = state.components.house_rewards[row][column]
    return (space.amount or 1) if space.kind is reward else 0


@pytest.mark.parametrize("removed_row", [1, 2])
def test_remove_a_house_effect(removed_row: int) -> None:
    """004 · Building effects and 000 · Quick Reference: remove the leftmost house of any row of your
    board and ignore its effect; the building's own house still shows its reward."""
    state = _ready(MINERS_FIRST, WINDING_HOUSE)
    play(state, "play 3 building", f"tile {WINDING_HOUSE}", "square 2,2")
    assert kind(state) is DecisionKind.REMOVE_HOUSE
    assert texts(state) == ["guild miners", "guild grocers", "guild scribes", "skip"]
    play(state, f"guild {MINERS_FIRST[removed_row]}")
    assert kind(state) is DecisionKind.TECH_SQUARE  # the Winding House's second symbol
    play(state, "skip")
    player = state.players[0]
    expected = [1, 0, 0]
    expected[removed_row] = 1
    assert player.houses_removed == expected
    assert player.reputation == _house_gain(state, 0, 0, HouseRewardKind.REPUTATION)
    assert player.points == _house_gain(state, 0, 0, HouseRewardKind.POINTS)
    assert player.pelicans == _house_gain(state, 0, 0, HouseRewardKind.PELICAN)


def test_remove_a_house_effect_may_be_declined() -> None:
    """docs/rules.md#r23: a building's remove-a-house effect may be declined."""
    state = _ready(MINERS_FIRST, WINDING_HOUSE)
    play(state, "play 3 building", f"tile {WINDING_HOUSE}", "square 2,2", "skip", "skip")
    assert state.players[0].houses_removed == [1, 0, 0]


def test_remove_a_house_keeps_the_house_the_building_needs() -> None:
    """003 · The Building action · step 5: the guild building is marked with the leftmost house of its row
    after its effects; a remove-a-house effect cannot take that last house (regression: the last house
    was offered and the house step then failed)."""
    state = _ready(MINERS_FIRST, WINDING_HOUSE)
    state.players[0].houses_removed = [3, 0, 0]
    repose(state)
    play(state, "play 3 building", f"tile {WINDING_HOUSE}", "square 2,2")
    assert texts(state) == ["guild grocers", "guild scribes", "skip"]
    play(state, "guild grocers", "skip")
    assert state.players[0].houses_removed == [4, 1, 0]
    assert state.components.house_rewards[0][3].kind is HouseRewardKind.PUBLIC_BUILDING
    assert kind(state) is DecisionKind.PUBLIC_REWARD  # the fourth miners' house was placed


def test_flip_st_barbara_adds_the_tile_tax() -> None:
    """004 · St. Barbara Cathedral: a guild building with the flip symbol turns the current tile — nobody
    gets its benefit — and the tax rises by the number at the bottom of the tile."""
    state = _ready((Guild.SCRIBES, Guild.GROCERS, Guild.BUILDERS), NOTARY)
    state.barbara_next = 6
    flip_tax = state.components.barbara_tiles[5].flip_tax
    assert flip_tax > 0
    play(state, "play 3 building", f"tile {NOTARY}", "square 2,2")
    assert state.barbara_next == 7 and state.tax == flip_tax
    # nobody gets tile 6's benefit: no 2 points, no patrician seated
    assert state.players[0].points == _house_gain(state, 0, 0, HouseRewardKind.POINTS)
    assert sum(state.council.values()) == 0 and kind(state) is DecisionKind.PLAY_CARD


def test_flip_after_the_last_tile_does_nothing() -> None:
    """000 · Quick Reference: if all 11 tiles have already been built, the flip has no effect."""
    state = _ready((Guild.SCRIBES, Guild.GROCERS, Guild.BUILDERS), NOTARY)
    state.barbara_next = 12
    state.tax = 4
    play(state, "play 3 building", f"tile {NOTARY}", "square 2,2")
    assert state.barbara_next == 12 and state.tax == 4


def test_flipping_tile_eleven_adds_no_tax() -> None:
    """004 · St. Barbara Cathedral: if a guild building flips tile 11, no one gets its 5 points and no tax
    is added."""
    state = _ready((Guild.SCRIBES, Guild.GROCERS, Guild.BUILDERS), NOTARY)
    state.barbara_next = 11
    play(state, "play 3 building", f"tile {NOTARY}", "square 2,2")
    assert state.barbara_next == 12 and state.tax == 0
    assert state.players[0].points == _house_gain(state, 0, 0, HouseRewardKind.POINTS)


def test_no_house_left_not_buildable() -> None:
    """001 · Special Cases · Running out of pieces: a building that needs a house you don't have cannot be
    built with effect (docs/rules.md#r4)."""
    state = _ready(BUILDERS_FIRST, SAWMILL)
    state.players[0].houses_removed = [4, 0, 0]
    repose(state)
    assert not [t for t in texts(state) if t.endswith(" building")]
    state.players[0].houses_removed = [3, 0, 0]
    repose(state)
    assert "play 3 building" in texts(state)


def test_guild_building_gets_the_next_house_of_its_row() -> None:
    """003 · House effects: building a guild building takes the leftmost house of that guild's row."""
    state = _ready(BUILDERS_FIRST, SAWMILL, CARPENTERS, plots=((2, 2), (2, 3)))
    play(state, "play 3 building", f"tile {SAWMILL}", "square 2,2")
    play(state, "play 5 building", f"tile {CARPENTERS}", "square 2,3")
    assert state.players[0].houses_removed == [2, 0, 0]
