from kutnahora.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class EffectKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    EFFECT_KIND_UNSPECIFIED: _ClassVar[EffectKind]
    EFFECT_KIND_ARM: _ClassVar[EffectKind]
    EFFECT_KIND_MINING_TECHNOLOGY: _ClassVar[EffectKind]
    EFFECT_KIND_ORE_DECK: _ClassVar[EffectKind]
    EFFECT_KIND_POPULATION_DECK: _ClassVar[EffectKind]
    EFFECT_KIND_POINTS: _ClassVar[EffectKind]
    EFFECT_KIND_REPUTATION: _ClassVar[EffectKind]
    EFFECT_KIND_PELICANS: _ClassVar[EffectKind]
    EFFECT_KIND_TAX: _ClassVar[EffectKind]
    EFFECT_KIND_PATRICIAN: _ClassVar[EffectKind]
    EFFECT_KIND_REMOVE_HOUSE: _ClassVar[EffectKind]
    EFFECT_KIND_FLIP_ST_BARBARA: _ClassVar[EffectKind]

class HouseRewardKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    HOUSE_REWARD_KIND_UNSPECIFIED: _ClassVar[HouseRewardKind]
    HOUSE_REWARD_KIND_PUBLIC_BUILDING: _ClassVar[HouseRewardKind]
    HOUSE_REWARD_KIND_PELICAN: _ClassVar[HouseRewardKind]
    HOUSE_REWARD_KIND_REPUTATION: _ClassVar[HouseRewardKind]
    HOUSE_REWARD_KIND_POINTS: _ClassVar[HouseRewardKind]

class BarbaraEffect(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    BARBARA_EFFECT_UNSPECIFIED: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_REPUTATION: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_FREE_RIGHTS: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_HOUSE_FOR_PRODUCTION: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_FREE_PLOT: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_DOUBLE_INCOME: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_SEAT_FROM_BANK: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_PUBLIC_NEIGHBOURS: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_FREE_BUILDING: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_DOUBLE_MINE: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_SCORE_BUILDING: _ClassVar[BarbaraEffect]
    BARBARA_EFFECT_FINAL: _ClassVar[BarbaraEffect]

class Currency(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CURRENCY_UNSPECIFIED: _ClassVar[Currency]
    CURRENCY_GROSCHEN: _ClassVar[Currency]
    CURRENCY_PERMITS: _ClassVar[Currency]
EFFECT_KIND_UNSPECIFIED: EffectKind
EFFECT_KIND_ARM: EffectKind
EFFECT_KIND_MINING_TECHNOLOGY: EffectKind
EFFECT_KIND_ORE_DECK: EffectKind
EFFECT_KIND_POPULATION_DECK: EffectKind
EFFECT_KIND_POINTS: EffectKind
EFFECT_KIND_REPUTATION: EffectKind
EFFECT_KIND_PELICANS: EffectKind
EFFECT_KIND_TAX: EffectKind
EFFECT_KIND_PATRICIAN: EffectKind
EFFECT_KIND_REMOVE_HOUSE: EffectKind
EFFECT_KIND_FLIP_ST_BARBARA: EffectKind
HOUSE_REWARD_KIND_UNSPECIFIED: HouseRewardKind
HOUSE_REWARD_KIND_PUBLIC_BUILDING: HouseRewardKind
HOUSE_REWARD_KIND_PELICAN: HouseRewardKind
HOUSE_REWARD_KIND_REPUTATION: HouseRewardKind
HOUSE_REWARD_KIND_POINTS: HouseRewardKind
BARBARA_EFFECT_UNSPECIFIED: BarbaraEffect
BARBARA_EFFECT_REPUTATION: BarbaraEffect
BARBARA_EFFECT_FREE_RIGHTS: BarbaraEffect
BARBARA_EFFECT_HOUSE_FOR_PRODUCTION: BarbaraEffect
BARBARA_EFFECT_FREE_PLOT: BarbaraEffect
BARBARA_EFFECT_DOUBLE_INCOME: BarbaraEffect
BARBARA_EFFECT_SEAT_FROM_BANK: BarbaraEffect
BARBARA_EFFECT_PUBLIC_NEIGHBOURS: BarbaraEffect
BARBARA_EFFECT_FREE_BUILDING: BarbaraEffect
BARBARA_EFFECT_DOUBLE_MINE: BarbaraEffect
BARBARA_EFFECT_SCORE_BUILDING: BarbaraEffect
BARBARA_EFFECT_FINAL: BarbaraEffect
CURRENCY_UNSPECIFIED: Currency
CURRENCY_GROSCHEN: Currency
CURRENCY_PERMITS: Currency

class ActionCard(_message.Message):
    __slots__ = ("number", "top", "bottom")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TOP_FIELD_NUMBER: _ClassVar[int]
    BOTTOM_FIELD_NUMBER: _ClassVar[int]
    number: int
    top: _common_pb2.Action
    bottom: _common_pb2.Action
    def __init__(self, number: _Optional[int] = ..., top: _Optional[_Union[_common_pb2.Action, str]] = ..., bottom: _Optional[_Union[_common_pb2.Action, str]] = ...) -> None: ...

class Dots(_message.Message):
    __slots__ = ("north", "east", "south", "west")
    NORTH_FIELD_NUMBER: _ClassVar[int]
    EAST_FIELD_NUMBER: _ClassVar[int]
    SOUTH_FIELD_NUMBER: _ClassVar[int]
    WEST_FIELD_NUMBER: _ClassVar[int]
    north: bool
    east: bool
    south: bool
    west: bool
    def __init__(self, north: _Optional[bool] = ..., east: _Optional[bool] = ..., south: _Optional[bool] = ..., west: _Optional[bool] = ...) -> None: ...

class Effect(_message.Message):
    __slots__ = ("kind", "amount", "color")
    KIND_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    kind: EffectKind
    amount: int
    color: _common_pb2.Color
    def __init__(self, kind: _Optional[_Union[EffectKind, str]] = ..., amount: _Optional[int] = ..., color: _Optional[_Union[_common_pb2.Color, str]] = ...) -> None: ...

class Building(_message.Message):
    __slots__ = ("id", "name", "guild", "color", "dots", "wood_cost", "plot_cost", "production", "effects", "bottom", "commodity")
    ID_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    GUILD_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    DOTS_FIELD_NUMBER: _ClassVar[int]
    WOOD_COST_FIELD_NUMBER: _ClassVar[int]
    PLOT_COST_FIELD_NUMBER: _ClassVar[int]
    PRODUCTION_FIELD_NUMBER: _ClassVar[int]
    EFFECTS_FIELD_NUMBER: _ClassVar[int]
    BOTTOM_FIELD_NUMBER: _ClassVar[int]
    COMMODITY_FIELD_NUMBER: _ClassVar[int]
    id: int
    name: str
    guild: _common_pb2.Guild
    color: _common_pb2.Color
    dots: Dots
    wood_cost: int
    plot_cost: int
    production: int
    effects: _containers.RepeatedCompositeFieldContainer[Effect]
    bottom: bool
    commodity: _common_pb2.Commodity
    def __init__(self, id: _Optional[int] = ..., name: _Optional[str] = ..., guild: _Optional[_Union[_common_pb2.Guild, str]] = ..., color: _Optional[_Union[_common_pb2.Color, str]] = ..., dots: _Optional[_Union[Dots, _Mapping]] = ..., wood_cost: _Optional[int] = ..., plot_cost: _Optional[int] = ..., production: _Optional[int] = ..., effects: _Optional[_Iterable[_Union[Effect, _Mapping]]] = ..., bottom: _Optional[bool] = ..., commodity: _Optional[_Union[_common_pb2.Commodity, str]] = ...) -> None: ...

class MineTile(_message.Message):
    __slots__ = ("id", "tier", "stars", "ore", "population", "points", "wood_cost", "draws")
    ID_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    STARS_FIELD_NUMBER: _ClassVar[int]
    ORE_FIELD_NUMBER: _ClassVar[int]
    POPULATION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    WOOD_COST_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    id: int
    tier: int
    stars: int
    ore: int
    population: int
    points: int
    wood_cost: int
    draws: int
    def __init__(self, id: _Optional[int] = ..., tier: _Optional[int] = ..., stars: _Optional[int] = ..., ore: _Optional[int] = ..., population: _Optional[int] = ..., points: _Optional[int] = ..., wood_cost: _Optional[int] = ..., draws: _Optional[int] = ...) -> None: ...

class RockTile(_message.Message):
    __slots__ = ("id", "stars")
    ID_FIELD_NUMBER: _ClassVar[int]
    STARS_FIELD_NUMBER: _ClassVar[int]
    id: int
    stars: int
    def __init__(self, id: _Optional[int] = ..., stars: _Optional[int] = ...) -> None: ...

class MineSetupCard(_message.Message):
    __slots__ = ("id", "squares")
    ID_FIELD_NUMBER: _ClassVar[int]
    SQUARES_FIELD_NUMBER: _ClassVar[int]
    id: int
    squares: _containers.RepeatedCompositeFieldContainer[_common_pb2.Square]
    def __init__(self, id: _Optional[int] = ..., squares: _Optional[_Iterable[_Union[_common_pb2.Square, _Mapping]]] = ...) -> None: ...

class MineArea(_message.Message):
    __slots__ = ("rows", "columns", "row_stars", "entrances", "entrance_cost")
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    ROW_STARS_FIELD_NUMBER: _ClassVar[int]
    ENTRANCES_FIELD_NUMBER: _ClassVar[int]
    ENTRANCE_COST_FIELD_NUMBER: _ClassVar[int]
    rows: int
    columns: int
    row_stars: _containers.RepeatedScalarFieldContainer[int]
    entrances: _containers.RepeatedCompositeFieldContainer[_common_pb2.Square]
    entrance_cost: int
    def __init__(self, rows: _Optional[int] = ..., columns: _Optional[int] = ..., row_stars: _Optional[_Iterable[int]] = ..., entrances: _Optional[_Iterable[_Union[_common_pb2.Square, _Mapping]]] = ..., entrance_cost: _Optional[int] = ...) -> None: ...

class GuildSet(_message.Message):
    __slots__ = ("guilds",)
    GUILDS_FIELD_NUMBER: _ClassVar[int]
    guilds: _containers.RepeatedScalarFieldContainer[_common_pb2.Guild]
    def __init__(self, guilds: _Optional[_Iterable[_Union[_common_pb2.Guild, str]]] = ...) -> None: ...

class GuildSetupRow(_message.Message):
    __slots__ = ("players", "sets")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    SETS_FIELD_NUMBER: _ClassVar[int]
    players: int
    sets: _containers.RepeatedCompositeFieldContainer[GuildSet]
    def __init__(self, players: _Optional[int] = ..., sets: _Optional[_Iterable[_Union[GuildSet, _Mapping]]] = ...) -> None: ...

class GuildSetupCard(_message.Message):
    __slots__ = ("id", "rows")
    ID_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    id: int
    rows: _containers.RepeatedCompositeFieldContainer[GuildSetupRow]
    def __init__(self, id: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[GuildSetupRow, _Mapping]]] = ...) -> None: ...

class NotchPrices(_message.Message):
    __slots__ = ("commodity", "prices")
    COMMODITY_FIELD_NUMBER: _ClassVar[int]
    PRICES_FIELD_NUMBER: _ClassVar[int]
    commodity: _common_pb2.Commodity
    prices: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, commodity: _Optional[_Union[_common_pb2.Commodity, str]] = ..., prices: _Optional[_Iterable[int]] = ...) -> None: ...

class PriceCard(_message.Message):
    __slots__ = ("number", "prices", "town_builds", "red_x")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    PRICES_FIELD_NUMBER: _ClassVar[int]
    TOWN_BUILDS_FIELD_NUMBER: _ClassVar[int]
    RED_X_FIELD_NUMBER: _ClassVar[int]
    number: int
    prices: _containers.RepeatedCompositeFieldContainer[NotchPrices]
    town_builds: _containers.RepeatedScalarFieldContainer[_common_pb2.Commodity]
    red_x: _containers.RepeatedScalarFieldContainer[_common_pb2.Commodity]
    def __init__(self, number: _Optional[int] = ..., prices: _Optional[_Iterable[_Union[NotchPrices, _Mapping]]] = ..., town_builds: _Optional[_Iterable[_Union[_common_pb2.Commodity, str]]] = ..., red_x: _Optional[_Iterable[_Union[_common_pb2.Commodity, str]]] = ...) -> None: ...

class PriceDeck(_message.Message):
    __slots__ = ("deck", "cards", "turn_over_after")
    DECK_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    TURN_OVER_AFTER_FIELD_NUMBER: _ClassVar[int]
    deck: _common_pb2.Deck
    cards: _containers.RepeatedCompositeFieldContainer[PriceCard]
    turn_over_after: int
    def __init__(self, deck: _Optional[_Union[_common_pb2.Deck, str]] = ..., cards: _Optional[_Iterable[_Union[PriceCard, _Mapping]]] = ..., turn_over_after: _Optional[int] = ...) -> None: ...

class EventCard(_message.Message):
    __slots__ = ("id", "deck", "name", "tax", "population", "ore")
    ID_FIELD_NUMBER: _ClassVar[int]
    DECK_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    TAX_FIELD_NUMBER: _ClassVar[int]
    POPULATION_FIELD_NUMBER: _ClassVar[int]
    ORE_FIELD_NUMBER: _ClassVar[int]
    id: int
    deck: str
    name: str
    tax: int
    population: int
    ore: int
    def __init__(self, id: _Optional[int] = ..., deck: _Optional[str] = ..., name: _Optional[str] = ..., tax: _Optional[int] = ..., population: _Optional[int] = ..., ore: _Optional[int] = ...) -> None: ...

class BarbaraTile(_message.Message):
    __slots__ = ("number", "effect", "flip_tax")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    EFFECT_FIELD_NUMBER: _ClassVar[int]
    FLIP_TAX_FIELD_NUMBER: _ClassVar[int]
    number: int
    effect: BarbaraEffect
    flip_tax: int
    def __init__(self, number: _Optional[int] = ..., effect: _Optional[_Union[BarbaraEffect, str]] = ..., flip_tax: _Optional[int] = ...) -> None: ...

class HouseReward(_message.Message):
    __slots__ = ("kind", "amount")
    KIND_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    kind: HouseRewardKind
    amount: int
    def __init__(self, kind: _Optional[_Union[HouseRewardKind, str]] = ..., amount: _Optional[int] = ...) -> None: ...

class HouseRewardRow(_message.Message):
    __slots__ = ("rewards",)
    REWARDS_FIELD_NUMBER: _ClassVar[int]
    rewards: _containers.RepeatedCompositeFieldContainer[HouseReward]
    def __init__(self, rewards: _Optional[_Iterable[_Union[HouseReward, _Mapping]]] = ...) -> None: ...

class RoundsTrack(_message.Message):
    __slots__ = ("players", "rounds", "reputation_penalty", "red_arrival_round")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    REPUTATION_PENALTY_FIELD_NUMBER: _ClassVar[int]
    RED_ARRIVAL_ROUND_FIELD_NUMBER: _ClassVar[int]
    players: int
    rounds: int
    reputation_penalty: _containers.RepeatedScalarFieldContainer[int]
    red_arrival_round: int
    def __init__(self, players: _Optional[int] = ..., rounds: _Optional[int] = ..., reputation_penalty: _Optional[_Iterable[int]] = ..., red_arrival_round: _Optional[int] = ...) -> None: ...

class ReputationPoints(_message.Message):
    __slots__ = ("reputation", "points")
    REPUTATION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    reputation: int
    points: int
    def __init__(self, reputation: _Optional[int] = ..., points: _Optional[int] = ...) -> None: ...

class EdgeDot(_message.Message):
    __slots__ = ("square", "side")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    SIDE_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    side: _common_pb2.Side
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ..., side: _Optional[_Union[_common_pb2.Side, str]] = ...) -> None: ...

class CityBoard(_message.Message):
    __slots__ = ("name", "rows", "columns", "blocked", "edge_dots")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    COLUMNS_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_FIELD_NUMBER: _ClassVar[int]
    EDGE_DOTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    rows: int
    columns: int
    blocked: _containers.RepeatedCompositeFieldContainer[_common_pb2.Square]
    edge_dots: _containers.RepeatedCompositeFieldContainer[EdgeDot]
    def __init__(self, name: _Optional[str] = ..., rows: _Optional[int] = ..., columns: _Optional[int] = ..., blocked: _Optional[_Iterable[_Union[_common_pb2.Square, _Mapping]]] = ..., edge_dots: _Optional[_Iterable[_Union[EdgeDot, _Mapping]]] = ...) -> None: ...

class TownHallCost(_message.Message):
    __slots__ = ("currency", "amount")
    CURRENCY_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    currency: Currency
    amount: int
    def __init__(self, currency: _Optional[_Union[Currency, str]] = ..., amount: _Optional[int] = ...) -> None: ...

class MineRowScoring(_message.Message):
    __slots__ = ("min_stars", "points")
    MIN_STARS_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    min_stars: int
    points: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, min_stars: _Optional[int] = ..., points: _Optional[_Iterable[int]] = ...) -> None: ...

class ComponentSet(_message.Message):
    __slots__ = ("name", "reconstructed", "action_cards", "buildings", "mine_tiles", "technology_tiles", "rock_tiles", "mine_setup_cards", "mine_area", "guild_setup_cards", "population_deck", "ore_deck", "arm_notches", "event_cards", "barbara_tiles", "rounds_tracks", "reputation_points", "house_rewards", "city_boards", "town_hall_costs", "town_hall_rows", "starting_groschen", "patricians_per_color", "mine_row_scoring", "default_plot_cost", "starting_miners_in_pool", "miners_per_player", "houses_per_row", "plot_markers", "building_slots", "miner_pool_size", "patrician_seat_cost", "tax_limit")
    NAME_FIELD_NUMBER: _ClassVar[int]
    RECONSTRUCTED_FIELD_NUMBER: _ClassVar[int]
    ACTION_CARDS_FIELD_NUMBER: _ClassVar[int]
    BUILDINGS_FIELD_NUMBER: _ClassVar[int]
    MINE_TILES_FIELD_NUMBER: _ClassVar[int]
    TECHNOLOGY_TILES_FIELD_NUMBER: _ClassVar[int]
    ROCK_TILES_FIELD_NUMBER: _ClassVar[int]
    MINE_SETUP_CARDS_FIELD_NUMBER: _ClassVar[int]
    MINE_AREA_FIELD_NUMBER: _ClassVar[int]
    GUILD_SETUP_CARDS_FIELD_NUMBER: _ClassVar[int]
    POPULATION_DECK_FIELD_NUMBER: _ClassVar[int]
    ORE_DECK_FIELD_NUMBER: _ClassVar[int]
    ARM_NOTCHES_FIELD_NUMBER: _ClassVar[int]
    EVENT_CARDS_FIELD_NUMBER: _ClassVar[int]
    BARBARA_TILES_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_TRACKS_FIELD_NUMBER: _ClassVar[int]
    REPUTATION_POINTS_FIELD_NUMBER: _ClassVar[int]
    HOUSE_REWARDS_FIELD_NUMBER: _ClassVar[int]
    CITY_BOARDS_FIELD_NUMBER: _ClassVar[int]
    TOWN_HALL_COSTS_FIELD_NUMBER: _ClassVar[int]
    TOWN_HALL_ROWS_FIELD_NUMBER: _ClassVar[int]
    STARTING_GROSCHEN_FIELD_NUMBER: _ClassVar[int]
    PATRICIANS_PER_COLOR_FIELD_NUMBER: _ClassVar[int]
    MINE_ROW_SCORING_FIELD_NUMBER: _ClassVar[int]
    DEFAULT_PLOT_COST_FIELD_NUMBER: _ClassVar[int]
    STARTING_MINERS_IN_POOL_FIELD_NUMBER: _ClassVar[int]
    MINERS_PER_PLAYER_FIELD_NUMBER: _ClassVar[int]
    HOUSES_PER_ROW_FIELD_NUMBER: _ClassVar[int]
    PLOT_MARKERS_FIELD_NUMBER: _ClassVar[int]
    BUILDING_SLOTS_FIELD_NUMBER: _ClassVar[int]
    MINER_POOL_SIZE_FIELD_NUMBER: _ClassVar[int]
    PATRICIAN_SEAT_COST_FIELD_NUMBER: _ClassVar[int]
    TAX_LIMIT_FIELD_NUMBER: _ClassVar[int]
    name: str
    reconstructed: _containers.RepeatedScalarFieldContainer[str]
    action_cards: _containers.RepeatedCompositeFieldContainer[ActionCard]
    buildings: _containers.RepeatedCompositeFieldContainer[Building]
    mine_tiles: _containers.RepeatedCompositeFieldContainer[MineTile]
    technology_tiles: _containers.RepeatedCompositeFieldContainer[MineTile]
    rock_tiles: _containers.RepeatedCompositeFieldContainer[RockTile]
    mine_setup_cards: _containers.RepeatedCompositeFieldContainer[MineSetupCard]
    mine_area: MineArea
    guild_setup_cards: _containers.RepeatedCompositeFieldContainer[GuildSetupCard]
    population_deck: PriceDeck
    ore_deck: PriceDeck
    arm_notches: int
    event_cards: _containers.RepeatedCompositeFieldContainer[EventCard]
    barbara_tiles: _containers.RepeatedCompositeFieldContainer[BarbaraTile]
    rounds_tracks: _containers.RepeatedCompositeFieldContainer[RoundsTrack]
    reputation_points: _containers.RepeatedCompositeFieldContainer[ReputationPoints]
    house_rewards: _containers.RepeatedCompositeFieldContainer[HouseRewardRow]
    city_boards: _containers.RepeatedCompositeFieldContainer[CityBoard]
    town_hall_costs: _containers.RepeatedCompositeFieldContainer[TownHallCost]
    town_hall_rows: _containers.RepeatedScalarFieldContainer[_common_pb2.Color]
    starting_groschen: _containers.RepeatedScalarFieldContainer[int]
    patricians_per_color: int
    mine_row_scoring: _containers.RepeatedCompositeFieldContainer[MineRowScoring]
    default_plot_cost: int
    starting_miners_in_pool: int
    miners_per_player: int
    houses_per_row: int
    plot_markers: int
    building_slots: int
    miner_pool_size: int
    patrician_seat_cost: int
    tax_limit: int
    def __init__(self, name: _Optional[str] = ..., reconstructed: _Optional[_Iterable[str]] = ..., action_cards: _Optional[_Iterable[_Union[ActionCard, _Mapping]]] = ..., buildings: _Optional[_Iterable[_Union[Building, _Mapping]]] = ..., mine_tiles: _Optional[_Iterable[_Union[MineTile, _Mapping]]] = ..., technology_tiles: _Optional[_Iterable[_Union[MineTile, _Mapping]]] = ..., rock_tiles: _Optional[_Iterable[_Union[RockTile, _Mapping]]] = ..., mine_setup_cards: _Optional[_Iterable[_Union[MineSetupCard, _Mapping]]] = ..., mine_area: _Optional[_Union[MineArea, _Mapping]] = ..., guild_setup_cards: _Optional[_Iterable[_Union[GuildSetupCard, _Mapping]]] = ..., population_deck: _Optional[_Union[PriceDeck, _Mapping]] = ..., ore_deck: _Optional[_Union[PriceDeck, _Mapping]] = ..., arm_notches: _Optional[int] = ..., event_cards: _Optional[_Iterable[_Union[EventCard, _Mapping]]] = ..., barbara_tiles: _Optional[_Iterable[_Union[BarbaraTile, _Mapping]]] = ..., rounds_tracks: _Optional[_Iterable[_Union[RoundsTrack, _Mapping]]] = ..., reputation_points: _Optional[_Iterable[_Union[ReputationPoints, _Mapping]]] = ..., house_rewards: _Optional[_Iterable[_Union[HouseRewardRow, _Mapping]]] = ..., city_boards: _Optional[_Iterable[_Union[CityBoard, _Mapping]]] = ..., town_hall_costs: _Optional[_Iterable[_Union[TownHallCost, _Mapping]]] = ..., town_hall_rows: _Optional[_Iterable[_Union[_common_pb2.Color, str]]] = ..., starting_groschen: _Optional[_Iterable[int]] = ..., patricians_per_color: _Optional[int] = ..., mine_row_scoring: _Optional[_Iterable[_Union[MineRowScoring, _Mapping]]] = ..., default_plot_cost: _Optional[int] = ..., starting_miners_in_pool: _Optional[int] = ..., miners_per_player: _Optional[int] = ..., houses_per_row: _Optional[int] = ..., plot_markers: _Optional[int] = ..., building_slots: _Optional[int] = ..., miner_pool_size: _Optional[int] = ..., patrician_seat_cost: _Optional[int] = ..., tax_limit: _Optional[int] = ...) -> None: ...
