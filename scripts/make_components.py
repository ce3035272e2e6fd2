"""Write the default component data file, ``engine/data/components.json``.

The rulebook's texts state the counts and structures of Kutná Hora's components but not
their printed values. This script is the single source of the reconstructed default set: every table below
keeps the facts listed in ``docs/rules.md#component-facts``, and everything beyond them is
a reconstruction, listed group by group in the file's top-level ``"reconstructed"`` object.

The output is deterministic (no randomness, fixed key order, fixed layout), so the committed JSON can be
checked against this script::

    python scripts/make_components.py            # (re)write engine/data/components.json
    python scripts/make_components.py --check    # exit 1 if the file differs from what would be written
    python scripts/make_components.py -o out.json

After writing, the script loads the file through :func:`kutnahora.engine.component_file.load_components`, so a
table that breaks a validated rule fails here rather than at game start. Standard library only.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "engine" / "data" / "components.json"
FORMAT_VERSION = 1
NAME = "Kutná Hora: The City of Silver (reconstructed default set)"
WIDTH = 110  # the layout keeps a JSON value on one line when it fits in this many columns

ARM_NOTCHES = 6

# ---------------------------------------------------------------------------------------------------------
# Which groups are reconstructions, and why. Groups not listed here are stated by the rules texts or by
# docs/rules.md#component-facts and are kept exactly.

RECONSTRUCTED: dict[str, str] = {
    "buildings": "Counts, guilds, colours and stack-bottom tiles are stated; names, dots, wood and plot "
    "costs, production and effects are reconstructed.",
    "mine_tiles": "27 tiles in three tiers are stated; every tile's stars, ore, population, points and wood "
    "cost are reconstructed (9 per tier, deeper tiers stronger).",
    "technology_tiles": "Four tiles taken in order are stated; their draws (2-5), stars, ore and wood costs "
    "are reconstructed.",
    "rock_tiles": "Four rock tiles are stated; their stars are reconstructed.",
    "mine_setup_cards": "15 cards of four rock squares are stated; the squares on each card are "
    "reconstructed.",
    "mine_area": "Two entrances costing 2 wood are stated; the grid size, the row stars and the entrance "
    "squares are reconstructed.",
    "city_boards": "A larger side (3-4 players) and a smaller side (2 players) are stated; grid sizes, "
    "blocked squares and edge dots are reconstructed.",
    "population_deck": "Deck length, turn-over point and rising prices are stated; every printed price and "
    "symbol is reconstructed (linear price tables).",
    "ore_deck": "Deck length, turn-over point, the shared silver/ore arm and the price trends are stated; "
    "every printed price and symbol is reconstructed (linear price tables).",
    "arm_notches": "The number of notches per indicator arm is not stated; 6 is reconstructed.",
    "guild_setup_cards": "9 cards with rows for 2, 3 and 4 players and the 3-player sharing rule are "
    "stated; the guild sets on each card are reconstructed.",
    "event_cards": "10 cards in decks A and B are stated; names, taxes and deck advances are reconstructed.",
    "rounds_tracks": "Round counts and the red-patrician arrival are stated; the reputation penalty per "
    "round is reconstructed.",
    "reputation_points": "The -5..9 track is stated; the end-game points on each space are reconstructed.",
    "house_rewards": "Three rows of four houses and the four reward kinds are stated; which reward lies "
    "under which house is reconstructed.",
    "town_hall_rows": "One public colour per town-hall row is stated; which row holds which colour is "
    "reconstructed.",
}

# ---------------------------------------------------------------------------------------------------------
# Action cards: docs/rules.md#r1.

ACTION_CARDS: tuple[tuple[int, str, str], ...] = (
    (1, "rights", "income"),
    (2, "plot", "mine"),
    (3, "building", "plot"),
    (4, "mine", "joker"),
    (5, "income", "building"),
    (6, "st_barbara", "rights"),
)

# ---------------------------------------------------------------------------------------------------------
# Buildings. Effects are written compactly: "arm", "mining_technology", "remove_house", "flip_st_barbara",
# "patrician" (colour from the building) take no amount; "points:2" etc. carry one.

GuildRow = tuple[str, str, int, int, int, tuple[str, ...], bool]  # name, dots, wood, plot, production, …
PublicRow = tuple[str, str, int, int, tuple[str, ...]]  # name, dots, wood, plot, effects

GUILD_BUILDINGS: dict[str, tuple[GuildRow, ...]] = {
    "metallurgists": (
        ("Smelting Works", "ns", 3, 3, 1, ("arm", "ore_deck:1"), False),
        ("Roasting Kiln", "e", 2, 2, 1, ("arm", "points:1"), False),
        ("Assay House", "nw", 3, 4, 2, ("arm", "flip_st_barbara"), False),
        ("Mint Workshop", "es", 4, 5, 2, ("arm", "reputation:1"), True),
    ),
    "miners": (
        ("Pump", "n", 3, 3, 2, ("mining_technology",), False),
        ("Smithy", "ew", 3, 2, 1, ("mining_technology",), False),
        ("Winding House", "s", 2, 3, 2, ("remove_house", "mining_technology"), False),
        ("Ore Washery", "nes", 4, 4, 3, ("points:1", "mining_technology"), True),
    ),
    "builders": (
        ("Sawmill", "w", 1, 2, 2, ("arm",), False),
        ("Carpenters' Workshop", "ne", 2, 2, 2, ("arm", "population_deck:1"), False),
        ("Stonemasons' Lodge", "s", 3, 4, 3, ("arm", "flip_st_barbara"), False),
        ("Glassworks", "esw", 4, 5, 3, ("arm", "flip_st_barbara", "points:1"), True),
    ),
    "scribes": (
        ("Town Clerk's Office", "e", 2, 3, 1, ("arm", "reputation:1"), False),
        ("Notary", "ns", 2, 2, 1, ("arm", "flip_st_barbara"), False),
        ("Chancery", "nw", 3, 4, 2, ("arm", "flip_st_barbara", "tax:1"), False),
        ("Royal Mining Office", "nes", 4, 5, 2, ("arm", "ore_deck:1", "points:1"), True),
    ),
    "grocers": (
        ("Bakery", "s", 2, 2, 1, ("arm", "population_deck:1"), False),
        ("Butchers' Shambles", "ew", 2, 3, 2, ("arm", "remove_house"), False),
        ("Vegetable Market", "n", 3, 3, 2, ("arm", "reputation:1"), False),
        ("Granary", "nsw", 4, 4, 3, ("arm", "population_deck:1", "points:1"), True),
    ),
    "innkeepers": (
        ("Tavern", "e", 2, 2, 1, ("arm", "population_deck:1"), False),
        ("Malthouse", "nw", 2, 3, 2, ("arm", "remove_house"), False),
        ("Bathhouse", "s", 3, 3, 2, ("arm", "reputation:1"), False),
        ("Brewery", "nes", 4, 5, 3, ("arm", "flip_st_barbara", "points:1"), True),
    ),
}

PUBLIC_BUILDINGS: dict[str, tuple[PublicRow, ...]] = {
    "green": (
        ("Church of Our Lady", "ns", 4, 5, ("patrician", "reputation:3")),
        ("St. James Church", "ew", 5, 6, ("patrician", "reputation:4")),
        ("Hospital of the Holy Spirit", "n", 3, 4, ("patrician", "reputation:2", "points:1")),
    ),
    "silver": (
        ("Corpus Christi Chapel", "s", 3, 4, ("patrician", "pelicans:2")),
        ("Jesuit College", "new", 5, 6, ("patrician", "pelicans:2", "reputation:1")),
        ("Ursuline Convent", "es", 4, 5, ("patrician", "pelicans:1", "points:2")),
    ),
    "yellow": (
        ("Stone House", "nw", 4, 5, ("patrician", "points:3")),
        ("Town Hall", "nes", 5, 6, ("patrician", "points:4")),
        ("Stone Fountain", "s", 3, 4, ("patrician", "points:2", "reputation:1")),
    ),
    "red": (
        ("High Church of the Virgin Mary", "new", 5, 6, ("patrician", "reputation:2", "points:3")),
        ("Italian Court", "es", 5, 6, ("patrician", "pelicans:2", "points:2")),
        ("Hrádek", "nw", 4, 5, ("patrician", "reputation:2", "pelicans:1")),
    ),
}

# ---------------------------------------------------------------------------------------------------------
# Mine tiles: (stars, ore, population, points, wood_cost), nine per tier.

MINE_TILES: dict[int, tuple[tuple[int, int, int, int, int], ...]] = {
    1: (
        (0, 1, 0, 0, 1),
        (0, 1, 1, 0, 1),
        (0, 2, 0, 0, 2),
        (1, 1, 0, 0, 1),
        (1, 1, 0, 1, 2),
        (0, 1, 0, 1, 1),
        (1, 2, 0, 0, 2),
        (0, 2, 1, 0, 2),
        (1, 1, 1, 0, 2),
    ),
    2: (
        (1, 2, 0, 1, 2),
        (1, 2, 1, 0, 3),
        (2, 1, 0, 1, 2),
        (2, 2, 0, 0, 3),
        (1, 1, 1, 2, 2),
        (2, 2, 1, 0, 3),
        (1, 3, 0, 0, 3),
        (2, 1, 1, 1, 3),
        (2, 2, 0, 1, 3),
    ),
    3: (
        (2, 3, 1, 1, 3),
        (3, 2, 0, 2, 3),
        (3, 2, 1, 1, 4),
        (2, 2, 2, 2, 4),
        (3, 3, 0, 1, 4),
        (3, 1, 1, 3, 3),
        (2, 3, 2, 0, 4),
        (3, 2, 1, 2, 4),
        (3, 3, 1, 1, 4),
    ),
}

# Mining-technology tiles in the order they are taken: (stars, ore, population, points, wood_cost, draws).
TECHNOLOGY_TILES: tuple[tuple[int, int, int, int, int, int], ...] = (
    (1, 1, 0, 0, 2, 2),
    (1, 1, 0, 1, 2, 3),
    (1, 2, 0, 0, 3, 4),
    (2, 1, 0, 1, 3, 5),
)

ROCK_STARS: tuple[int, ...] = (1, 2, 2, 3)

MINE_ROWS = 4
MINE_COLUMNS = 7
MINE_ROW_STARS: tuple[int, ...] = (0, 1, 2, 3)
MINE_ENTRANCES: tuple[tuple[int, int], ...] = ((0, 1), (0, 5))
MINE_ENTRANCE_COST = 2

# Four rock squares per card, never in row 0 (the entrance row), no two cards alike.
MINE_SETUP_CARDS: tuple[tuple[tuple[int, int], ...], ...] = (
    ((1, 2), (2, 5), (3, 0), (3, 4)),
    ((1, 4), (2, 1), (2, 6), (3, 3)),
    ((1, 0), (1, 6), (2, 3), (3, 5)),
    ((1, 3), (2, 0), (3, 2), (3, 6)),
    ((1, 1), (2, 4), (3, 1), (3, 5)),
    ((1, 5), (2, 2), (3, 0), (3, 6)),
    ((1, 2), (1, 6), (2, 4), (3, 1)),
    ((1, 3), (2, 6), (3, 0), (3, 3)),
    ((1, 0), (2, 2), (2, 5), (3, 4)),
    ((1, 4), (2, 0), (3, 2), (3, 5)),
    ((1, 1), (1, 5), (2, 3), (3, 6)),
    ((1, 6), (2, 1), (3, 3), (3, 4)),
    ((1, 2), (2, 4), (2, 6), (3, 0)),
    ((1, 3), (2, 1), (3, 5), (3, 6)),
    ((1, 0), (1, 4), (2, 6), (3, 2)),
)

# ---------------------------------------------------------------------------------------------------------
# City boards: (rows, columns, blocked squares, edge dots as (row, column, side)).

CityRow = tuple[int, int, tuple[tuple[int, int], ...], tuple[tuple[int, int, str], ...]]

CITY_BOARDS: dict[str, CityRow] = {
    "large": (
        6,
        6,
        ((0, 0), (0, 5), (5, 0), (5, 5)),
        (
            (0, 1, "w"),
            (0, 3, "n"),
            (1, 0, "n"),
            (1, 5, "n"),
            (2, 0, "w"),
            (3, 5, "e"),
            (4, 0, "w"),
            (5, 1, "s"),
            (5, 2, "s"),
            (5, 4, "e"),
        ),
    ),
    "small": (
        5,
        5,
        ((0, 0), (4, 4)),
        (
            (0, 2, "n"),
            (0, 4, "n"),
            (1, 0, "n"),
            (1, 4, "e"),
            (3, 0, "w"),
            (4, 1, "s"),
            (4, 3, "e"),
        ),
    ),
}

# ---------------------------------------------------------------------------------------------------------
# Price decks. Each commodity's price is interpolated linearly (rounded half up) from the first card's row
# of prices to the last card's row, notch by notch, so every trend holds on every card.

PriceTable = tuple[tuple[int, ...], tuple[int, ...]]  # (first card, last card), one price per notch

POPULATION_LAST_FRONT = 19  # 0-19 on the front faces; 20-39 after the turn-over
POPULATION_PRICES: dict[str, PriceTable] = {
    "wood": ((3, 3, 2, 2, 1, 1), (7, 6, 5, 4, 3, 2)),
    "food": ((4, 4, 3, 3, 2, 2), (9, 8, 7, 6, 5, 4)),
    "beer": ((5, 4, 4, 3, 3, 2), (9, 9, 8, 7, 6, 5)),
}
POPULATION_TOWN_BUILDS: dict[int, tuple[str, ...]] = {
    6: ("wood",),
    12: ("food",),
    17: ("beer",),
    26: ("wood",),
    33: ("food",),
}
POPULATION_RED_X: dict[int, tuple[str, ...]] = {9: ("beer",), 15: ("wood",), 22: ("food",), 37: ("beer",)}

ORE_LAST_FRONT = 14  # 0-14 on the front faces; 15-29 after the turn-over
ORE_PRICES: dict[str, PriceTable] = {
    # silver and ore share one arm: the same notch lowers silver and raises ore
    "silver": ((6, 5, 5, 4, 4, 3), (12, 11, 10, 9, 8, 7)),
    "ore": ((4, 4, 5, 5, 6, 6), (1, 1, 2, 2, 3, 3)),
    "permits": ((4, 3, 3, 3, 2, 2), (8, 7, 7, 6, 5, 4)),
}
ORE_TOWN_BUILDS: dict[int, tuple[str, ...]] = {5: ("silver",), 11: ("permits",), 21: ("silver",)}
ORE_RED_X: dict[int, tuple[str, ...]] = {8: ("ore",), 17: ("permits",), 25: ("silver",)}

# ---------------------------------------------------------------------------------------------------------
# Guild setup cards. Each card is one ordering of the six guilds, read three ways:
#   2 players: the first three and the last three (disjoint, covering all six);
#   3 players: guilds 0-2 are each player's own, 3-5 are shared by players (1,2), (1,3), (2,3);
#   4 players: the six guilds are shared by the six pairs of players, so every guild appears twice.

GUILD_ORDERS: tuple[tuple[str, ...], ...] = (
    ("miners", "builders", "grocers", "metallurgists", "scribes", "innkeepers"),  # card 1: first game
    ("metallurgists", "miners", "builders", "scribes", "grocers", "innkeepers"),
    ("metallurgists", "miners", "scribes", "builders", "grocers", "innkeepers"),
    ("grocers", "metallurgists", "miners", "innkeepers", "builders", "scribes"),
    ("innkeepers", "miners", "metallurgists", "scribes", "grocers", "builders"),
    ("builders", "scribes", "metallurgists", "miners", "innkeepers", "grocers"),
    ("metallurgists", "builders", "grocers", "scribes", "miners", "innkeepers"),
    ("innkeepers", "metallurgists", "builders", "grocers", "scribes", "miners"),
    ("scribes", "grocers", "metallurgists", "builders", "innkeepers", "miners"),
)

# ---------------------------------------------------------------------------------------------------------
# Events: (deck, name, tax, population advance, ore advance).

EVENT_CARDS: tuple[tuple[str, str, int, int, int], ...] = (
    ("A", "Good Harvest", 0, 1, 0),
    ("A", "New Settlers", 0, 2, 0),
    ("A", "Rich Vein Found", 0, 0, 2),
    ("A", "Royal Levy", 1, 1, 1),
    ("A", "Market Day", 0, 1, 1),
    ("B", "Silver Rush", 1, 1, 3),
    ("B", "Crown Tax", 2, 1, 1),
    ("B", "Influx of Miners", 0, 2, 2),
    ("B", "Pilgrims to St. Barbara", 1, 3, 0),
    ("B", "Deep Gallery Opened", 0, 1, 3),
)

# St. Barbara tiles exactly as 004 · The eleven tiles lists them: (effect, flip tax).
BARBARA_TILES: tuple[tuple[str, int], ...] = (
    ("reputation", 0),
    ("free_rights", 1),
    ("house_for_production", 1),
    ("free_plot", 1),
    ("double_income", 2),
    ("seat_from_bank", 3),
    ("public_neighbours", 2),
    ("free_building", 1),
    ("double_mine", 1),
    ("score_building", 1),
    ("final", 0),
)

# Rounds tracks by player count: (rounds, reputation penalty per round, red-patrician arrival round).
ROUNDS_TRACKS: dict[int, tuple[int, tuple[int, ...], int]] = {
    2: (6, (1, 1, 2, 2, 3, 3), 3),
    3: (6, (1, 1, 2, 2, 3, 3), 3),
    4: (5, (1, 2, 2, 3, 3), 2),
}

REPUTATION_POINTS: dict[int, int] = {
    -5: -5,
    -4: -4,
    -3: -3,
    -2: -2,
    -1: -1,
    0: 0,
    1: 1,
    2: 1,
    3: 2,
    4: 2,
    5: 3,
    6: 4,
    7: 5,
    8: 6,
    9: 7,
}

# Player-board house rewards, three rows of four columns: (kind, amount).
HOUSE_REWARDS: tuple[tuple[tuple[str, int], ...], ...] = (
    (("reputation", 1), ("pelican", 1), ("points", 2), ("public_building", 0)),
    (("points", 1), ("reputation", 1), ("public_building", 0), ("points", 3)),
    (("pelican", 1), ("points", 1), ("reputation", 2), ("public_building", 0)),
)


# ---------------------------------------------------------------------------------------------------------
# Building the JSON document.


def _dots(sides: str) -> list[str]:
    return [side for side in "nesw" if side in sides]


def _effect(text: str, color: str | None = None) -> dict[str, Any]:
    kind, _, amount = text.partition(":")
    effect: dict[str, Any] = {"kind": kind}
    if amount:
        effect["amount"] = int(amount)
    if kind == "patrician":
        effect["color"] = color
    return effect


def _buildings() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for guild, rows in GUILD_BUILDINGS.items():
        for name, dots, wood, plot, production, effects, bottom in rows:
            building: dict[str, Any] = {
                "id": len(out),
                "name": name,
                "guild": guild,
                "color": None,
                "dots": _dots(dots),
                "wood_cost": wood,
                "plot_cost": plot,
                "production": production,
                "effects": [_effect(e) for e in effects],
            }
            if bottom:
                building["bottom"] = True
            out.append(building)
    for color, public_rows in PUBLIC_BUILDINGS.items():
        for name, dots, wood, plot, effects in public_rows:
            out.append(
                {
                    "id": len(out),
                    "name": name,
                    "guild": None,
                    "color": color,
                    "dots": _dots(dots),
                    "wood_cost": wood,
                    "plot_cost": plot,
                    "production": 0,
                    "effects": [_effect(e, color) for e in effects],
                }
            )
    return out


def _mine_tiles() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for tier, tiles in MINE_TILES.items():
        for stars, ore, population, points, wood in tiles:
            out.append(
                {
                    "id": len(out),
                    "tier": tier,
                    "stars": stars,
                    "ore": ore,
                    "population": population,
                    "points": points,
                    "wood_cost": wood,
                }
            )
    return out


def _technology_tiles(first_id: int) -> list[dict[str, Any]]:
    return [
        {
            "id": first_id + index,
            "tier": 0,
            "stars": stars,
            "ore": ore,
            "population": population,
            "points": points,
            "wood_cost": wood,
            "draws": draws,
        }
        for index, (stars, ore, population, points, wood, draws) in enumerate(TECHNOLOGY_TILES)
    ]


def _interpolate(first: int, last: int, position: int, final: int) -> int:
    """Round half up of ``first + (last - first) * position / final``, in integers (monotone in position)."""
    return first + ((last - first) * 2 * position + final) // (2 * final)


def _deck(
    deck: str,
    last_front: int,
    prices: dict[str, PriceTable],
    town_builds: dict[int, tuple[str, ...]],
    red_x: dict[int, tuple[str, ...]],
) -> dict[str, Any]:
    count = 2 * (last_front + 1)
    cards: list[dict[str, Any]] = []
    for number in range(count):
        card: dict[str, Any] = {
            "number": number,
            "prices": {
                commodity: [_interpolate(a, b, number, count - 1) for a, b in zip(first, last, strict=True)]
                for commodity, (first, last) in prices.items()
            },
        }
        if number in town_builds:
            card["town_builds"] = list(town_builds[number])
        if number in red_x:
            card["red_x"] = list(red_x[number])
        cards.append(card)
    return {"deck": deck, "turn_over_after": last_front, "cards": cards}


def _guild_setup_cards() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for number, order in enumerate(GUILD_ORDERS, start=1):
        g = order
        rows = {
            "2": [[g[0], g[1], g[2]], [g[3], g[4], g[5]]],
            "3": [[g[0], g[3], g[4]], [g[1], g[3], g[5]], [g[2], g[4], g[5]]],
            "4": [[g[0], g[1], g[2]], [g[0], g[3], g[4]], [g[1], g[3], g[5]], [g[2], g[4], g[5]]],
        }
        out.append({"id": number, "rows": rows})
    return out


def build_document() -> dict[str, Any]:
    """The whole component data file as a JSON-ready value, keys in a fixed order."""
    mine_tiles = _mine_tiles()
    return {
        "format_version": FORMAT_VERSION,
        "name": NAME,
        "reconstructed": RECONSTRUCTED,
        "action_cards": [{"number": n, "top": top, "bottom": bottom} for n, top, bottom in ACTION_CARDS],
        "buildings": _buildings(),
        "mine_tiles": mine_tiles,
        "technology_tiles": _technology_tiles(len(mine_tiles)),
        "rock_tiles": [{"id": i, "stars": stars} for i, stars in enumerate(ROCK_STARS)],
        "mine_setup_cards": [
            {"id": i, "squares": [list(square) for square in squares]}
            for i, squares in enumerate(MINE_SETUP_CARDS)
        ],
        "mine_area": {
            "rows": MINE_ROWS,
            "columns": MINE_COLUMNS,
            "row_stars": list(MINE_ROW_STARS),
            "entrances": [list(square) for square in MINE_ENTRANCES],
            "entrance_cost": MINE_ENTRANCE_COST,
        },
        "guild_setup_cards": _guild_setup_cards(),
        "population_deck": _deck(
            "population", POPULATION_LAST_FRONT, POPULATION_PRICES, POPULATION_TOWN_BUILDS, POPULATION_RED_X
        ),
        "ore_deck": _deck("ore", ORE_LAST_FRONT, ORE_PRICES, ORE_TOWN_BUILDS, ORE_RED_X),
        "arm_notches": ARM_NOTCHES,
        "event_cards": [
            {"id": i, "deck": deck, "name": name, "tax": tax, "population": population, "ore": ore}
            for i, (deck, name, tax, population, ore) in enumerate(EVENT_CARDS)
        ],
        "barbara_tiles": [
            {"number": n, "effect": effect, "flip_tax": tax}
            for n, (effect, tax) in enumerate(BARBARA_TILES, start=1)
        ],
        "rounds_tracks": {
            str(players): {"rounds": rounds, "reputation_penalty": list(penalty), "red_arrival_round": red}
            for players, (rounds, penalty, red) in ROUNDS_TRACKS.items()
        },
        "reputation_points": {str(step): points for step, points in REPUTATION_POINTS.items()},
        "house_rewards": [
            [
                {"kind": kind} if kind == "public_building" else {"kind": kind, "amount": amount}
                for kind, amount in row
            ]
            for row in HOUSE_REWARDS
        ],
        "city_boards": {
            name: {
                "name": name,
                "rows": rows,
                "columns": columns,
                "blocked": [list(square) for square in blocked],
                "edge_dots": [{"square": [r, c], "side": side} for r, c, side in dots],
            }
            for name, (rows, columns, blocked, dots) in CITY_BOARDS.items()
        },
        "town_hall_costs": [["groschen", 1], ["permits", 1], ["permits", 2], ["permits", 3]],
        "town_hall_rows": ["green", "silver", "yellow"],
        "starting_groschen": [40, 41, 42, 43],
        "patricians_per_color": 3,
        "mine_row_scoring": [
            {"min_stars": 0, "points": [2, 1, 0]},
            {"min_stars": 6, "points": [3, 2, 1]},
            {"min_stars": 10, "points": [5, 3, 2]},
        ],
        "default_plot_cost": 5,
        "starting_miners_in_pool": 1,
        "miners_per_player": 9,
        "houses_per_row": 4,
        "plot_markers": 3,
        "building_slots": 3,
        "miner_pool_size": 2,
        "patrician_seat_cost": 10,
        "tax_limit": 25,
    }


# ---------------------------------------------------------------------------------------------------------
# Layout: a value stays on one line when it fits in WIDTH columns, otherwise it opens one item per line.


def _render(value: Any, indent: int, used: int) -> str:
    compact = json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
    if not isinstance(value, dict | list) or not value or used + len(compact) + 1 <= WIDTH:
        return compact
    inner = indent + 2
    pad = " " * inner
    if isinstance(value, list):
        parts = [pad + _render(item, inner, inner) for item in value]
        return "[\n" + ",\n".join(parts) + "\n" + " " * indent + "]"
    parts = []
    for key, item in value.items():
        prefix = json.dumps(key, ensure_ascii=False) + ": "
        parts.append(pad + prefix + _render(item, inner, inner + len(prefix)))
    return "{\n" + ",\n".join(parts) + "\n" + " " * indent + "}"


def render_document() -> str:
    """The component data file's exact text."""
    return _render(build_document(), 0, 0) + "\n"


def _validate(path: Path) -> None:
    """Load the written file through the engine's loader, which raises on any broken rule."""
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    loader = importlib.import_module("kutnahora.engine.component_file")
    components = loader.load_components(path)
    print(f"{path}: {components.name}: {len(components.buildings)} buildings, valid")


def main(argv: Sequence[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the component data file."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("-o", "--output", type=Path, default=DEFAULT_OUTPUT, help="file to write")
    parser.add_argument(
        "--check",
        action="store_true",
        help="do not write; exit 1 if the file differs from the generated text",
    )
    parser.add_argument(
        "--no-validate", action="store_true", help="skip loading the result through the engine"
    )
    args = parser.parse_args(argv)
    output: Path = args.output
    text = render_document()
    if args.check:
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if current != text:
            print(f"{output}: out of date; run scripts/make_components.py", file=sys.stderr)
            return 1
        print(f"{output}: up to date")
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        print(f"{output}: written")
    if not args.no_validate:
        _validate(output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
