"""The component set of Kutná Hora as plain, immutable data.

Every physical component the rules need (buildings, mine tiles, price decks, boards, cards, tracks) is
described here as a frozen dataclass. The values themselves live in a data file (``data/components.json``
by default) that :mod:`kutnahora.engine.component_file` loads and validates; this module only defines the
shapes and the small lookups the rules use. Nothing here knows how a game is played.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class _Enum(StrEnum):
    """A string enum whose ``repr`` is the Python expression for it (``Guild.MINERS``)."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"


class Guild(_Enum):
    """The six guilds. Each produces one commodity."""

    METALLURGISTS = "metallurgists"
    MINERS = "miners"
    BUILDERS = "builders"
    SCRIBES = "scribes"
    GROCERS = "grocers"
    INNKEEPERS = "innkeepers"


class Commodity(_Enum):
    """The six commodities, priced on the two card stands."""

    SILVER = "silver"
    ORE = "ore"
    WOOD = "wood"
    PERMITS = "permits"
    FOOD = "food"
    BEER = "beer"


class Deck(_Enum):
    """The two price decks (card stands)."""

    POPULATION = "population"
    ORE = "ore"


class Arm(_Enum):
    """The five indicator arms. Silver and ore share one arm on the ore stand."""

    WOOD = "wood"
    FOOD = "food"
    BEER = "beer"
    SILVER_ORE = "silver_ore"
    PERMITS = "permits"


class Color(_Enum):
    """Patrician colours: each public building and patrician token has one."""

    GREEN = "green"
    SILVER = "silver"
    YELLOW = "yellow"
    RED = "red"


class Action(_Enum):
    """The seven actions printed on the action cards."""

    RIGHTS = "rights"
    INCOME = "income"
    PLOT = "plot"
    MINE = "mine"
    BUILDING = "building"
    JOKER = "joker"
    ST_BARBARA = "st_barbara"


class EffectKind(_Enum):
    """Effects printed on building tiles (004 · Building effects)."""

    ARM = "arm"  # move the building's commodity arm one notch right
    MINING_TECHNOLOGY = "mining_technology"  # play the top mining-technology tile as a free mine
    ORE_DECK = "ore_deck"  # advance the ore deck by amount
    POPULATION_DECK = "population_deck"  # advance the population deck by amount
    POINTS = "points"
    REPUTATION = "reputation"
    PELICANS = "pelicans"
    TAX = "tax"
    PATRICIAN = "patrician"  # move a patrician of `color` from the bank to the pool
    REMOVE_HOUSE = "remove_house"  # remove the leftmost house of any row, ignoring its reward
    FLIP_ST_BARBARA = "flip_st_barbara"


class HouseRewardKind(_Enum):
    """What the space under a removed house shows (003 · House effects)."""

    PUBLIC_BUILDING = "public_building"
    PELICAN = "pelican"
    REPUTATION = "reputation"
    POINTS = "points"


class BarbaraEffect(_Enum):
    """The benefit of each St. Barbara tile (004 · The eleven tiles)."""

    REPUTATION = "reputation"  # tile 1
    FREE_RIGHTS = "free_rights"  # tile 2
    HOUSE_FOR_PRODUCTION = "house_for_production"  # tile 3
    FREE_PLOT = "free_plot"  # tile 4
    DOUBLE_INCOME = "double_income"  # tile 5
    SEAT_FROM_BANK = "seat_from_bank"  # tile 6
    PUBLIC_NEIGHBOURS = "public_neighbours"  # tile 7
    FREE_BUILDING = "free_building"  # tile 8
    DOUBLE_MINE = "double_mine"  # tile 9
    SCORE_BUILDING = "score_building"  # tile 10
    FINAL = "final"  # tile 11


class Side(_Enum):
    """The four sides of a square, for dots."""

    NORTH = "n"
    EAST = "e"
    SOUTH = "s"
    WEST = "w"


OPPOSITE_SIDE: dict[Side, Side] = {
    Side.NORTH: Side.SOUTH,
    Side.SOUTH: Side.NORTH,
    Side.EAST: Side.WEST,
    Side.WEST: Side.EAST,
}

GUILD_COMMODITY: dict[Guild, Commodity] = {
    Guild.METALLURGISTS: Commodity.SILVER,
    Guild.MINERS: Commodity.ORE,
    Guild.BUILDERS: Commodity.WOOD,
    Guild.SCRIBES: Commodity.PERMITS,
    Guild.GROCERS: Commodity.FOOD,
    Guild.INNKEEPERS: Commodity.BEER,
}

COMMODITY_GUILD: dict[Commodity, Guild] = {c: g for g, c in GUILD_COMMODITY.items()}

COMMODITY_ARM: dict[Commodity, Arm] = {
    Commodity.WOOD: Arm.WOOD,
    Commodity.FOOD: Arm.FOOD,
    Commodity.BEER: Arm.BEER,
    Commodity.SILVER: Arm.SILVER_ORE,
    Commodity.ORE: Arm.SILVER_ORE,
    Commodity.PERMITS: Arm.PERMITS,
}

COMMODITY_DECK: dict[Commodity, Deck] = {
    Commodity.WOOD: Deck.POPULATION,
    Commodity.FOOD: Deck.POPULATION,
    Commodity.BEER: Deck.POPULATION,
    Commodity.SILVER: Deck.ORE,
    Commodity.ORE: Deck.ORE,
    Commodity.PERMITS: Deck.ORE,
}

COMMODITIES: tuple[Commodity, ...] = tuple(Commodity)
"""Every commodity in a fixed order (iterating an enum class is slow on hot paths)."""

Square = tuple[int, int]
"""A (row, column) position on a grid, row 0 at the top."""


@dataclass(frozen=True, slots=True)
class Effect:
    """One printed effect of a building tile."""

    kind: EffectKind
    amount: int = 0
    color: Color | None = None


@dataclass(frozen=True, slots=True)
class Dots:
    """Which sides of a tile show a scoring dot."""

    north: bool = False
    east: bool = False
    south: bool = False
    west: bool = False

    def on(self, side: Side) -> bool:
        """Whether the tile shows a dot on ``side``."""
        return {
            Side.NORTH: self.north,
            Side.EAST: self.east,
            Side.SOUTH: self.south,
            Side.WEST: self.west,
        }[side]

    def count(self) -> int:
        """How many dots the tile shows."""
        return int(self.north) + int(self.east) + int(self.south) + int(self.west)


@dataclass(frozen=True, slots=True)
class Building:
    """A guild building (``guild`` set) or a public building (``color`` set)."""

    id: int
    name: str
    guild: Guild | None
    color: Color | None
    dots: Dots
    wood_cost: int
    plot_cost: int
    production: int
    effects: tuple[Effect, ...]
    bottom: bool = False  # a guild stack's marked bottom tile

    @property
    def is_public(self) -> bool:
        """Public buildings carry a patrician; nobody owns them."""
        return self.color is not None

    @property
    def commodity(self) -> Commodity | None:
        """The commodity a guild building produces."""
        return GUILD_COMMODITY[self.guild] if self.guild is not None else None


@dataclass(frozen=True, slots=True)
class MineTile:
    """A mine tile, or a mining-technology tile played as a free mine (``draws`` set)."""

    id: int
    tier: int  # 1, 2, 3; 0 for mining-technology tiles
    stars: int
    ore: int
    population: int
    points: int
    wood_cost: int  # cost of squares beside and below this tile
    draws: int = 0  # mining-technology tiles: tiles drawn per Mine action once taken


@dataclass(frozen=True, slots=True)
class RockTile:
    """A rock tile: blocks a mine square and adds its stars to the row."""

    id: int
    stars: int


@dataclass(frozen=True, slots=True)
class MineSetupCard:
    """Where the four rock tiles go."""

    id: int
    squares: tuple[Square, ...]


@dataclass(frozen=True, slots=True)
class MineArea:
    """The prospecting board's mine grid."""

    rows: int
    columns: int
    row_stars: tuple[int, ...]  # stars printed at each row
    entrances: tuple[Square, ...]
    entrance_cost: int


@dataclass(frozen=True, slots=True)
class EdgeDot:
    """A dot printed on the city board beside an edge square."""

    square: Square
    side: Side


@dataclass(frozen=True, slots=True)
class CityBoard:
    """One side of the Kutná Hora board: a grid of squares, some unusable, with edge dots."""

    name: str
    rows: int
    columns: int
    blocked: frozenset[Square]
    edge_dots: frozenset[EdgeDot]

    def squares(self) -> tuple[Square, ...]:
        """Every usable square in row-major order."""
        return tuple(
            (r, c) for r in range(self.rows) for c in range(self.columns) if (r, c) not in self.blocked
        )

    def edge_dot(self, square: Square, side: Side) -> bool:
        """Whether a dot is printed on the board against this side of the square."""
        return EdgeDot(square, side) in self.edge_dots


@dataclass(frozen=True, slots=True)
class PriceCard:
    """One face of a price card: the price at every arm notch, and its symbols."""

    number: int
    prices: dict[Commodity, tuple[int, ...]]  # commodity -> price per notch
    town_builds: tuple[Commodity, ...] = ()
    red_x: tuple[Commodity, ...] = ()


@dataclass(frozen=True, slots=True)
class PriceDeck:
    """A card stand's deck, front faces then back faces in play order."""

    deck: Deck
    cards: tuple[PriceCard, ...]
    turn_over_after: int  # the last front-face number; the deck turns over after it

    @property
    def last(self) -> int:
        """The highest position the deck can reach."""
        return len(self.cards) - 1


@dataclass(frozen=True, slots=True)
class EventCard:
    """An event card (decks A and B)."""

    id: int
    deck: str  # "A" or "B"
    name: str
    tax: int
    population: int
    ore: int


@dataclass(frozen=True, slots=True)
class BarbaraTile:
    """A St. Barbara tile: its benefit and the tax added when a guild building flips it."""

    number: int
    effect: BarbaraEffect
    flip_tax: int


@dataclass(frozen=True, slots=True)
class HouseReward:
    """The reward under one house space of the player board."""

    kind: HouseRewardKind
    amount: int = 0


@dataclass(frozen=True, slots=True)
class RoundsTrack:
    """One side of the rounds track."""

    rounds: int
    reputation_penalty: tuple[int, ...]  # per round, for not paying tax
    red_arrival_round: int  # red-patrician buildings arrive at the end of this round


@dataclass(frozen=True, slots=True)
class GuildSetupCard:
    """A guild setup card: for each player count, the sets of three guilds to choose from."""

    id: int
    rows: dict[int, tuple[tuple[Guild, Guild, Guild], ...]]


@dataclass(frozen=True, slots=True)
class ActionCard:
    """One of the six action cards every player holds."""

    number: int
    top: Action
    bottom: Action


@dataclass(frozen=True, slots=True)
class MineRowScoring:
    """Points for first, second and third place in a mine row worth at least ``min_stars``."""

    min_stars: int
    points: tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class ComponentSet:
    """Every component, validated. Built by :func:`kutnahora.engine.component_file.load_components`."""

    name: str
    reconstructed: tuple[str, ...]
    action_cards: tuple[ActionCard, ...]
    buildings: tuple[Building, ...]
    mine_tiles: tuple[MineTile, ...]
    technology_tiles: tuple[MineTile, ...]
    rock_tiles: tuple[RockTile, ...]
    mine_setup_cards: tuple[MineSetupCard, ...]
    mine_area: MineArea
    guild_setup_cards: tuple[GuildSetupCard, ...]
    population_deck: PriceDeck
    ore_deck: PriceDeck
    arm_notches: int
    event_cards: tuple[EventCard, ...]
    barbara_tiles: tuple[BarbaraTile, ...]
    rounds_tracks: dict[int, RoundsTrack]  # by player count
    reputation_points: dict[int, int]  # reputation -> end-game points, -5..9
    house_rewards: tuple[tuple[HouseReward, ...], ...]  # 3 rows x 4 columns
    city_boards: dict[str, CityBoard]  # "large" (3-4 players) and "small" (2 players)
    town_hall_costs: tuple[tuple[str, int], ...]  # per column: ("groschen"|"permits", amount)
    town_hall_rows: tuple[Color, ...]  # public colour of each town-hall row
    starting_groschen: tuple[int, ...]
    patricians_per_color: int
    mine_row_scoring: tuple[MineRowScoring, ...]
    default_plot_cost: int
    starting_miners_in_pool: int
    miners_per_player: int
    houses_per_row: int
    plot_markers: int
    building_slots: int
    miner_pool_size: int
    patrician_seat_cost: int
    tax_limit: int

    def building(self, building_id: int) -> Building:
        """The building with this id."""
        return self.buildings[building_id]

    def mine_tile(self, tile_id: int) -> MineTile:
        """A mine or mining-technology tile by id (technology tiles follow the mine tiles)."""
        n = len(self.mine_tiles)
        return self.mine_tiles[tile_id] if tile_id < n else self.technology_tiles[tile_id - n]

    def deck(self, deck: Deck) -> PriceDeck:
        """A price deck by name."""
        return self.population_deck if deck is Deck.POPULATION else self.ore_deck

    def board_for(self, players: int) -> CityBoard:
        """The city board side used with this many players."""
        return self.city_boards["small" if players == 2 else "large"]
