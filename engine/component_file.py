"""Load and validate a component data file (format version 1).

The default data set ships as ``engine/data/components.json`` (written by ``scripts/make_components.py``).
:func:`load_components` parses a file into the frozen dataclasses of :mod:`kutnahora.engine.components` and
checks every count and structure that ``docs/rules.md#component-facts`` states, the readings
that the data carries (action-card pairs, town-hall costs, rounds, St. Barbara tiles), and the conventions the
rules engine relies on (ids equal to positions, building order, effect shapes, price monotonicity, board
geometry). A file that breaks any of them raises :class:`ComponentError` naming the component and the field,
for example ``buildings[7].wood_cost: expected a non-negative integer, got -1``.

File layout: a JSON object with ``format_version`` (1), ``name``, ``reconstructed`` (group name -> one-line
note saying what in that group is a reconstruction) and one key per
:class:`~kutnahora.engine.components.ComponentSet` field. Enum values are written as their string values,
squares as ``[row, column]``, sides as ``"n"``, ``"e"``, ``"s"``, ``"w"``, and integer-keyed maps (rounds
tracks, reputation points, guild setup rows) with string keys.

Conventions checked beyond the rules texts:

* ``buildings``: ids equal positions; the 24 guild buildings come first, then the 12 public ones. A guild
  building other than the Miners' carries exactly one ``arm`` effect; Miners' buildings carry none, and no
  ``ore_deck`` effect either (their ore-deck advance is their production, applied by the engine); every one
  of them, and only they, carry ``mining_technology`` (001 · Guild Buildings), so there are as many carriers
  as technology tiles. A public building carries exactly one ``patrician`` effect of its own colour
  and no ``arm``, ``mining_technology`` or ``flip_st_barbara``. Symbol effects (``arm``,
  ``mining_technology``, ``patrician``, ``remove_house``, ``flip_st_barbara``) have amount 0; counted effects
  have a positive amount; only ``patrician`` has a colour. No effect kind appears twice on one tile.
* Price decks: one price per arm notch for each commodity of the deck, all positive. Along the notches every
  price falls or stays, except ore, which rises or stays (it shares its arm with silver). Over the deck,
  wood, food, beer, silver and permits end no lower than they start and ore ends no higher.
* ``mine_setup_cards``: rock squares inside the mine area, never in row 0 (the entrance row), no two cards
  alike.
* ``city_boards``: an edge dot sits on a usable square and faces the board's edge or a blocked square.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import json
import os
from collections.abc import Iterable, Mapping
from enum import StrEnum
from importlib import resources
from typing import Any, TypeVar

from kutnahora.engine.components import (
    Action,
    ActionCard,
    BarbaraEffect,
    BarbaraTile,
    Building,
    CityBoard,
    Color,
    Commodity,
    ComponentSet,
    Deck,
    Dots,
    EdgeDot,
    Effect,
    EffectKind,
    EventCard,
    Guild,
    GuildSetupCard,
    HouseReward,
    HouseRewardKind,
    MineArea,
    MineRowScoring,
    MineSetupCard,
    MineTile,
    PriceCard,
    PriceDeck,
    RockTile,
    RoundsTrack,
    Side,
    Square,
)

__all__ = ["FORMAT_VERSION", "ComponentError", "default_components", "load_components", "parse_components"]

FORMAT_VERSION = 1
DEFAULT_PACKAGE = "kutnahora.engine"
DEFAULT_RESOURCE = ("data", "components.json")

# --- Facts the component data must keep (docs/rules.md#component-facts), and the readings the data carries

GUILD_BUILDINGS_PER_GUILD = 4
PUBLIC_BUILDINGS_PER_COLOR = 3
MINE_TILE_COUNT = 27
MINE_TIERS = (1, 2, 3)
TECHNOLOGY_TILE_COUNT = 4
ROCK_TILE_COUNT = 4
MINE_SETUP_CARD_COUNT = 15
MINE_ENTRANCE_COUNT = 2
MINE_ENTRANCE_COST = 2
POPULATION_TURN_OVER_AFTER = 19  # population cards 0-19, then 20 on after the turn-over
ORE_TURN_OVER_AFTER = 14  # ore cards 0-14, then 15 on
GUILD_SETUP_CARD_COUNT = 9
GUILD_SETUP_PLAYER_COUNTS = (2, 3, 4)
GUILD_TILES_PER_GUILD = 2  # 12 guild tiles for six guilds
EVENT_CARD_COUNT = 10
EVENT_DECKS = ("A", "B")
BARBARA_FLIP_TAXES = (0, 1, 1, 1, 2, 3, 2, 1, 1, 1, 0)  # 004 · The eleven tiles
ROUNDS = {2: 6, 3: 6, 4: 5}
RED_ARRIVAL_ROUND = {2: 3, 3: 3, 4: 2}  # ruling 7
REPUTATION_RANGE = range(-5, 10)  # ruling 10
HOUSE_ROWS = 3
HOUSES_PER_ROW = 4
TOWN_HALL_COSTS = (("groschen", 1), ("permits", 1), ("permits", 2), ("permits", 3))  # ruling 6
TOWN_HALL_ROW_COLORS = frozenset({Color.GREEN, Color.SILVER, Color.YELLOW})
STARTING_GROSCHEN = (40, 41, 42, 43)
PATRICIANS_PER_COLOR = 3
MINE_ROW_SCORING = ((0, (2, 1, 0)), (6, (3, 2, 1)), (10, (5, 3, 2)))
ACTION_CARD_COUNT = 6
SINGLE_ACTIONS = frozenset({Action.ST_BARBARA, Action.JOKER})  # on one card; every other action on two
RULE_CONSTANTS = {  # field -> required value (docs/rules.md#r5 and docs/rules.md#r9; player boards)
    "starting_miners_in_pool": 1,
    "miners_per_player": 9,
    "miner_pool_size": 2,
    "plot_markers": 3,
    "building_slots": 3,
    "houses_per_row": HOUSES_PER_ROW,
    "tax_limit": 25,
}

# --- Conventions of the effect vocabulary ---------------------------------------------------------------

SYMBOL_EFFECTS = frozenset(
    {
        EffectKind.ARM,
        EffectKind.MINING_TECHNOLOGY,
        EffectKind.PATRICIAN,
        EffectKind.REMOVE_HOUSE,
        EffectKind.FLIP_ST_BARBARA,
    }
)
NOT_ON_PUBLIC = frozenset({EffectKind.ARM, EffectKind.MINING_TECHNOLOGY, EffectKind.FLIP_ST_BARBARA})
DECK_COMMODITIES: dict[Deck, tuple[Commodity, ...]] = {
    Deck.POPULATION: (Commodity.WOOD, Commodity.FOOD, Commodity.BEER),
    Deck.ORE: (Commodity.SILVER, Commodity.ORE, Commodity.PERMITS),
}
RISING_WITH_NOTCH = frozenset({Commodity.ORE})  # shares the silver arm: moving it right raises ore
FALLING_WITH_DECK = frozenset({Commodity.ORE})  # more ore mined, ore cheaper
NO_TOWN_BUILDS = frozenset({Commodity.ORE})

GROUP_NAMES = tuple(
    f.name for f in dataclasses.fields(ComponentSet) if f.name not in ("name", "reconstructed")
)
TOP_LEVEL_KEYS = ("format_version", "name", "reconstructed", *GROUP_NAMES)

E = TypeVar("E", bound=StrEnum)


class ComponentError(ValueError):
    """A component data file that is malformed or breaks a rule; the message names component and field."""


# --- Public API ------------------------------------------------------------------------------------------


def load_components(path: str | os.PathLike[str] | None = None) -> ComponentSet:
    """Load and validate a component data file; ``None`` loads the packaged default set.

    Raises :class:`ComponentError` when the file is not valid JSON or breaks any checked rule; the message
    names the component and the field. A missing or unreadable file raises the usual :class:`OSError`.
    """
    if path is None:
        resource = resources.files(DEFAULT_PACKAGE)
        for part in DEFAULT_RESOURCE:
            resource = resource.joinpath(part)
        return parse_components(
            resource.read_text(encoding="utf-8"), "/".join((DEFAULT_PACKAGE, *DEFAULT_RESOURCE))
        )
    with open(path, encoding="utf-8") as handle:
        text = handle.read()
    return parse_components(text, os.fspath(path))


@functools.lru_cache(maxsize=1)
def default_components() -> ComponentSet:
    """The packaged default component set, loaded once. Treat it as read-only (its maps are plain dicts)."""
    return load_components()


def parse_components(text: str, source: str = "<string>") -> ComponentSet:
    """Parse and validate the text of a component data file; ``source`` names it in JSON syntax errors."""
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ComponentError(f"{source}: not valid JSON: {exc}") from exc
    return _component_set(raw)


# --- Reading JSON values ---------------------------------------------------------------------------------


def _fail(where: str, message: str) -> ComponentError:
    return ComponentError(f"{where}: {message}")


def _show(value: object) -> str:
    """A short rendering of a JSON value for messages."""
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list) and len(value) > 8:
        return f"a list of {len(value)} items"
    return json.dumps(value, ensure_ascii=False)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _object(raw: object, where: str, required: Iterable[str], optional: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(raw, dict):
        raise _fail(where, f"expected an object, got {_show(raw)}")
    required = tuple(required)
    allowed = set(required) | set(optional)
    for key in required:
        if key not in raw:
            raise _fail(_join(where, key), "missing field")
    for key in raw:
        if key not in allowed:
            raise _fail(_join(where, str(key)), "unknown field")
    return raw


def _int_description(minimum: int | None, maximum: int | None) -> str:
    if minimum is None:
        return "an integer" if maximum is None else f"an integer of at most {maximum}"
    if maximum is not None:
        return f"an integer in {minimum}..{maximum}"
    if minimum == 0:
        return "a non-negative integer"
    return "a positive integer" if minimum == 1 else f"an integer of at least {minimum}"


def _int(raw: object, where: str, minimum: int | None = 0, maximum: int | None = None) -> int:
    if (
        isinstance(raw, bool)
        or not isinstance(raw, int)
        or (minimum is not None and raw < minimum)
        or (maximum is not None and raw > maximum)
    ):
        raise _fail(where, f"expected {_int_description(minimum, maximum)}, got {_show(raw)}")
    return raw


def _exact_int(raw: object, where: str, expected: int) -> int:
    value = _int(raw, where, None)
    if value != expected:
        raise _fail(where, f"expected {expected}, got {value}")
    return value


def _bool(raw: object, where: str) -> bool:
    if not isinstance(raw, bool):
        raise _fail(where, f"expected true or false, got {_show(raw)}")
    return raw


def _str(raw: object, where: str) -> str:
    if not isinstance(raw, str) or not raw.strip():
        raise _fail(where, f"expected a non-empty string, got {_show(raw)}")
    return raw


def _list(raw: object, where: str) -> list[Any]:
    if not isinstance(raw, list):
        raise _fail(where, f"expected a list, got {_show(raw)}")
    return raw


def _counted(raw: object, where: str, count: int, noun: str, count_where: str | None = None) -> list[Any]:
    """A list of exactly ``count`` items; the count error names ``count_where`` (default ``where``)."""
    items = _list(raw, where)
    if len(items) != count:
        raise _fail(count_where or where, f"expected {count} {noun}, got {len(items)}")
    return items


def _enum(raw: object, cls: type[E], where: str) -> E:
    values = [member.value for member in cls]
    if not isinstance(raw, str) or raw not in values:
        raise _fail(where, f"expected one of {', '.join(values)}, got {_show(raw)}")
    return cls(raw)


def _optional_enum(raw: object, cls: type[E], where: str) -> E | None:
    return None if raw is None else _enum(raw, cls, where)


def _square(raw: object, where: str) -> Square:
    items = _list(raw, where)
    if len(items) != 2:
        raise _fail(where, f"expected a [row, column] pair, got {_show(raw)}")
    return (_int(items[0], f"{where}[0]"), _int(items[1], f"{where}[1]"))


def _int_keys(raw: object, where: str, expected: Iterable[int], noun: str) -> dict[int, Any]:
    """An object keyed by decimal integers, with exactly the ``expected`` keys, in that order."""
    if not isinstance(raw, dict):
        raise _fail(where, f"expected an object, got {_show(raw)}")
    expected = tuple(expected)
    out: dict[int, Any] = {}
    for key, value in raw.items():
        try:
            number = int(key)
        except ValueError:
            number = None
        if number is None or str(number) != key or number not in expected:
            wanted = ", ".join(str(k) for k in expected)
            raise _fail(where, f"unexpected key {_show(key)}: expected {noun} {wanted}")
        out[number] = value
    for number in expected:
        if number not in out:
            raise _fail(f"{where}[{number}]", "missing")
    return {number: out[number] for number in expected}


def _squares_text(square: Square) -> str:
    return f"[{square[0]}, {square[1]}]"


def _check_ids(value: int, where: str, expected: int) -> int:
    if value != expected:
        raise _fail(where, f"expected {expected} (ids follow positions), got {value}")
    return value


# --- The component set ------------------------------------------------------------------------------------


def _component_set(raw: object) -> ComponentSet:
    if not isinstance(raw, dict):
        raise _fail("components", f"expected a JSON object, got {_show(raw)}")
    if "format_version" not in raw:
        raise _fail("format_version", "missing field")
    _exact_int(raw["format_version"], "format_version", FORMAT_VERSION)
    top = _object(raw, "", TOP_LEVEL_KEYS)

    arm_notches = _int(top["arm_notches"], "arm_notches", 2)
    rock_tiles = _rock_tiles(top["rock_tiles"])
    mine_area = _mine_area(top["mine_area"])
    mine_tiles = _mine_tiles(top["mine_tiles"])
    rounds_tracks = _rounds_tracks(top["rounds_tracks"])
    components = ComponentSet(
        name=_str(top["name"], "name"),
        reconstructed=_reconstructed(top["reconstructed"]),
        action_cards=_action_cards(top["action_cards"]),
        buildings=_buildings(top["buildings"]),
        mine_tiles=mine_tiles,
        technology_tiles=_technology_tiles(top["technology_tiles"], len(mine_tiles)),
        rock_tiles=rock_tiles,
        mine_setup_cards=_mine_setup_cards(top["mine_setup_cards"], mine_area, len(rock_tiles)),
        mine_area=mine_area,
        guild_setup_cards=_guild_setup_cards(top["guild_setup_cards"]),
        population_deck=_price_deck(
            top["population_deck"],
            "population_deck",
            Deck.POPULATION,
            POPULATION_TURN_OVER_AFTER,
            arm_notches,
        ),
        ore_deck=_price_deck(top["ore_deck"], "ore_deck", Deck.ORE, ORE_TURN_OVER_AFTER, arm_notches),
        arm_notches=arm_notches,
        event_cards=_event_cards(top["event_cards"], rounds_tracks),
        barbara_tiles=_barbara_tiles(top["barbara_tiles"]),
        rounds_tracks=rounds_tracks,
        reputation_points=_reputation_points(top["reputation_points"]),
        house_rewards=_house_rewards(top["house_rewards"]),
        city_boards=_city_boards(top["city_boards"]),
        town_hall_costs=_town_hall_costs(top["town_hall_costs"]),
        town_hall_rows=_town_hall_rows(top["town_hall_rows"]),
        starting_groschen=_starting_groschen(top["starting_groschen"]),
        patricians_per_color=_exact_int(
            top["patricians_per_color"], "patricians_per_color", PATRICIANS_PER_COLOR
        ),
        mine_row_scoring=_mine_row_scoring(top["mine_row_scoring"]),
        default_plot_cost=_int(top["default_plot_cost"], "default_plot_cost", 1),
        starting_miners_in_pool=_exact_int(
            top["starting_miners_in_pool"],
            "starting_miners_in_pool",
            RULE_CONSTANTS["starting_miners_in_pool"],
        ),
        miners_per_player=_exact_int(
            top["miners_per_player"], "miners_per_player", RULE_CONSTANTS["miners_per_player"]
        ),
        houses_per_row=_exact_int(top["houses_per_row"], "houses_per_row", RULE_CONSTANTS["houses_per_row"]),
        plot_markers=_exact_int(top["plot_markers"], "plot_markers", RULE_CONSTANTS["plot_markers"]),
        building_slots=_exact_int(top["building_slots"], "building_slots", RULE_CONSTANTS["building_slots"]),
        miner_pool_size=_exact_int(
            top["miner_pool_size"], "miner_pool_size", RULE_CONSTANTS["miner_pool_size"]
        ),
        patrician_seat_cost=_int(top["patrician_seat_cost"], "patrician_seat_cost", 1),
        tax_limit=_exact_int(top["tax_limit"], "tax_limit", RULE_CONSTANTS["tax_limit"]),
    )
    _check_mining_technology(components)
    return components


def _reconstructed(raw: object) -> tuple[str, ...]:
    notes = _object(raw, "reconstructed", (), GROUP_NAMES)
    for key, note in notes.items():
        _str(note, f"reconstructed.{key}")
    return tuple(notes)


# --- Action cards (ruling 1; 002 · Action cards) ---------------------------------------------------------


def _action_cards(raw: object) -> tuple[ActionCard, ...]:
    items = _counted(raw, "action_cards", ACTION_CARD_COUNT, "cards")
    cards: list[ActionCard] = []
    for i, item in enumerate(items):
        where = f"action_cards[{i}]"
        fields = _object(item, where, ("number", "top", "bottom"))
        number = _exact_int(fields["number"], f"{where}.number", i + 1)
        top = _enum(fields["top"], Action, f"{where}.top")
        bottom = _enum(fields["bottom"], Action, f"{where}.bottom")
        if top is bottom:
            raise _fail(f"{where}.bottom", f"the same action as the top half ({top})")
        cards.append(ActionCard(number, top, bottom))
    for action in Action:
        halves = sum((card.top is action) + (card.bottom is action) for card in cards)
        expected = 1 if action in SINGLE_ACTIONS else 2
        if halves != expected:
            raise _fail("action_cards", f"expected {action} on {expected} card halves, found {halves}")
    return tuple(cards)


# --- Buildings (004 · Guild buildings, Public buildings) ---------------------------------------------------


def _effect(raw: object, where: str) -> Effect:
    fields = _object(raw, where, ("kind",), ("amount", "color"))
    kind = _enum(fields["kind"], EffectKind, f"{where}.kind")
    amount = _int(fields.get("amount", 0), f"{where}.amount")
    color = _optional_enum(fields.get("color"), Color, f"{where}.color")
    if kind in SYMBOL_EFFECTS and amount != 0:
        raise _fail(f"{where}.amount", f"a {kind} effect takes no amount, got {amount}")
    if kind not in SYMBOL_EFFECTS and amount < 1:
        raise _fail(f"{where}.amount", f"expected a positive integer for a {kind} effect, got {amount}")
    if kind is EffectKind.PATRICIAN and color is None:
        raise _fail(f"{where}.color", "a patrician effect needs a colour")
    if kind is not EffectKind.PATRICIAN and color is not None:
        raise _fail(f"{where}.color", f"only a patrician effect has a colour, not {kind}")
    return Effect(kind, amount, color)


def _dots(raw: object, where: str) -> Dots:
    sides = [_enum(item, Side, f"{where}[{k}]") for k, item in enumerate(_list(raw, where))]
    if len(set(sides)) != len(sides):
        raise _fail(where, f"a side is listed twice in {_show(raw)}")
    return Dots(
        north=Side.NORTH in sides, east=Side.EAST in sides, south=Side.SOUTH in sides, west=Side.WEST in sides
    )


def _building(raw: object, i: int) -> Building:
    where = f"buildings[{i}]"
    fields = _object(
        raw,
        where,
        ("id", "name", "dots", "wood_cost", "plot_cost", "production", "effects"),
        ("guild", "color", "bottom"),
    )
    effects_where = f"{where}.effects"
    return Building(
        id=_check_ids(_int(fields["id"], f"{where}.id"), f"{where}.id", i),
        name=_str(fields["name"], f"{where}.name"),
        guild=_optional_enum(fields.get("guild"), Guild, f"{where}.guild"),
        color=_optional_enum(fields.get("color"), Color, f"{where}.color"),
        dots=_dots(fields["dots"], f"{where}.dots"),
        wood_cost=_int(fields["wood_cost"], f"{where}.wood_cost"),
        plot_cost=_int(fields["plot_cost"], f"{where}.plot_cost", 1),
        production=_int(fields["production"], f"{where}.production"),
        effects=tuple(
            _effect(item, f"{effects_where}[{k}]")
            for k, item in enumerate(_list(fields["effects"], effects_where))
        ),
        bottom=_bool(fields.get("bottom", False), f"{where}.bottom"),
    )


def _buildings(raw: object) -> tuple[Building, ...]:
    guild_count = GUILD_BUILDINGS_PER_GUILD * len(Guild)
    public_count = PUBLIC_BUILDINGS_PER_COLOR * len(Color)
    items = _counted(raw, "buildings", guild_count + public_count, "buildings")
    buildings = tuple(_building(item, i) for i, item in enumerate(items))
    names: dict[str, int] = {}
    for b in buildings:
        where = f"buildings[{b.id}]"
        if b.name in names:
            raise _fail(f"{where}.name", f"{b.name!r} is also the name of buildings[{names[b.name]}]")
        names[b.name] = b.id
        if b.id < guild_count:
            _check_guild_building(b, where)
        else:
            _check_public_building(b, where)
    for guild in Guild:
        stack = [b for b in buildings if b.guild is guild]
        if len(stack) != GUILD_BUILDINGS_PER_GUILD:
            raise _fail(
                "buildings.guild",
                f"expected {GUILD_BUILDINGS_PER_GUILD} buildings of each guild, {guild} has {len(stack)}",
            )
        bottoms = sum(b.bottom for b in stack)
        if bottoms != 1:
            raise _fail("buildings.bottom", f"expected exactly 1 bottom tile for {guild}, got {bottoms}")
    for color in Color:
        count = sum(b.color is color for b in buildings)
        if count != PUBLIC_BUILDINGS_PER_COLOR:
            raise _fail(
                "buildings.color",
                f"expected {PUBLIC_BUILDINGS_PER_COLOR} public buildings of each colour, {color} has {count}",
            )
    return buildings


def _effect_kinds(b: Building, where: str) -> dict[EffectKind, Effect]:
    kinds: dict[EffectKind, Effect] = {}
    for effect in b.effects:
        if effect.kind in kinds:
            raise _fail(f"{where}.effects", f"{effect.kind} appears twice")
        kinds[effect.kind] = effect
    return kinds


def _check_guild_building(b: Building, where: str) -> None:
    if b.guild is None:
        raise _fail(
            f"{where}.guild", "expected a guild: the first 24 buildings are guild buildings, got null"
        )
    if b.color is not None:
        raise _fail(f"{where}.color", f"a guild building has no patrician colour, got {b.color}")
    if b.production < 1:
        raise _fail(
            f"{where}.production", f"expected a positive integer for a guild building, got {b.production}"
        )
    kinds = _effect_kinds(b, where)
    if EffectKind.PATRICIAN in kinds:
        raise _fail(f"{where}.effects", "a guild building carries no patrician")
    if b.guild is Guild.MINERS:
        if EffectKind.ARM in kinds:
            raise _fail(f"{where}.effects", "a miners building never moves an arm")
        if EffectKind.ORE_DECK in kinds:
            raise _fail(
                f"{where}.effects",
                "a miners building advances the ore deck by its production; it carries no ore_deck effect",
            )
        if EffectKind.MINING_TECHNOLOGY not in kinds:
            raise _fail(
                f"{where}.effects",
                "every miners building carries mining_technology (001 · Guild Buildings), found none",
            )
    else:
        if EffectKind.ARM not in kinds:
            raise _fail(
                f"{where}.effects", f"a {b.guild} building must carry exactly one arm effect, found none"
            )
        if EffectKind.MINING_TECHNOLOGY in kinds:
            raise _fail(f"{where}.effects", "only miners buildings carry mining_technology")


def _check_public_building(b: Building, where: str) -> None:
    if b.color is None:
        raise _fail(
            f"{where}.color", "expected a colour: the last 12 buildings are public buildings, got null"
        )
    if b.guild is not None:
        raise _fail(f"{where}.guild", f"a public building belongs to no guild, got {b.guild}")
    if b.production != 0:
        raise _fail(f"{where}.production", f"a public building produces nothing, got {b.production}")
    if b.bottom:
        raise _fail(f"{where}.bottom", "only guild buildings have a marked stack-bottom tile")
    kinds = _effect_kinds(b, where)
    patrician = kinds.get(EffectKind.PATRICIAN)
    if patrician is None:
        raise _fail(
            f"{where}.effects", "a public building must carry exactly one patrician effect, found none"
        )
    if patrician.color is not b.color:
        raise _fail(
            f"{where}.effects",
            f"the patrician effect must have the building's colour {b.color}, got {patrician.color}",
        )
    forbidden = sorted(NOT_ON_PUBLIC & kinds.keys())
    if forbidden:
        raise _fail(f"{where}.effects", f"a public building cannot carry {', '.join(forbidden)}")
    if not {EffectKind.REPUTATION, EffectKind.PELICANS, EffectKind.POINTS} & kinds.keys():
        raise _fail(
            f"{where}.effects", "a public building needs an immediate reputation, pelicans or points effect"
        )


def _check_mining_technology(components: ComponentSet) -> None:
    carriers = [
        b for b in components.buildings if any(e.kind is EffectKind.MINING_TECHNOLOGY for e in b.effects)
    ]
    tiles = len(components.technology_tiles)
    if len(carriers) != tiles:
        raise _fail(
            "buildings.effects",
            f"expected {tiles} miners buildings with mining_technology (one per technology tile), "
            f"found {len(carriers)}",
        )


# --- Mines (003 · The Mine action) -------------------------------------------------------------------------


def _mine_tile(raw: object, where: str, expected_id: int, technology: bool) -> MineTile:
    fields = _object(
        raw, where, ("id", "tier", "stars", "ore", "population", "points", "wood_cost"), ("draws",)
    )
    if technology:
        tier = _exact_int(fields["tier"], f"{where}.tier", 0)
        draws = _int(fields.get("draws", 0), f"{where}.draws", 2)
    else:
        tier = _int(fields["tier"], f"{where}.tier", min(MINE_TIERS), max(MINE_TIERS))
        draws = _int(fields.get("draws", 0), f"{where}.draws")
        if draws:
            raise _fail(f"{where}.draws", f"only mining-technology tiles set draws, got {draws}")
    return MineTile(
        id=_check_ids(_int(fields["id"], f"{where}.id"), f"{where}.id", expected_id),
        tier=tier,
        stars=_int(fields["stars"], f"{where}.stars"),
        ore=_int(fields["ore"], f"{where}.ore"),
        population=_int(fields["population"], f"{where}.population"),
        points=_int(fields["points"], f"{where}.points"),
        wood_cost=_int(fields["wood_cost"], f"{where}.wood_cost"),
        draws=draws,
    )


def _mine_tiles(raw: object) -> tuple[MineTile, ...]:
    items = _counted(raw, "mine_tiles", MINE_TILE_COUNT, "tiles")
    tiles = tuple(_mine_tile(item, f"mine_tiles[{i}]", i, False) for i, item in enumerate(items))
    for tier in MINE_TIERS:
        if not any(tile.tier == tier for tile in tiles):
            raise _fail("mine_tiles.tier", f"expected tiles in tiers 1, 2 and 3, tier {tier} has none")
    return tiles


def _technology_tiles(raw: object, first_id: int) -> tuple[MineTile, ...]:
    items = _counted(raw, "technology_tiles", TECHNOLOGY_TILE_COUNT, "tiles")
    tiles: list[MineTile] = []
    draws = 1  # the starting mining-technology level
    for i, item in enumerate(items):
        where = f"technology_tiles[{i}]"
        tile = _mine_tile(item, where, first_id + i, True)
        if tile.draws <= draws:
            raise _fail(
                f"{where}.draws",
                f"each tile must raise the tiles drawn, expected more than {draws}, got {tile.draws}",
            )
        draws = tile.draws
        tiles.append(tile)
    return tuple(tiles)


def _rock_tiles(raw: object) -> tuple[RockTile, ...]:
    items = _counted(raw, "rock_tiles", ROCK_TILE_COUNT, "tiles")
    tiles: list[RockTile] = []
    for i, item in enumerate(items):
        where = f"rock_tiles[{i}]"
        fields = _object(item, where, ("id", "stars"))
        tiles.append(
            RockTile(
                id=_check_ids(_int(fields["id"], f"{where}.id"), f"{where}.id", i),
                stars=_int(fields["stars"], f"{where}.stars"),
            )
        )
    return tuple(tiles)


def _in_area(square: Square, rows: int, columns: int) -> bool:
    return 0 <= square[0] < rows and 0 <= square[1] < columns


def _mine_area(raw: object) -> MineArea:
    where = "mine_area"
    fields = _object(raw, where, ("rows", "columns", "row_stars", "entrances", "entrance_cost"))
    rows = _int(fields["rows"], f"{where}.rows", 1)
    columns = _int(fields["columns"], f"{where}.columns", 1)
    stars_where = f"{where}.row_stars"
    row_stars = _counted(fields["row_stars"], stars_where, rows, "values (one per row)")
    entrances_where = f"{where}.entrances"
    entrance_items = _counted(fields["entrances"], entrances_where, MINE_ENTRANCE_COUNT, "entrances")
    entrances: list[Square] = []
    for k, item in enumerate(entrance_items):
        square = _square(item, f"{entrances_where}[{k}]")
        if not _in_area(square, rows, columns):
            raise _fail(
                f"{entrances_where}[{k}]",
                f"{_squares_text(square)} is outside the {rows}x{columns} mine area",
            )
        if square[0] != 0:
            raise _fail(
                f"{entrances_where}[{k}]", f"an entrance must be in row 0, got {_squares_text(square)}"
            )
        if square in entrances:
            raise _fail(f"{entrances_where}[{k}]", f"{_squares_text(square)} is listed twice")
        entrances.append(square)
    return MineArea(
        rows=rows,
        columns=columns,
        row_stars=tuple(_int(item, f"{stars_where}[{k}]") for k, item in enumerate(row_stars)),
        entrances=tuple(entrances),
        entrance_cost=_exact_int(fields["entrance_cost"], f"{where}.entrance_cost", MINE_ENTRANCE_COST),
    )


def _mine_setup_cards(raw: object, area: MineArea, rocks: int) -> tuple[MineSetupCard, ...]:
    items = _counted(raw, "mine_setup_cards", MINE_SETUP_CARD_COUNT, "cards")
    cards: list[MineSetupCard] = []
    seen: dict[frozenset[Square], int] = {}
    for i, item in enumerate(items):
        where = f"mine_setup_cards[{i}]"
        fields = _object(item, where, ("id", "squares"))
        card_id = _check_ids(_int(fields["id"], f"{where}.id"), f"{where}.id", i)
        squares_where = f"{where}.squares"
        square_items = _counted(fields["squares"], squares_where, rocks, "squares (one per rock tile)")
        squares: list[Square] = []
        for k, square_item in enumerate(square_items):
            square_where = f"{squares_where}[{k}]"
            square = _square(square_item, square_where)
            text = _squares_text(square)
            if not _in_area(square, area.rows, area.columns):
                raise _fail(square_where, f"{text} is outside the {area.rows}x{area.columns} mine area")
            if square in area.entrances:
                raise _fail(square_where, f"{text} is a mine entrance")
            if square[0] == 0:
                raise _fail(square_where, f"{text} is in row 0, the entrance row")
            if square in squares:
                raise _fail(square_where, f"{text} is listed twice")
            squares.append(square)
        key = frozenset(squares)
        if key in seen:
            raise _fail(squares_where, f"the same squares as mine_setup_cards[{seen[key]}]")
        seen[key] = i
        cards.append(MineSetupCard(card_id, tuple(squares)))
    return tuple(cards)


# --- Guild setup cards (000 · Guild Setup) -----------------------------------------------------------------


def _guild_set(raw: object, where: str) -> tuple[Guild, Guild, Guild]:
    items = _counted(raw, where, 3, "guilds")
    a, b, c = (_enum(item, Guild, f"{where}[{k}]") for k, item in enumerate(items))
    if len({a, b, c}) != 3:
        raise _fail(where, f"expected 3 different guilds, got {_show(raw)}")
    return (a, b, c)


def _check_guild_row(players: int, sets: list[tuple[Guild, Guild, Guild]], where: str) -> None:
    every = set(Guild)
    as_sets = [set(s) for s in sets]
    if players == 2:
        if as_sets[0] & as_sets[1] or as_sets[0] | as_sets[1] != every:
            raise _fail(where, "the two players' sets must split the six guilds between them")
    elif players == 3:
        pairs_ok = all(len(as_sets[x] & as_sets[y]) == 1 for x in range(3) for y in range(x + 1, 3))
        if not pairs_ok or set().union(*as_sets) != every:
            raise _fail(
                where, "each player must have one guild of their own and share one with each opponent"
            )
    else:
        for guild in Guild:
            count = sum(guild in s for s in as_sets)
            if count > GUILD_TILES_PER_GUILD:
                raise _fail(
                    where, f"{guild} appears {count} times, but only {GUILD_TILES_PER_GUILD} tiles exist"
                )


def _guild_setup_cards(raw: object) -> tuple[GuildSetupCard, ...]:
    items = _counted(raw, "guild_setup_cards", GUILD_SETUP_CARD_COUNT, "cards")
    cards: list[GuildSetupCard] = []
    for i, item in enumerate(items):
        where = f"guild_setup_cards[{i}]"
        fields = _object(item, where, ("id", "rows"))
        card_id = _exact_int(fields["id"], f"{where}.id", i + 1)
        raw_rows = _int_keys(fields["rows"], f"{where}.rows", GUILD_SETUP_PLAYER_COUNTS, "player counts")
        rows: dict[int, tuple[tuple[Guild, Guild, Guild], ...]] = {}
        for players, raw_row in raw_rows.items():
            row_where = f"{where}.rows[{players}]"
            sets = [
                _guild_set(s, f"{row_where}[{k}]")
                for k, s in enumerate(_counted(raw_row, row_where, players, "guild sets (one per player)"))
            ]
            _check_guild_row(players, sets, row_where)
            rows[players] = tuple(sets)
        cards.append(GuildSetupCard(card_id, rows))
    return tuple(cards)


# --- Price decks (002 · Prices, Advancing the decks, Economic adjustments) --------------------------------


def _commodity_list(raw: object, where: str, deck: Deck) -> tuple[Commodity, ...]:
    out: list[Commodity] = []
    for k, item in enumerate(_list(raw, where)):
        commodity = _enum(item, Commodity, f"{where}[{k}]")
        if commodity not in DECK_COMMODITIES[deck]:
            raise _fail(f"{where}[{k}]", f"{commodity} is not priced on the {deck} deck")
        if commodity in out:
            raise _fail(f"{where}[{k}]", f"{commodity} is listed twice")
        out.append(commodity)
    return tuple(out)


def _price_card(raw: object, where: str, number: int, deck: Deck, notches: int) -> PriceCard:
    fields = _object(raw, where, ("number", "prices"), ("town_builds", "red_x"))
    _exact_int(fields["number"], f"{where}.number", number)
    commodities = DECK_COMMODITIES[deck]
    price_fields = _object(fields["prices"], f"{where}.prices", [c.value for c in commodities])
    prices: dict[Commodity, tuple[int, ...]] = {}
    for commodity in commodities:
        price_where = f"{where}.prices.{commodity}"
        items = _counted(price_fields[commodity.value], price_where, notches, "prices (one per arm notch)")
        row = tuple(_int(item, f"{price_where}[{k}]", 1) for k, item in enumerate(items))
        if commodity in RISING_WITH_NOTCH:
            if any(b < a for a, b in itertools.pairwise(row)):
                raise _fail(
                    price_where, f"prices must not fall as the shared arm moves right, got {list(row)}"
                )
        elif any(b > a for a, b in itertools.pairwise(row)):
            raise _fail(price_where, f"prices must not rise as the arm moves right, got {list(row)}")
        prices[commodity] = row
    town_builds = _commodity_list(fields.get("town_builds", []), f"{where}.town_builds", deck)
    for commodity in town_builds:
        if commodity in NO_TOWN_BUILDS:
            raise _fail(f"{where}.town_builds", f"the town never builds for {commodity}")
    red_x = _commodity_list(fields.get("red_x", []), f"{where}.red_x", deck)
    for commodity in red_x:
        if commodity in town_builds:
            raise _fail(f"{where}.red_x", f"{commodity} also has the town-builds symbol on this card")
    return PriceCard(number, prices, town_builds, red_x)


def _price_deck(raw: object, where: str, deck: Deck, turn_over_after: int, notches: int) -> PriceDeck:
    fields = _object(raw, where, ("deck", "turn_over_after", "cards"))
    found = _enum(fields["deck"], Deck, f"{where}.deck")
    if found is not deck:
        raise _fail(f"{where}.deck", f"expected {deck}, got {found}")
    turn = _exact_int(fields["turn_over_after"], f"{where}.turn_over_after", turn_over_after)
    count = 2 * (turn + 1)  # every numbered card has two numbered faces; the turn-over card has none
    items = _counted(fields["cards"], f"{where}.cards", count, "cards", where)
    cards = tuple(_price_card(item, f"{where}.cards[{i}]", i, deck, notches) for i, item in enumerate(items))
    first, last = cards[0], cards[-1]
    for commodity in DECK_COMMODITIES[deck]:
        for notch, (start, end) in enumerate(
            zip(first.prices[commodity], last.prices[commodity], strict=True)
        ):
            falling = commodity in FALLING_WITH_DECK
            if (end > start) if falling else (end < start):
                trend = "fall" if falling else "rise"
                raise _fail(
                    f"{where}.cards[{last.number}].prices.{commodity}[{notch}]",
                    f"{commodity} must {trend} over the deck, but goes from {start} on card 0 to {end}",
                )
    return PriceDeck(deck, cards, turn)


# --- Rounds, events, St. Barbara, reputation ---------------------------------------------------------------


def _rounds_tracks(raw: object) -> dict[int, RoundsTrack]:
    tracks: dict[int, RoundsTrack] = {}
    for players, item in _int_keys(raw, "rounds_tracks", ROUNDS, "player counts").items():
        where = f"rounds_tracks[{players}]"
        fields = _object(item, where, ("rounds", "reputation_penalty", "red_arrival_round"))
        rounds = _exact_int(fields["rounds"], f"{where}.rounds", ROUNDS[players])
        penalty_where = f"{where}.reputation_penalty"
        items = _counted(fields["reputation_penalty"], penalty_where, rounds, "values (one per round)")
        penalty = tuple(_int(value, f"{penalty_where}[{k}]") for k, value in enumerate(items))
        if any(b < a for a, b in itertools.pairwise(penalty)):
            raise _fail(penalty_where, f"the penalty must not fall from round to round, got {list(penalty)}")
        red = _exact_int(
            fields["red_arrival_round"], f"{where}.red_arrival_round", RED_ARRIVAL_ROUND[players]
        )
        tracks[players] = RoundsTrack(rounds, penalty, red)
    return tracks


def _event_cards(raw: object, tracks: Mapping[int, RoundsTrack]) -> tuple[EventCard, ...]:
    items = _counted(raw, "event_cards", EVENT_CARD_COUNT, "cards")
    cards: list[EventCard] = []
    for i, item in enumerate(items):
        where = f"event_cards[{i}]"
        fields = _object(item, where, ("id", "deck", "name", "tax", "population", "ore"))
        deck = fields["deck"]
        if deck not in EVENT_DECKS:
            raise _fail(f"{where}.deck", f"expected one of {', '.join(EVENT_DECKS)}, got {_show(deck)}")
        cards.append(
            EventCard(
                id=_check_ids(_int(fields["id"], f"{where}.id"), f"{where}.id", i),
                deck=deck,
                name=_str(fields["name"], f"{where}.name"),
                tax=_int(fields["tax"], f"{where}.tax"),
                population=_int(fields["population"], f"{where}.population"),
                ore=_int(fields["ore"], f"{where}.ore"),
            )
        )
    # rounds before the red-patrician arrival draw from A, later rounds but the last from B (ruling 11)
    for players, track in tracks.items():
        needs = {"A": track.red_arrival_round, "B": track.rounds - track.red_arrival_round - 1}
        for deck, needed in needs.items():
            have = sum(card.deck == deck for card in cards)
            if have < needed:
                raise _fail(
                    "event_cards.deck",
                    f"deck {deck} has {have} cards, a {players}-player game needs {needed}",
                )
    return tuple(cards)


def _barbara_tiles(raw: object) -> tuple[BarbaraTile, ...]:
    effects = list(BarbaraEffect)
    items = _counted(raw, "barbara_tiles", len(effects), "tiles")
    tiles: list[BarbaraTile] = []
    for i, item in enumerate(items):
        where = f"barbara_tiles[{i}]"
        fields = _object(item, where, ("number", "effect", "flip_tax"))
        number = _exact_int(fields["number"], f"{where}.number", i + 1)
        effect = _enum(fields["effect"], BarbaraEffect, f"{where}.effect")
        if effect is not effects[i]:
            raise _fail(
                f"{where}.effect", f"tile {number} is {effects[i]} (004 · The eleven tiles), got {effect}"
            )
        flip_tax = _exact_int(fields["flip_tax"], f"{where}.flip_tax", BARBARA_FLIP_TAXES[i])
        tiles.append(BarbaraTile(number, effect, flip_tax))
    return tuple(tiles)


def _reputation_points(raw: object) -> dict[int, int]:
    items = _int_keys(raw, "reputation_points", REPUTATION_RANGE, "reputation spaces")
    points = {step: _int(value, f"reputation_points[{step}]", None) for step, value in items.items()}
    previous: int | None = None
    for step, value in points.items():
        if previous is not None and value < previous:
            raise _fail(
                f"reputation_points[{step}]",
                f"points must not fall as reputation rises, got {value} after {previous}",
            )
        previous = value
    bottom, top = REPUTATION_RANGE[0], REPUTATION_RANGE[-1]
    if points[bottom] >= 0:
        raise _fail(f"reputation_points[{bottom}]", f"expected negative points, got {points[bottom]}")
    if points[top] <= 0:
        raise _fail(f"reputation_points[{top}]", f"expected positive points, got {points[top]}")
    return points


# --- Player board and town hall ----------------------------------------------------------------------------


def _house_rewards(raw: object) -> tuple[tuple[HouseReward, ...], ...]:
    rows: list[tuple[HouseReward, ...]] = []
    for r, raw_row in enumerate(_counted(raw, "house_rewards", HOUSE_ROWS, "rows")):
        row_where = f"house_rewards[{r}]"
        row: list[HouseReward] = []
        for c, item in enumerate(_counted(raw_row, row_where, HOUSES_PER_ROW, "houses")):
            where = f"{row_where}[{c}]"
            fields = _object(item, where, ("kind",), ("amount",))
            kind = _enum(fields["kind"], HouseRewardKind, f"{where}.kind")
            amount = _int(fields.get("amount", 0), f"{where}.amount")
            if kind is HouseRewardKind.PUBLIC_BUILDING and amount != 0:
                raise _fail(f"{where}.amount", f"a public_building reward takes no amount, got {amount}")
            if kind is not HouseRewardKind.PUBLIC_BUILDING and amount < 1:
                raise _fail(
                    f"{where}.amount", f"expected a positive integer for a {kind} reward, got {amount}"
                )
            row.append(HouseReward(kind, amount))
        rows.append(tuple(row))
    for kind in HouseRewardKind:
        if not any(reward.kind is kind for row in rows for reward in row):
            raise _fail("house_rewards", f"no house shows a {kind} reward")
    return tuple(rows)


def _town_hall_costs(raw: object) -> tuple[tuple[str, int], ...]:
    items = _counted(raw, "town_hall_costs", len(TOWN_HALL_COSTS), "columns")
    costs: list[tuple[str, int]] = []
    for k, item in enumerate(items):
        where = f"town_hall_costs[{k}]"
        pair = _counted(item, where, 2, "values (currency, amount)")
        cost = (_str(pair[0], f"{where}[0]"), _int(pair[1], f"{where}[1]"))
        if cost != TOWN_HALL_COSTS[k]:
            raise _fail(where, f"expected {list(TOWN_HALL_COSTS[k])} (ruling 6), got {list(cost)}")
        costs.append(cost)
    return tuple(costs)


def _town_hall_rows(raw: object) -> tuple[Color, ...]:
    items = _counted(raw, "town_hall_rows", len(TOWN_HALL_ROW_COLORS), "rows")
    colors = tuple(_enum(item, Color, f"town_hall_rows[{k}]") for k, item in enumerate(items))
    if set(colors) != TOWN_HALL_ROW_COLORS:
        raise _fail("town_hall_rows", f"expected green, silver and yellow once each, got {_show(raw)}")
    return colors


def _starting_groschen(raw: object) -> tuple[int, ...]:
    items = _counted(raw, "starting_groschen", len(STARTING_GROSCHEN), "values (one per seat)")
    values = tuple(_int(item, f"starting_groschen[{k}]") for k, item in enumerate(items))
    if values != STARTING_GROSCHEN:
        raise _fail("starting_groschen", f"expected {list(STARTING_GROSCHEN)}, got {list(values)}")
    return values


def _mine_row_scoring(raw: object) -> tuple[MineRowScoring, ...]:
    items = _counted(raw, "mine_row_scoring", len(MINE_ROW_SCORING), "tiers")
    tiers: list[MineRowScoring] = []
    for k, item in enumerate(items):
        where = f"mine_row_scoring[{k}]"
        fields = _object(item, where, ("min_stars", "points"))
        min_stars = _int(fields["min_stars"], f"{where}.min_stars")
        points_items = _counted(fields["points"], f"{where}.points", 3, "values (first, second, third)")
        a, b, c = (_int(p, f"{where}.points[{n}]") for n, p in enumerate(points_items))
        expected_stars, expected_points = MINE_ROW_SCORING[k]
        if (min_stars, (a, b, c)) != MINE_ROW_SCORING[k]:
            raise _fail(
                where,
                f"expected {expected_stars}+ stars scoring {'/'.join(map(str, expected_points))}, "
                f"got {min_stars}+ stars scoring {a}/{b}/{c}",
            )
        tiers.append(MineRowScoring(min_stars, (a, b, c)))
    return tuple(tiers)


# --- City boards (000 · Kutná Hora Board) ------------------------------------------------------------------

_STEP: dict[Side, tuple[int, int]] = {
    Side.NORTH: (-1, 0),
    Side.EAST: (0, 1),
    Side.SOUTH: (1, 0),
    Side.WEST: (0, -1),
}
CITY_BOARD_NAMES = ("large", "small")


def _city_board(raw: object, name: str) -> CityBoard:
    where = f"city_boards.{name}"
    fields = _object(raw, where, ("name", "rows", "columns", "blocked", "edge_dots"))
    found = _str(fields["name"], f"{where}.name")
    if found != name:
        raise _fail(f"{where}.name", f"expected {name!r}, got {found!r}")
    rows = _int(fields["rows"], f"{where}.rows", 1)
    columns = _int(fields["columns"], f"{where}.columns", 1)
    blocked: list[Square] = []
    for k, item in enumerate(_list(fields["blocked"], f"{where}.blocked")):
        square_where = f"{where}.blocked[{k}]"
        square = _square(item, square_where)
        if not _in_area(square, rows, columns):
            raise _fail(square_where, f"{_squares_text(square)} is outside the {rows}x{columns} board")
        if square in blocked:
            raise _fail(square_where, f"{_squares_text(square)} is listed twice")
        blocked.append(square)
    dots: list[EdgeDot] = []
    dots_where = f"{where}.edge_dots"
    for k, item in enumerate(_list(fields["edge_dots"], dots_where)):
        dot_where = f"{dots_where}[{k}]"
        dot_fields = _object(item, dot_where, ("square", "side"))
        square = _square(dot_fields["square"], f"{dot_where}.square")
        side = _enum(dot_fields["side"], Side, f"{dot_where}.side")
        text = _squares_text(square)
        if not _in_area(square, rows, columns) or square in blocked:
            raise _fail(f"{dot_where}.square", f"{text} is not a usable square of the {rows}x{columns} board")
        dr, dc = _STEP[side]
        beyond = (square[0] + dr, square[1] + dc)
        if _in_area(beyond, rows, columns) and beyond not in blocked:
            raise _fail(
                f"{dot_where}.side", f"side {side} of {text} faces another square, not the board's edge"
            )
        dot = EdgeDot(square, side)
        if dot in dots:
            raise _fail(dot_where, f"side {side} of {text} is listed twice")
        dots.append(dot)
    if not dots:
        raise _fail(dots_where, "expected dots on some edge squares, got none")
    return CityBoard(name, rows, columns, frozenset(blocked), frozenset(dots))


def _city_boards(raw: object) -> dict[str, CityBoard]:
    fields = _object(raw, "city_boards", CITY_BOARD_NAMES)
    boards = {name: _city_board(fields[name], name) for name in CITY_BOARD_NAMES}
    large, small = len(boards["large"].squares()), len(boards["small"].squares())
    if small >= large:
        raise _fail("city_boards.small", f"expected fewer squares than the large side ({large}), got {small}")
    return boards
