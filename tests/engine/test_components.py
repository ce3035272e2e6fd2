"""The default component data file, and the loader's validation of broken files.

The default set must keep every fact in ``docs/rules.md#component-facts`` and the
readings that the data carries; a broken file must fail with a message naming the component and the field.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import json
from collections import Counter
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from kutnahora.engine.component_file import ComponentError, default_components, load_components
from kutnahora.engine.components import (
    COMMODITY_ARM,
    COMMODITY_DECK,
    GUILD_COMMODITY,
    Action,
    Arm,
    BarbaraEffect,
    Color,
    Commodity,
    ComponentSet,
    Deck,
    EffectKind,
    Guild,
    HouseRewardKind,
    Side,
)

ROOT = Path(__file__).resolve().parents[2]
FACTS = "docs/rules.md#component-facts"

STEP = {Side.NORTH: (-1, 0), Side.EAST: (0, 1), Side.SOUTH: (1, 0), Side.WEST: (0, -1)}


@pytest.fixture(scope="module")
def components() -> ComponentSet:
    return load_components()


# --- The default file ------------------------------------------------------------------------------------


def test_default_file_loads(components: ComponentSet) -> None:
    """The packaged default set loads and validates, and the cached helper returns one shared set."""
    assert components.name
    assert len(components.buildings) == 36
    assert default_components() is default_components()
    assert default_components() == components


def test_loading_by_path_matches_the_default(components: ComponentSet) -> None:
    """An explicit path to the packaged file gives the same set as the default."""
    assert load_components(ROOT / "engine" / "data" / "components.json") == components
    assert load_components(str(ROOT / "engine" / "data" / "components.json")) == components


def test_data_file_matches_the_generator_script() -> None:
    """``engine/data/components.json`` is exactly what ``scripts/make_components.py`` writes."""
    spec = importlib.util.spec_from_file_location("make_components", ROOT / "scripts" / "make_components.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    written = (ROOT / "engine" / "data" / "components.json").read_text(encoding="utf-8")
    assert module.render_document() == written


def test_reconstructed_groups_are_declared(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: every value beyond the stated facts is a
    reconstruction, and the data file says so, field group by field group."""
    raw = _raw()
    assert raw["format_version"] == 1
    assert tuple(raw["reconstructed"]) == components.reconstructed
    assert all(isinstance(note, str) and note.strip() for note in raw["reconstructed"].values())
    must_be_marked = {
        "buildings",
        "mine_tiles",
        "technology_tiles",
        "rock_tiles",
        "mine_setup_cards",
        "mine_area",
        "city_boards",
        "population_deck",
        "ore_deck",
        "guild_setup_cards",
        "event_cards",
        "rounds_tracks",
        "reputation_points",
        "house_rewards",
    }
    stated = {"action_cards", "barbara_tiles", "starting_groschen", "mine_row_scoring", "town_hall_costs"}
    assert must_be_marked <= set(components.reconstructed)
    assert not stated & set(components.reconstructed)


# --- Buildings ---------------------------------------------------------------------------------------------


def test_guild_and_public_buildings(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 24 guild buildings, 4 per guild, one of each
    guild's four marked as its stack's bottom tile; 12 public buildings, 3 per patrician colour."""
    buildings = components.buildings
    assert [b.id for b in buildings] == list(range(36))
    guild_buildings, public_buildings = buildings[:24], buildings[24:]
    assert all(b.guild is not None and b.color is None for b in guild_buildings)
    assert all(b.color is not None and b.guild is None for b in public_buildings)
    assert Counter(b.guild for b in guild_buildings) == {guild: 4 for guild in Guild}
    assert Counter(b.guild for b in guild_buildings if b.bottom) == {guild: 1 for guild in Guild}
    assert Counter(b.color for b in public_buildings) == {color: 3 for color in Color}
    assert not any(b.bottom for b in public_buildings)
    assert len({b.name for b in buildings}) == 36


def test_every_building_shows_dots_costs_and_effects(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: every building tile shows dots, a wood cost, a plot
    cost for squares beside it, and its effects."""
    for b in components.buildings:
        assert 1 <= b.dots.count() <= 4, b.name
        assert 1 <= b.wood_cost <= 5, b.name
        assert 1 <= b.plot_cost <= 6, b.name
        assert b.effects, b.name
        assert (1 <= b.production <= 4) if b.guild else b.production == 0, b.name


def test_guild_commodities_and_arms(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: six guilds and their commodities; Miners' buildings
    never move an arm, raise ore production and every one of them carries the mining-technology symbol
    (001 · Guild Buildings: a miners' guild building "additionally" draws the top technology tile)."""
    assert GUILD_COMMODITY == {
        Guild.METALLURGISTS: Commodity.SILVER,
        Guild.MINERS: Commodity.ORE,
        Guild.BUILDERS: Commodity.WOOD,
        Guild.SCRIBES: Commodity.PERMITS,
        Guild.GROCERS: Commodity.FOOD,
        Guild.INNKEEPERS: Commodity.BEER,
    }
    for b in components.buildings[:24]:
        arms = [e for e in b.effects if e.kind is EffectKind.ARM]
        if b.guild is Guild.MINERS:
            assert not arms, b.name
            assert b.commodity is Commodity.ORE
            assert not any(e.kind is EffectKind.ORE_DECK for e in b.effects), "advance comes from production"
        else:
            assert len(arms) == 1, b.name
    technology = [
        b.name for b in components.buildings if any(e.kind is EffectKind.MINING_TECHNOLOGY for e in b.effects)
    ]
    miners = [b.name for b in components.buildings if b.guild is Guild.MINERS]
    assert len(miners) == 4 == len(components.technology_tiles)
    assert sorted(technology) == sorted(miners)
    flips = sum(any(e.kind is EffectKind.FLIP_ST_BARBARA for e in b.effects) for b in components.buildings)
    removes = sum(any(e.kind is EffectKind.REMOVE_HOUSE for e in b.effects) for b in components.buildings)
    assert 5 <= flips <= 6
    assert 2 <= removes <= 3


def test_public_buildings_carry_their_patrician(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 12 patrician tokens, 3 per colour; every public
    building moves a patrician of its colour to the pool and has strong immediate effects (004)."""
    assert components.patricians_per_color == 3
    for b in components.buildings[24:]:
        patricians = [e for e in b.effects if e.kind is EffectKind.PATRICIAN]
        assert len(patricians) == 1 and patricians[0].color is b.color, b.name
        immediate = {e.kind for e in b.effects} & {
            EffectKind.REPUTATION,
            EffectKind.PELICANS,
            EffectKind.POINTS,
        }
        assert immediate, b.name
    assert all(not any(e.kind is EffectKind.PATRICIAN for e in b.effects) for b in components.buildings[:24])


# --- Card stands and price decks -------------------------------------------------------------------------


def test_card_stands_and_arms(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: the population stand has three arms (wood, food,
    beer); the ore stand has two, one shared by silver and ore and one for permits."""
    population = {c for c, deck in COMMODITY_DECK.items() if deck is Deck.POPULATION}
    ore = {c for c, deck in COMMODITY_DECK.items() if deck is Deck.ORE}
    assert population == {Commodity.WOOD, Commodity.FOOD, Commodity.BEER}
    assert ore == {Commodity.SILVER, Commodity.ORE, Commodity.PERMITS}
    assert len({COMMODITY_ARM[c] for c in population}) == 3
    assert {COMMODITY_ARM[c] for c in ore} == {Arm.SILVER_ORE, Arm.PERMITS}
    for card in components.population_deck.cards:
        assert set(card.prices) == population
    for card in components.ore_deck.cards:
        assert set(card.prices) == ore


def test_deck_lengths_and_turn_over(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: population cards 0-19 plus the turn-over card,
    continuing from 20 on the other side; ore cards 0-14, continuing from 15."""
    population, ore = components.population_deck, components.ore_deck
    assert (population.deck, population.turn_over_after, len(population.cards)) == (Deck.POPULATION, 19, 40)
    assert (ore.deck, ore.turn_over_after, len(ore.cards)) == (Deck.ORE, 14, 30)
    assert [card.number for card in population.cards] == list(range(40))
    assert [card.number for card in ore.cards] == list(range(30))
    assert population.last == 39 and ore.last == 29
    assert components.deck(Deck.POPULATION) is population and components.deck(Deck.ORE) is ore


def test_prices_follow_the_arms(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: moving the shared arm right lowers silver and raises
    ore; every other arm moving right lowers its price (002 · A dynamic economy)."""
    notches = components.arm_notches
    for deck in (components.population_deck, components.ore_deck):
        for card in deck.cards:
            for commodity, row in card.prices.items():
                assert len(row) == notches and min(row) >= 1
                steps = list(itertools.pairwise(row))
                if commodity is Commodity.ORE:
                    assert all(b >= a for a, b in steps), (card.number, commodity)
                else:
                    assert all(b <= a for a, b in steps), (card.number, commodity)


def test_prices_follow_the_decks(components: ComponentSet) -> None:
    """002 · A dynamic economy: the population deck advancing raises wood, food and beer; the ore deck
    advancing lowers ore and raises silver and permits."""
    for deck in (components.population_deck, components.ore_deck):
        for before, after in itertools.pairwise(deck.cards):
            for commodity, row in after.prices.items():
                for notch, price in enumerate(row):
                    previous = before.prices[commodity][notch]
                    if commodity is Commodity.ORE:
                        assert price <= previous
                    else:
                        assert price >= previous


def test_economic_adjustment_symbols(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: cards may carry a "town builds" symbol or a red X
    for a commodity (on both decks in the default set; the town never builds for ore)."""
    for deck in (components.population_deck, components.ore_deck):
        builds = [c for card in deck.cards for c in card.town_builds]
        red_x = [c for card in deck.cards for c in card.red_x]
        assert builds and red_x
        assert all(COMMODITY_DECK[c] is deck.deck for c in builds + red_x)
        assert not deck.cards[0].town_builds and not deck.cards[0].red_x
    assert not any(Commodity.ORE in card.town_builds for card in components.ore_deck.cards)


def test_starting_prices_keep_the_economy_playable(components: ComponentSet) -> None:
    """Reconstruction balance: at the starting prices a production unit earns 3-6 groschen, and a building's
    wood costs 3-15 groschen, so 40 groschen buy a first round of buildings."""
    first = {**components.population_deck.cards[0].prices, **components.ore_deck.cards[0].prices}
    assert all(3 <= row[0] <= 6 for row in first.values())
    wood = first[Commodity.WOOD][0]
    assert all(3 <= b.wood_cost * wood <= 15 for b in components.buildings)


# --- Mines -------------------------------------------------------------------------------------------------


def test_mine_tiles(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 27 mine tiles in three tiers (I on top, II, III at
    the bottom), each with stars, ore, a population advance, points and a wood cost."""
    tiles = components.mine_tiles
    assert [t.id for t in tiles] == list(range(27))
    assert Counter(t.tier for t in tiles) == {1: 9, 2: 9, 3: 9}
    assert all(t.draws == 0 and t.ore >= 1 for t in tiles)

    def mean(tier: int, field: str) -> float:
        values: list[int] = [getattr(t, field) for t in tiles if t.tier == tier]
        return sum(values) / len(values)

    for field in ("stars", "ore", "wood_cost", "points"):
        assert mean(1, field) < mean(2, field) < mean(3, field), field


def test_mining_technology_tiles(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 4 mining-technology tiles taken in order 1-4, each
    played as a free mine and raising the number of tiles drawn per Mine action."""
    tiles = components.technology_tiles
    assert [t.id for t in tiles] == [27, 28, 29, 30]
    assert [t.draws for t in tiles] == [2, 3, 4, 5]
    assert all(t.tier == 0 for t in tiles)
    assert components.mine_tile(27) is tiles[0] and components.mine_tile(5) is components.mine_tiles[5]


def test_rock_tiles_and_mine_setup_cards(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 4 rock tiles, placed by one of 15 mine setup cards."""
    assert [r.id for r in components.rock_tiles] == [0, 1, 2, 3]
    assert all(1 <= r.stars <= 3 for r in components.rock_tiles)
    cards = components.mine_setup_cards
    assert [c.id for c in cards] == list(range(15))
    area = components.mine_area
    for card in cards:
        assert len(set(card.squares)) == 4
        for row, column in card.squares:
            assert 1 <= row < area.rows and 0 <= column < area.columns
            assert (row, column) not in area.entrances
    assert len({frozenset(card.squares) for card in cards}) == 15


def test_mine_area(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: the mine area has rows whose printed stars add to
    the tiles' stars; two entrances cost 2 wood."""
    area = components.mine_area
    assert len(area.row_stars) == area.rows
    assert list(area.row_stars) == sorted(area.row_stars)
    assert len(area.entrances) == 2 and area.entrance_cost == 2
    assert all(row == 0 for row, _ in area.entrances)


# --- Boards ------------------------------------------------------------------------------------------------


def test_city_boards(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: the city board has a larger side for three or four
    players and a smaller side for two, with dots printed on some edge squares."""
    large, small = components.city_boards["large"], components.city_boards["small"]
    assert components.board_for(2) is small
    assert components.board_for(3) is large and components.board_for(4) is large
    assert len(small.squares()) < len(large.squares())
    assert 8 <= len(large.edge_dots) <= 12 and 6 <= len(small.edge_dots) <= 8
    for board in (large, small):
        usable = set(board.squares())
        for dot in board.edge_dots:
            assert dot.square in usable
            dr, dc = STEP[dot.side]
            assert (dot.square[0] + dr, dot.square[1] + dc) not in usable
            assert board.edge_dot(dot.square, dot.side)


def test_player_boards(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: three guild rows of four houses, each house space
    revealing a public building tile, a pelican, reputation or points; three plot markers; three building
    slots; reputation -5 to 9."""
    rewards = components.house_rewards
    assert len(rewards) == 3 and all(len(row) == 4 for row in rewards)
    assert components.houses_per_row == 4
    assert {r.kind for row in rewards for r in row} == set(HouseRewardKind)
    for row in rewards:
        for reward in row:
            assert (
                (reward.amount == 0) if reward.kind is HouseRewardKind.PUBLIC_BUILDING else reward.amount >= 1
            )
    assert components.plot_markers == 3 and components.building_slots == 3
    points = components.reputation_points
    assert list(points) == list(range(-5, 10))
    assert list(points.values()) == sorted(points.values())
    assert points[-5] < 0 < points[9]


# --- Cards, tiles, tracks ----------------------------------------------------------------------------------


def test_guild_setup_cards(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 9 guild setup cards, each with a row for two, three
    and four players giving every player a set of three guilds; with three players each player has one
    guild of their own and shares one with each opponent."""
    cards = components.guild_setup_cards
    assert [c.id for c in cards] == list(range(1, 10))
    for card in cards:
        assert set(card.rows) == {2, 3, 4}
        for players, sets in card.rows.items():
            assert len(sets) == players
            assert all(len(set(s)) == 3 for s in sets)
        two = [set(s) for s in card.rows[2]]
        assert not two[0] & two[1] and two[0] | two[1] == set(Guild)
        three = Counter(g for s in card.rows[3] for g in s)
        assert sorted(three.values()) == [1, 1, 1, 2, 2, 2]
        for x, y in ((0, 1), (0, 2), (1, 2)):
            assert len(set(card.rows[3][x]) & set(card.rows[3][y])) == 1
        assert max(Counter(g for s in card.rows[4] for g in s).values()) <= 2
    assert len({frozenset(frozenset(s) for s in c.rows[2]) for c in cards}) == 9


def test_barbara_tiles(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 11 St. Barbara tiles, fully listed in 004, with the
    flip taxes 0, 1, 1, 1, 2, 3, 2, 1, 1, 1 and none for tile 11."""
    tiles = components.barbara_tiles
    assert [t.number for t in tiles] == list(range(1, 12))
    assert [t.effect for t in tiles] == list(BarbaraEffect)
    assert tiles[0].effect is BarbaraEffect.REPUTATION and tiles[-1].effect is BarbaraEffect.FINAL
    assert [t.flip_tax for t in tiles] == [0, 1, 1, 1, 2, 3, 2, 1, 1, 1, 0]


def test_event_cards(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: 10 event cards in decks A and B (docs/rules.md#r11: enough A
    cards for the rounds before the red patricians, enough B for the later rounds but the last)."""
    cards = components.event_cards
    assert [c.id for c in cards] == list(range(10))
    assert Counter(c.deck for c in cards) == {"A": 5, "B": 5}
    assert all(0 <= c.tax <= 2 and 0 <= c.population <= 3 and 0 <= c.ore <= 3 for c in cards)
    for track in components.rounds_tracks.values():
        assert track.red_arrival_round <= 5 and track.rounds - track.red_arrival_round - 1 <= 5


def test_starting_groschen_rounds_and_mine_scoring(components: ComponentSet) -> None:
    """docs/rules.md#component-facts: starting groschen 40, 41, 42, 43 by seat; 5 rounds
    with four players, 6 with two or three; mine rows score 2/1/0 (0-5 stars), 3/2/1 (6-9), 5/3/2 (10+)."""
    assert components.starting_groschen == (40, 41, 42, 43)
    assert {n: t.rounds for n, t in components.rounds_tracks.items()} == {2: 6, 3: 6, 4: 5}
    for track in components.rounds_tracks.values():
        assert len(track.reputation_penalty) == track.rounds
        assert list(track.reputation_penalty) == sorted(track.reputation_penalty)
    assert [(s.min_stars, s.points) for s in components.mine_row_scoring] == [
        (0, (2, 1, 0)),
        (6, (3, 2, 1)),
        (10, (5, 3, 2)),
    ]


def test_rulings_carried_by_the_data(components: ComponentSet) -> None:
    """docs/rules.md#r1 (action cards), r5 (miners), r6 (town hall), r7 (red arrival) and r9 (tax limit)."""
    pairs = [(c.number, c.top, c.bottom) for c in components.action_cards]
    assert pairs == [
        (1, Action.RIGHTS, Action.INCOME),
        (2, Action.PLOT, Action.MINE),
        (3, Action.BUILDING, Action.PLOT),
        (4, Action.MINE, Action.JOKER),
        (5, Action.INCOME, Action.BUILDING),
        (6, Action.ST_BARBARA, Action.RIGHTS),
    ]
    assert (components.miner_pool_size, components.miners_per_player, components.starting_miners_in_pool) == (
        2,
        9,
        1,
    )
    assert components.town_hall_costs == (("groschen", 1), ("permits", 1), ("permits", 2), ("permits", 3))
    assert set(components.town_hall_rows) == {Color.GREEN, Color.SILVER, Color.YELLOW}
    assert {n: t.red_arrival_round for n, t in components.rounds_tracks.items()} == {2: 3, 3: 3, 4: 2}
    assert components.tax_limit == 25
    assert components.default_plot_cost == 5 and components.patrician_seat_cost == 10


# --- Broken files ------------------------------------------------------------------------------------------

Mutation = Callable[[dict[str, Any]], None]


def _raw() -> dict[str, Any]:
    text = (
        resources.files("kutnahora.engine")
        .joinpath("data")
        .joinpath("components.json")
        .read_text(encoding="utf-8")
    )
    data: dict[str, Any] = json.loads(text)
    return data


def _at(raw: dict[str, Any], path: tuple[str | int, ...]) -> Any:
    node: Any = raw
    for key in path:
        node = node[key]
    return node


def _set(*path: str | int, value: Any) -> Mutation:
    def mutate(raw: dict[str, Any]) -> None:
        _at(raw, path[:-1])[path[-1]] = value

    return mutate


def _delete(*path: str | int) -> Mutation:
    def mutate(raw: dict[str, Any]) -> None:
        del _at(raw, path[:-1])[path[-1]]

    return mutate


def _call(*path: str | int, method: str, args: tuple[Any, ...] = ()) -> Mutation:
    def mutate(raw: dict[str, Any]) -> None:
        getattr(_at(raw, path), method)(*args)

    return mutate


def _copy(source: tuple[str | int, ...], target: tuple[str | int, ...]) -> Mutation:
    def mutate(raw: dict[str, Any]) -> None:
        _at(raw, target[:-1])[target[-1]] = copy.deepcopy(_at(raw, source))

    return mutate


def _all_events_to_b(raw: dict[str, Any]) -> None:
    for card in raw["event_cards"]:
        card["deck"] = "B"


CORRUPTIONS: list[tuple[str, Mutation, str]] = [
    (
        "negative wood cost",
        _set("buildings", 7, "wood_cost", value=-1),
        "buildings[7].wood_cost: expected a non-negative integer, got -1",
    ),
    (
        "a boolean for a number",
        _set("mine_tiles", 0, "ore", value=True),
        "mine_tiles[0].ore: expected a non-negative integer, got true",
    ),
    (
        "short population deck",
        _call("population_deck", "cards", method="pop"),
        "population_deck: expected 40 cards, got 39",
    ),
    (
        "long ore deck",
        _call("ore_deck", "cards", method="append", args=({"number": 30, "prices": {}},)),
        "ore_deck: expected 30 cards, got 31",
    ),
    (
        "second bottom tile",
        _set("buildings", 1, "bottom", value=True),
        "buildings.bottom: expected exactly 1 bottom tile for metallurgists, got 2",
    ),
    (
        "guild building without arm",
        _set("buildings", 8, "effects", value=[]),
        "buildings[8].effects: a builders building must carry exactly one arm effect",
    ),
    (
        "miners building with arm",
        _call("buildings", 6, "effects", method="append", args=({"kind": "arm"},)),
        "buildings[6].effects: a miners building never moves an arm",
    ),
    (
        "miners building without mining technology",
        _set("buildings", 5, "effects", value=[]),
        "buildings[5].effects: every miners building carries mining_technology (001 · Guild Buildings)",
    ),
    (
        "patrician of the wrong colour",
        _set("buildings", 24, "effects", 0, "color", value="red"),
        "buildings[24].effects: the patrician effect must have the building's colour green",
    ),
    (
        "public building with production",
        _set("buildings", 30, "production", value=1),
        "buildings[30].production: a public building produces nothing, got 1",
    ),
    (
        "counted effect without amount",
        _set("buildings", 1, "effects", 1, value={"kind": "points"}),
        "buildings[1].effects[1].amount: expected a positive integer for a points effect, got 0",
    ),
    ("unknown guild", _set("buildings", 0, "guild", value="bankers"), "buildings[0].guild: expected one of"),
    ("missing field", _delete("mine_tiles", 3, "stars"), "mine_tiles[3].stars: missing field"),
    (
        "tier out of range",
        _set("mine_tiles", 20, "tier", value=4),
        "mine_tiles[20].tier: expected an integer in 1..3, got 4",
    ),
    (
        "technology tiles out of order",
        _set("technology_tiles", 1, "draws", value=5),
        "technology_tiles[2].draws: each tile must raise the tiles drawn, expected more than 5, got 4",
    ),
    (
        "rock in the entrance row",
        _set("mine_setup_cards", 2, "squares", 0, value=[0, 3]),
        "mine_setup_cards[2].squares[0]: [0, 3] is in row 0",
    ),
    (
        "rock on an entrance",
        _set("mine_setup_cards", 2, "squares", 0, value=[0, 1]),
        "mine_setup_cards[2].squares[0]: [0, 1] is a mine entrance",
    ),
    (
        "two setup cards alike",
        _copy(("mine_setup_cards", 0, "squares"), ("mine_setup_cards", 5, "squares")),
        "mine_setup_cards[5].squares: the same squares as mine_setup_cards[0]",
    ),
    (
        "entrance cost",
        _set("mine_area", "entrance_cost", value=3),
        "mine_area.entrance_cost: expected 2, got 3",
    ),
    (
        "price rising along the arm",
        _set("population_deck", "cards", 3, "prices", "wood", value=[1, 2, 2, 2, 2, 2]),
        "population_deck.cards[3].prices.wood: prices must not rise as the arm moves right",
    ),
    (
        "ore falling along the shared arm",
        _set("ore_deck", "cards", 2, "prices", "ore", value=[6, 5, 4, 3, 2, 1]),
        "ore_deck.cards[2].prices.ore: prices must not fall as the shared arm moves right",
    ),
    (
        "zero price",
        _set("ore_deck", "cards", 4, "prices", "permits", 5, value=0),
        "ore_deck.cards[4].prices.permits[5]: expected a positive integer, got 0",
    ),
    (
        "too few notches",
        _set("population_deck", "cards", 0, "prices", "beer", value=[5, 4, 3]),
        "population_deck.cards[0].prices.beer: expected 6 prices (one per arm notch), got 3",
    ),
    (
        "wood getting cheaper over the deck",
        _set("population_deck", "cards", 39, "prices", "wood", value=[2, 2, 2, 2, 1, 1]),
        "population_deck.cards[39].prices.wood[0]: wood must rise over the deck",
    ),
    (
        "town builds for ore",
        _set("ore_deck", "cards", 5, "town_builds", value=["ore"]),
        "ore_deck.cards[5].town_builds: the town never builds for ore",
    ),
    (
        "symbol from the other deck",
        _set("population_deck", "cards", 6, "town_builds", value=["silver"]),
        "population_deck.cards[6].town_builds[0]: silver is not priced on the population deck",
    ),
    (
        "turn-over point",
        _set("ore_deck", "turn_over_after", value=15),
        "ore_deck.turn_over_after: expected 14, got 15",
    ),
    (
        "flip tax",
        _set("barbara_tiles", 4, "flip_tax", value=3),
        "barbara_tiles[4].flip_tax: expected 2, got 3",
    ),
    (
        "St. Barbara order",
        _set("barbara_tiles", 0, "effect", value="free_rights"),
        "barbara_tiles[0].effect: tile 1 is reputation",
    ),
    (
        "three players without sharing",
        _set("guild_setup_cards", 0, "rows", "3", 2, value=["grocers", "builders", "innkeepers"]),
        "guild_setup_cards[0].rows[3]: each player must have one guild of their own",
    ),
    (
        "two players overlapping",
        _set("guild_setup_cards", 3, "rows", "2", 1, value=["miners", "scribes", "innkeepers"]),
        "guild_setup_cards[3].rows[2]: the two players' sets must split the six guilds",
    ),
    (
        "four players, a guild three times",
        _copy(("guild_setup_cards", 0, "rows", "4", 0), ("guild_setup_cards", 0, "rows", "4", 3)),
        "guild_setup_cards[0].rows[4]: miners appears 3 times",
    ),
    (
        "guild twice in a set",
        _set("guild_setup_cards", 0, "rows", "2", 0, value=["miners", "miners", "grocers"]),
        "guild_setup_cards[0].rows[2][0]: expected 3 different guilds",
    ),
    (
        "edge dot inside the board",
        _set("city_boards", "large", "edge_dots", 0, value={"square": [2, 2], "side": "e"}),
        "city_boards.large.edge_dots[0].side: side e of [2, 2] faces another square",
    ),
    ("rounds", _set("rounds_tracks", "4", "rounds", value=6), "rounds_tracks[4].rounds: expected 5, got 6"),
    (
        "red arrival",
        _set("rounds_tracks", "3", "red_arrival_round", value=2),
        "rounds_tracks[3].red_arrival_round: expected 3, got 2",
    ),
    ("reputation space missing", _delete("reputation_points", "9"), "reputation_points[9]: missing"),
    (
        "reputation points falling",
        _set("reputation_points", "5", value=0),
        "reputation_points[5]: points must not fall as reputation rises",
    ),
    (
        "action on too many cards",
        _set("action_cards", 3, "bottom", value="rights"),
        "action_cards: expected rights on 2 card halves, found 3",
    ),
    (
        "starting groschen",
        _set("starting_groschen", 3, value=44),
        "starting_groschen: expected [40, 41, 42, 43], got [40, 41, 42, 44]",
    ),
    (
        "town hall costs",
        _set("town_hall_costs", 0, value=["permits", 1]),
        "town_hall_costs[0]: expected ['groschen', 1] (ruling 6)",
    ),
    ("miner pool", _set("miner_pool_size", value=3), "miner_pool_size: expected 2, got 3"),
    (
        "short house row",
        _call("house_rewards", 1, method="pop"),
        "house_rewards[1]: expected 4 houses, got 3",
    ),
    (
        "unknown event deck",
        _set("event_cards", 0, "deck", value="C"),
        "event_cards[0].deck: expected one of A, B",
    ),
    ("no A events", _all_events_to_b, "event_cards.deck: deck A has 0 cards"),
    ("unknown top-level group", _set("treasury", value=1), "treasury: unknown field"),
    ("missing group", _delete("ore_deck"), "ore_deck: missing field"),
    ("format version", _set("format_version", value=2), "format_version: expected 1, got 2"),
    (
        "unknown reconstructed group",
        _set("reconstructed", "wizards", value="x"),
        "reconstructed.wizards: unknown field",
    ),
]


@pytest.mark.parametrize(("mutate", "message"), [c[1:] for c in CORRUPTIONS], ids=[c[0] for c in CORRUPTIONS])
def test_broken_file_names_component_and_field(tmp_path: Path, mutate: Mutation, message: str) -> None:
    """A broken file fails with a ComponentError whose message names the component and the field."""
    raw = _raw()
    mutate(raw)
    path = tmp_path / "components.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    with pytest.raises(ComponentError) as caught:
        load_components(path)
    assert message in str(caught.value)
    assert str(caught.value).startswith(message.split(":")[0] + ":")


def test_invalid_json_is_a_component_error(tmp_path: Path) -> None:
    """A file that is not JSON at all fails with a ComponentError naming the file."""
    path = tmp_path / "broken.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(ComponentError, match=r"broken\.json: not valid JSON"):
        load_components(path)


def test_component_error_is_a_value_error() -> None:
    """Callers may catch ComponentError as a ValueError."""
    assert issubclass(ComponentError, ValueError)


def test_missing_file_raises_os_error(tmp_path: Path) -> None:
    """A path that does not exist raises the usual FileNotFoundError, not a ComponentError."""
    with pytest.raises(FileNotFoundError):
        load_components(tmp_path / "absent.json")


def test_the_content_hash_follows_the_values_not_the_layout(tmp_path: Path) -> None:
    """A game records the hash of the component set it is played with: the same values laid out another
    way hash alike, and one changed printed value changes the hash."""
    from kutnahora.engine import components_hash

    raw = json.loads(resources.files("kutnahora.engine").joinpath("data/components.json").read_text())
    default = components_hash(default_components())
    assert len(default) == 64
    relaid = tmp_path / "relaid.json"
    relaid.write_text(json.dumps(raw, indent=4, sort_keys=True))
    assert components_hash(load_components(relaid)) == default
    raw["buildings"][0]["name"] = "Printed Smelting Works"
    changed = tmp_path / "changed.json"
    changed.write_text(json.dumps(raw))
    assert components_hash(load_components(changed)) != default
