import datetime

from google.protobuf import duration_pb2 as _duration_pb2
from google.protobuf import timestamp_pb2 as _timestamp_pb2
from kutnahora.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Phase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PHASE_UNSPECIFIED: _ClassVar[Phase]
    PHASE_GUILD_SETS: _ClassVar[Phase]
    PHASE_GUILD_ROWS: _ClassVar[Phase]
    PHASE_TURNS: _ClassVar[Phase]
    PHASE_ROUND_END: _ClassVar[Phase]
    PHASE_OVER: _ClassVar[Phase]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_GUILD_SET: _ClassVar[DecisionKind]
    DECISION_KIND_GUILD_ROWS: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY_CARD: _ClassVar[DecisionKind]
    DECISION_KIND_JOKER_ACTION: _ClassVar[DecisionKind]
    DECISION_KIND_REFILL_MINERS: _ClassVar[DecisionKind]
    DECISION_KIND_MINE_TILE: _ClassVar[DecisionKind]
    DECISION_KIND_MINE_SQUARE: _ClassVar[DecisionKind]
    DECISION_KIND_TECH_SQUARE: _ClassVar[DecisionKind]
    DECISION_KIND_RIGHTS_TILE: _ClassVar[DecisionKind]
    DECISION_KIND_PLOT_SQUARE: _ClassVar[DecisionKind]
    DECISION_KIND_BUILD_TILE: _ClassVar[DecisionKind]
    DECISION_KIND_BUILD_SQUARE: _ClassVar[DecisionKind]
    DECISION_KIND_REMOVE_HOUSE: _ClassVar[DecisionKind]
    DECISION_KIND_PUBLIC_REWARD: _ClassVar[DecisionKind]
    DECISION_KIND_SEAT_PATRICIAN: _ClassVar[DecisionKind]
    DECISION_KIND_TAX: _ClassVar[DecisionKind]
    DECISION_KIND_BARBARA_HOUSE: _ClassVar[DecisionKind]
    DECISION_KIND_BARBARA_PATRICIAN: _ClassVar[DecisionKind]
    DECISION_KIND_SCORE_BUILDING: _ClassVar[DecisionKind]

class GameStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GAME_STATUS_UNSPECIFIED: _ClassVar[GameStatus]
    GAME_STATUS_WAITING: _ClassVar[GameStatus]
    GAME_STATUS_ACTIVE: _ClassVar[GameStatus]
    GAME_STATUS_FINISHED: _ClassVar[GameStatus]
    GAME_STATUS_ABANDONED: _ClassVar[GameStatus]

class DecisionSource(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_SOURCE_UNSPECIFIED: _ClassVar[DecisionSource]
    DECISION_SOURCE_SEAT: _ClassVar[DecisionSource]
    DECISION_SOURCE_TIMEOUT: _ClassVar[DecisionSource]
    DECISION_SOURCE_POLICY: _ClassVar[DecisionSource]

class RejectReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    REJECT_REASON_UNSPECIFIED: _ClassVar[RejectReason]
    REJECT_REASON_STALE_VERSION: _ClassVar[RejectReason]
    REJECT_REASON_NOT_YOUR_TURN: _ClassVar[RejectReason]
    REJECT_REASON_NOT_AN_OPTION: _ClassVar[RejectReason]
    REJECT_REASON_GAME_NOT_ACTIVE: _ClassVar[RejectReason]
    REJECT_REASON_MALFORMED: _ClassVar[RejectReason]
    REJECT_REASON_RATE_LIMITED: _ClassVar[RejectReason]
    REJECT_REASON_NOT_FOUND: _ClassVar[RejectReason]
    REJECT_REASON_UNAUTHENTICATED: _ClassVar[RejectReason]
    REJECT_REASON_PERMISSION_DENIED: _ClassVar[RejectReason]
    REJECT_REASON_SEAT_TAKEN: _ClassVar[RejectReason]
    REJECT_REASON_GAME_FULL: _ClassVar[RejectReason]
    REJECT_REASON_GAME_NOT_ENDED: _ClassVar[RejectReason]
    REJECT_REASON_LIMIT_REACHED: _ClassVar[RejectReason]
    REJECT_REASON_STORE_UNAVAILABLE: _ClassVar[RejectReason]
    REJECT_REASON_SERVER_FAULT: _ClassVar[RejectReason]
    REJECT_REASON_COMPONENTS_MISMATCH: _ClassVar[RejectReason]
    REJECT_REASON_UNKNOWN_POOL: _ClassVar[RejectReason]
    REJECT_REASON_TICKET_EXISTS: _ClassVar[RejectReason]
    REJECT_REASON_NAME_TAKEN: _ClassVar[RejectReason]
    REJECT_REASON_NAME_INVALID: _ClassVar[RejectReason]
    REJECT_REASON_KEY_REVOKED: _ClassVar[RejectReason]
    REJECT_REASON_REQUEST_ID_REUSED: _ClassVar[RejectReason]
    REJECT_REASON_QUOTA_EXCEEDED: _ClassVar[RejectReason]
    REJECT_REASON_OVERLOADED: _ClassVar[RejectReason]
    REJECT_REASON_STREAM_REPLACED: _ClassVar[RejectReason]
PHASE_UNSPECIFIED: Phase
PHASE_GUILD_SETS: Phase
PHASE_GUILD_ROWS: Phase
PHASE_TURNS: Phase
PHASE_ROUND_END: Phase
PHASE_OVER: Phase
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_GUILD_SET: DecisionKind
DECISION_KIND_GUILD_ROWS: DecisionKind
DECISION_KIND_PLAY_CARD: DecisionKind
DECISION_KIND_JOKER_ACTION: DecisionKind
DECISION_KIND_REFILL_MINERS: DecisionKind
DECISION_KIND_MINE_TILE: DecisionKind
DECISION_KIND_MINE_SQUARE: DecisionKind
DECISION_KIND_TECH_SQUARE: DecisionKind
DECISION_KIND_RIGHTS_TILE: DecisionKind
DECISION_KIND_PLOT_SQUARE: DecisionKind
DECISION_KIND_BUILD_TILE: DecisionKind
DECISION_KIND_BUILD_SQUARE: DecisionKind
DECISION_KIND_REMOVE_HOUSE: DecisionKind
DECISION_KIND_PUBLIC_REWARD: DecisionKind
DECISION_KIND_SEAT_PATRICIAN: DecisionKind
DECISION_KIND_TAX: DecisionKind
DECISION_KIND_BARBARA_HOUSE: DecisionKind
DECISION_KIND_BARBARA_PATRICIAN: DecisionKind
DECISION_KIND_SCORE_BUILDING: DecisionKind
GAME_STATUS_UNSPECIFIED: GameStatus
GAME_STATUS_WAITING: GameStatus
GAME_STATUS_ACTIVE: GameStatus
GAME_STATUS_FINISHED: GameStatus
GAME_STATUS_ABANDONED: GameStatus
DECISION_SOURCE_UNSPECIFIED: DecisionSource
DECISION_SOURCE_SEAT: DecisionSource
DECISION_SOURCE_TIMEOUT: DecisionSource
DECISION_SOURCE_POLICY: DecisionSource
REJECT_REASON_UNSPECIFIED: RejectReason
REJECT_REASON_STALE_VERSION: RejectReason
REJECT_REASON_NOT_YOUR_TURN: RejectReason
REJECT_REASON_NOT_AN_OPTION: RejectReason
REJECT_REASON_GAME_NOT_ACTIVE: RejectReason
REJECT_REASON_MALFORMED: RejectReason
REJECT_REASON_RATE_LIMITED: RejectReason
REJECT_REASON_NOT_FOUND: RejectReason
REJECT_REASON_UNAUTHENTICATED: RejectReason
REJECT_REASON_PERMISSION_DENIED: RejectReason
REJECT_REASON_SEAT_TAKEN: RejectReason
REJECT_REASON_GAME_FULL: RejectReason
REJECT_REASON_GAME_NOT_ENDED: RejectReason
REJECT_REASON_LIMIT_REACHED: RejectReason
REJECT_REASON_STORE_UNAVAILABLE: RejectReason
REJECT_REASON_SERVER_FAULT: RejectReason
REJECT_REASON_COMPONENTS_MISMATCH: RejectReason
REJECT_REASON_UNKNOWN_POOL: RejectReason
REJECT_REASON_TICKET_EXISTS: RejectReason
REJECT_REASON_NAME_TAKEN: RejectReason
REJECT_REASON_NAME_INVALID: RejectReason
REJECT_REASON_KEY_REVOKED: RejectReason
REJECT_REASON_REQUEST_ID_REUSED: RejectReason
REJECT_REASON_QUOTA_EXCEEDED: RejectReason
REJECT_REASON_OVERLOADED: RejectReason
REJECT_REASON_STREAM_REPLACED: RejectReason

class GameOptions(_message.Message):
    __slots__ = ("players", "events", "guild_setup_card", "mine_setup_card")
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    GUILD_SETUP_CARD_FIELD_NUMBER: _ClassVar[int]
    MINE_SETUP_CARD_FIELD_NUMBER: _ClassVar[int]
    players: int
    events: bool
    guild_setup_card: int
    mine_setup_card: int
    def __init__(self, players: _Optional[int] = ..., events: _Optional[bool] = ..., guild_setup_card: _Optional[int] = ..., mine_setup_card: _Optional[int] = ...) -> None: ...

class ClockSettings(_message.Message):
    __slots__ = ("decision_time", "time_bank", "max_strikes", "disabled")
    DECISION_TIME_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_FIELD_NUMBER: _ClassVar[int]
    MAX_STRIKES_FIELD_NUMBER: _ClassVar[int]
    DISABLED_FIELD_NUMBER: _ClassVar[int]
    decision_time: _duration_pb2.Duration
    time_bank: _duration_pb2.Duration
    max_strikes: int
    disabled: bool
    def __init__(self, decision_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., time_bank: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., max_strikes: _Optional[int] = ..., disabled: _Optional[bool] = ...) -> None: ...

class PlayCard(_message.Message):
    __slots__ = ("card", "action", "no_effect")
    CARD_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    NO_EFFECT_FIELD_NUMBER: _ClassVar[int]
    card: int
    action: _common_pb2.Action
    no_effect: bool
    def __init__(self, card: _Optional[int] = ..., action: _Optional[_Union[_common_pb2.Action, str]] = ..., no_effect: _Optional[bool] = ...) -> None: ...

class ChooseAction(_message.Message):
    __slots__ = ("action",)
    ACTION_FIELD_NUMBER: _ClassVar[int]
    action: _common_pb2.Action
    def __init__(self, action: _Optional[_Union[_common_pb2.Action, str]] = ...) -> None: ...

class ChooseGuildSet(_message.Message):
    __slots__ = ("index",)
    INDEX_FIELD_NUMBER: _ClassVar[int]
    index: int
    def __init__(self, index: _Optional[int] = ...) -> None: ...

class ArrangeGuilds(_message.Message):
    __slots__ = ("guilds",)
    GUILDS_FIELD_NUMBER: _ClassVar[int]
    guilds: _containers.RepeatedScalarFieldContainer[_common_pb2.Guild]
    def __init__(self, guilds: _Optional[_Iterable[_Union[_common_pb2.Guild, str]]] = ...) -> None: ...

class ChooseTile(_message.Message):
    __slots__ = ("tile",)
    TILE_FIELD_NUMBER: _ClassVar[int]
    tile: int
    def __init__(self, tile: _Optional[int] = ...) -> None: ...

class ChooseSquare(_message.Message):
    __slots__ = ("square",)
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ...) -> None: ...

class ChooseGuild(_message.Message):
    __slots__ = ("guild",)
    GUILD_FIELD_NUMBER: _ClassVar[int]
    guild: _common_pb2.Guild
    def __init__(self, guild: _Optional[_Union[_common_pb2.Guild, str]] = ...) -> None: ...

class ChoosePatrician(_message.Message):
    __slots__ = ("color",)
    COLOR_FIELD_NUMBER: _ClassVar[int]
    color: _common_pb2.Color
    def __init__(self, color: _Optional[_Union[_common_pb2.Color, str]] = ...) -> None: ...

class Confirm(_message.Message):
    __slots__ = ("yes",)
    YES_FIELD_NUMBER: _ClassVar[int]
    yes: bool
    def __init__(self, yes: _Optional[bool] = ...) -> None: ...

class Skip(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Decision(_message.Message):
    __slots__ = ("play_card", "choose_action", "choose_guild_set", "arrange_guilds", "choose_tile", "choose_square", "choose_guild", "choose_patrician", "confirm", "skip")
    PLAY_CARD_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_ACTION_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_GUILD_SET_FIELD_NUMBER: _ClassVar[int]
    ARRANGE_GUILDS_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_TILE_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_SQUARE_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_GUILD_FIELD_NUMBER: _ClassVar[int]
    CHOOSE_PATRICIAN_FIELD_NUMBER: _ClassVar[int]
    CONFIRM_FIELD_NUMBER: _ClassVar[int]
    SKIP_FIELD_NUMBER: _ClassVar[int]
    play_card: PlayCard
    choose_action: ChooseAction
    choose_guild_set: ChooseGuildSet
    arrange_guilds: ArrangeGuilds
    choose_tile: ChooseTile
    choose_square: ChooseSquare
    choose_guild: ChooseGuild
    choose_patrician: ChoosePatrician
    confirm: Confirm
    skip: Skip
    def __init__(self, play_card: _Optional[_Union[PlayCard, _Mapping]] = ..., choose_action: _Optional[_Union[ChooseAction, _Mapping]] = ..., choose_guild_set: _Optional[_Union[ChooseGuildSet, _Mapping]] = ..., arrange_guilds: _Optional[_Union[ArrangeGuilds, _Mapping]] = ..., choose_tile: _Optional[_Union[ChooseTile, _Mapping]] = ..., choose_square: _Optional[_Union[ChooseSquare, _Mapping]] = ..., choose_guild: _Optional[_Union[ChooseGuild, _Mapping]] = ..., choose_patrician: _Optional[_Union[ChoosePatrician, _Mapping]] = ..., confirm: _Optional[_Union[Confirm, _Mapping]] = ..., skip: _Optional[_Union[Skip, _Mapping]] = ...) -> None: ...

class Answer(_message.Message):
    __slots__ = ("option_index", "decision", "option_text")
    OPTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    OPTION_TEXT_FIELD_NUMBER: _ClassVar[int]
    option_index: int
    decision: Decision
    option_text: str
    def __init__(self, option_index: _Optional[int] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., option_text: _Optional[str] = ...) -> None: ...

class LegalOption(_message.Message):
    __slots__ = ("index", "decision", "text", "description", "cost")
    INDEX_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    DESCRIPTION_FIELD_NUMBER: _ClassVar[int]
    COST_FIELD_NUMBER: _ClassVar[int]
    index: int
    decision: Decision
    text: str
    description: str
    cost: OptionCost
    def __init__(self, index: _Optional[int] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., text: _Optional[str] = ..., description: _Optional[str] = ..., cost: _Optional[_Union[OptionCost, _Mapping]] = ...) -> None: ...

class OptionCost(_message.Message):
    __slots__ = ("groschen", "permits", "wood", "reputation", "points", "pelicans")
    GROSCHEN_FIELD_NUMBER: _ClassVar[int]
    PERMITS_FIELD_NUMBER: _ClassVar[int]
    WOOD_FIELD_NUMBER: _ClassVar[int]
    REPUTATION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    PELICANS_FIELD_NUMBER: _ClassVar[int]
    groschen: int
    permits: int
    wood: int
    reputation: int
    points: int
    pelicans: int
    def __init__(self, groschen: _Optional[int] = ..., permits: _Optional[int] = ..., wood: _Optional[int] = ..., reputation: _Optional[int] = ..., points: _Optional[int] = ..., pelicans: _Optional[int] = ...) -> None: ...

class SquareCost(_message.Message):
    __slots__ = ("square", "wood", "groschen")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    WOOD_FIELD_NUMBER: _ClassVar[int]
    GROSCHEN_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    wood: int
    groschen: int
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ..., wood: _Optional[int] = ..., groschen: _Optional[int] = ...) -> None: ...

class PendingDecision(_message.Message):
    __slots__ = ("seat", "kind", "question", "options", "unavailable")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    QUESTION_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: DecisionKind
    question: str
    options: _containers.RepeatedCompositeFieldContainer[LegalOption]
    unavailable: _containers.RepeatedCompositeFieldContainer[UnavailableAction]
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., question: _Optional[str] = ..., options: _Optional[_Iterable[_Union[LegalOption, _Mapping]]] = ..., unavailable: _Optional[_Iterable[_Union[UnavailableAction, _Mapping]]] = ...) -> None: ...

class UnavailableAction(_message.Message):
    __slots__ = ("card", "action", "reason")
    CARD_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    card: int
    action: _common_pb2.Action
    reason: str
    def __init__(self, card: _Optional[int] = ..., action: _Optional[_Union[_common_pb2.Action, str]] = ..., reason: _Optional[str] = ...) -> None: ...

class DeckPosition(_message.Message):
    __slots__ = ("deck", "position")
    DECK_FIELD_NUMBER: _ClassVar[int]
    POSITION_FIELD_NUMBER: _ClassVar[int]
    deck: _common_pb2.Deck
    position: int
    def __init__(self, deck: _Optional[_Union[_common_pb2.Deck, str]] = ..., position: _Optional[int] = ...) -> None: ...

class ArmPosition(_message.Message):
    __slots__ = ("arm", "notch")
    ARM_FIELD_NUMBER: _ClassVar[int]
    NOTCH_FIELD_NUMBER: _ClassVar[int]
    arm: _common_pb2.Arm
    notch: int
    def __init__(self, arm: _Optional[_Union[_common_pb2.Arm, str]] = ..., notch: _Optional[int] = ...) -> None: ...

class CommodityPrice(_message.Message):
    __slots__ = ("commodity", "price", "no_market")
    COMMODITY_FIELD_NUMBER: _ClassVar[int]
    PRICE_FIELD_NUMBER: _ClassVar[int]
    NO_MARKET_FIELD_NUMBER: _ClassVar[int]
    commodity: _common_pb2.Commodity
    price: int
    no_market: bool
    def __init__(self, commodity: _Optional[_Union[_common_pb2.Commodity, str]] = ..., price: _Optional[int] = ..., no_market: _Optional[bool] = ...) -> None: ...

class ProductionCount(_message.Message):
    __slots__ = ("commodity", "amount")
    COMMODITY_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    commodity: _common_pb2.Commodity
    amount: int
    def __init__(self, commodity: _Optional[_Union[_common_pb2.Commodity, str]] = ..., amount: _Optional[int] = ...) -> None: ...

class PlayerBoard(_message.Message):
    __slots__ = ("seat", "groschen", "reputation", "points", "guild_set", "guilds", "production", "mine_ore", "income", "tax_due", "houses_removed", "plots", "slots", "pelicans", "pelicans_used", "miners_pool", "miners_reserve", "hand", "buildings")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    GROSCHEN_FIELD_NUMBER: _ClassVar[int]
    REPUTATION_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    GUILD_SET_FIELD_NUMBER: _ClassVar[int]
    GUILDS_FIELD_NUMBER: _ClassVar[int]
    PRODUCTION_FIELD_NUMBER: _ClassVar[int]
    MINE_ORE_FIELD_NUMBER: _ClassVar[int]
    INCOME_FIELD_NUMBER: _ClassVar[int]
    TAX_DUE_FIELD_NUMBER: _ClassVar[int]
    HOUSES_REMOVED_FIELD_NUMBER: _ClassVar[int]
    PLOTS_FIELD_NUMBER: _ClassVar[int]
    SLOTS_FIELD_NUMBER: _ClassVar[int]
    PELICANS_FIELD_NUMBER: _ClassVar[int]
    PELICANS_USED_FIELD_NUMBER: _ClassVar[int]
    MINERS_POOL_FIELD_NUMBER: _ClassVar[int]
    MINERS_RESERVE_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    BUILDINGS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    groschen: int
    reputation: int
    points: int
    guild_set: _containers.RepeatedScalarFieldContainer[_common_pb2.Guild]
    guilds: _containers.RepeatedScalarFieldContainer[_common_pb2.Guild]
    production: _containers.RepeatedCompositeFieldContainer[ProductionCount]
    mine_ore: int
    income: int
    tax_due: int
    houses_removed: _containers.RepeatedScalarFieldContainer[int]
    plots: _containers.RepeatedCompositeFieldContainer[_common_pb2.Square]
    slots: _containers.RepeatedScalarFieldContainer[int]
    pelicans: int
    pelicans_used: int
    miners_pool: int
    miners_reserve: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    buildings: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seat: _Optional[int] = ..., groschen: _Optional[int] = ..., reputation: _Optional[int] = ..., points: _Optional[int] = ..., guild_set: _Optional[_Iterable[_Union[_common_pb2.Guild, str]]] = ..., guilds: _Optional[_Iterable[_Union[_common_pb2.Guild, str]]] = ..., production: _Optional[_Iterable[_Union[ProductionCount, _Mapping]]] = ..., mine_ore: _Optional[int] = ..., income: _Optional[int] = ..., tax_due: _Optional[int] = ..., houses_removed: _Optional[_Iterable[int]] = ..., plots: _Optional[_Iterable[_Union[_common_pb2.Square, _Mapping]]] = ..., slots: _Optional[_Iterable[int]] = ..., pelicans: _Optional[int] = ..., pelicans_used: _Optional[int] = ..., miners_pool: _Optional[int] = ..., miners_reserve: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., buildings: _Optional[_Iterable[int]] = ...) -> None: ...

class TownHallStack(_message.Message):
    __slots__ = ("guild", "color", "top", "size")
    GUILD_FIELD_NUMBER: _ClassVar[int]
    COLOR_FIELD_NUMBER: _ClassVar[int]
    TOP_FIELD_NUMBER: _ClassVar[int]
    SIZE_FIELD_NUMBER: _ClassVar[int]
    guild: _common_pb2.Guild
    color: _common_pb2.Color
    top: int
    size: int
    def __init__(self, guild: _Optional[_Union[_common_pb2.Guild, str]] = ..., color: _Optional[_Union[_common_pb2.Color, str]] = ..., top: _Optional[int] = ..., size: _Optional[int] = ...) -> None: ...

class TownHallRow(_message.Message):
    __slots__ = ("stacks",)
    STACKS_FIELD_NUMBER: _ClassVar[int]
    stacks: _containers.RepeatedCompositeFieldContainer[TownHallStack]
    def __init__(self, stacks: _Optional[_Iterable[_Union[TownHallStack, _Mapping]]] = ...) -> None: ...

class CityTile(_message.Message):
    __slots__ = ("square", "building", "owner")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    BUILDING_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    building: int
    owner: int
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ..., building: _Optional[int] = ..., owner: _Optional[int] = ...) -> None: ...

class Plot(_message.Message):
    __slots__ = ("square", "seat")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    seat: int
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ..., seat: _Optional[int] = ...) -> None: ...

class MinePlacement(_message.Message):
    __slots__ = ("square", "tile", "owner")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    TILE_FIELD_NUMBER: _ClassVar[int]
    OWNER_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    tile: int
    owner: int
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ..., tile: _Optional[int] = ..., owner: _Optional[int] = ...) -> None: ...

class Rock(_message.Message):
    __slots__ = ("square", "tile")
    SQUARE_FIELD_NUMBER: _ClassVar[int]
    TILE_FIELD_NUMBER: _ClassVar[int]
    square: _common_pb2.Square
    tile: int
    def __init__(self, square: _Optional[_Union[_common_pb2.Square, _Mapping]] = ..., tile: _Optional[int] = ...) -> None: ...

class PatricianCount(_message.Message):
    __slots__ = ("color", "count")
    COLOR_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    color: _common_pb2.Color
    count: int
    def __init__(self, color: _Optional[_Union[_common_pb2.Color, str]] = ..., count: _Optional[int] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("game_id", "version", "viewer", "phase", "round", "rounds", "start_seat", "turn", "cards_left_in_turn", "deck_positions", "arms", "prices", "tax", "town_hall", "red_stack_size", "city", "plots", "mines", "rocks", "mine_stack_size", "mine_discard_size", "technology_taken", "mine_draws", "barbara_next", "patrician_bank", "patrician_pool", "council", "revealed_events", "current_event", "guild_setup_card", "mine_setup_card", "guild_sets_left", "building_in_hand", "players", "pending", "drawn", "kept_tile", "over", "scores", "town_discards", "uses_events", "free_action", "work", "mine_reshuffles", "mine_discard_seen", "mine_squares", "plot_squares")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    VIEWER_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    START_SEAT_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    CARDS_LEFT_IN_TURN_FIELD_NUMBER: _ClassVar[int]
    DECK_POSITIONS_FIELD_NUMBER: _ClassVar[int]
    ARMS_FIELD_NUMBER: _ClassVar[int]
    PRICES_FIELD_NUMBER: _ClassVar[int]
    TAX_FIELD_NUMBER: _ClassVar[int]
    TOWN_HALL_FIELD_NUMBER: _ClassVar[int]
    RED_STACK_SIZE_FIELD_NUMBER: _ClassVar[int]
    CITY_FIELD_NUMBER: _ClassVar[int]
    PLOTS_FIELD_NUMBER: _ClassVar[int]
    MINES_FIELD_NUMBER: _ClassVar[int]
    ROCKS_FIELD_NUMBER: _ClassVar[int]
    MINE_STACK_SIZE_FIELD_NUMBER: _ClassVar[int]
    MINE_DISCARD_SIZE_FIELD_NUMBER: _ClassVar[int]
    TECHNOLOGY_TAKEN_FIELD_NUMBER: _ClassVar[int]
    MINE_DRAWS_FIELD_NUMBER: _ClassVar[int]
    BARBARA_NEXT_FIELD_NUMBER: _ClassVar[int]
    PATRICIAN_BANK_FIELD_NUMBER: _ClassVar[int]
    PATRICIAN_POOL_FIELD_NUMBER: _ClassVar[int]
    COUNCIL_FIELD_NUMBER: _ClassVar[int]
    REVEALED_EVENTS_FIELD_NUMBER: _ClassVar[int]
    CURRENT_EVENT_FIELD_NUMBER: _ClassVar[int]
    GUILD_SETUP_CARD_FIELD_NUMBER: _ClassVar[int]
    MINE_SETUP_CARD_FIELD_NUMBER: _ClassVar[int]
    GUILD_SETS_LEFT_FIELD_NUMBER: _ClassVar[int]
    BUILDING_IN_HAND_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    DRAWN_FIELD_NUMBER: _ClassVar[int]
    KEPT_TILE_FIELD_NUMBER: _ClassVar[int]
    OVER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    TOWN_DISCARDS_FIELD_NUMBER: _ClassVar[int]
    USES_EVENTS_FIELD_NUMBER: _ClassVar[int]
    FREE_ACTION_FIELD_NUMBER: _ClassVar[int]
    WORK_FIELD_NUMBER: _ClassVar[int]
    MINE_RESHUFFLES_FIELD_NUMBER: _ClassVar[int]
    MINE_DISCARD_SEEN_FIELD_NUMBER: _ClassVar[int]
    MINE_SQUARES_FIELD_NUMBER: _ClassVar[int]
    PLOT_SQUARES_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    version: int
    viewer: int
    phase: Phase
    round: int
    rounds: int
    start_seat: int
    turn: int
    cards_left_in_turn: int
    deck_positions: _containers.RepeatedCompositeFieldContainer[DeckPosition]
    arms: _containers.RepeatedCompositeFieldContainer[ArmPosition]
    prices: _containers.RepeatedCompositeFieldContainer[CommodityPrice]
    tax: int
    town_hall: _containers.RepeatedCompositeFieldContainer[TownHallRow]
    red_stack_size: int
    city: _containers.RepeatedCompositeFieldContainer[CityTile]
    plots: _containers.RepeatedCompositeFieldContainer[Plot]
    mines: _containers.RepeatedCompositeFieldContainer[MinePlacement]
    rocks: _containers.RepeatedCompositeFieldContainer[Rock]
    mine_stack_size: int
    mine_discard_size: int
    technology_taken: int
    mine_draws: int
    barbara_next: int
    patrician_bank: _containers.RepeatedCompositeFieldContainer[PatricianCount]
    patrician_pool: _containers.RepeatedCompositeFieldContainer[PatricianCount]
    council: _containers.RepeatedCompositeFieldContainer[PatricianCount]
    revealed_events: _containers.RepeatedScalarFieldContainer[int]
    current_event: int
    guild_setup_card: int
    mine_setup_card: int
    guild_sets_left: _containers.RepeatedScalarFieldContainer[int]
    building_in_hand: int
    players: _containers.RepeatedCompositeFieldContainer[PlayerBoard]
    pending: PendingDecision
    drawn: _containers.RepeatedScalarFieldContainer[int]
    kept_tile: int
    over: bool
    scores: _containers.RepeatedScalarFieldContainer[int]
    town_discards: _containers.RepeatedScalarFieldContainer[int]
    uses_events: bool
    free_action: bool
    work: _containers.RepeatedCompositeFieldContainer[WorkStep]
    mine_reshuffles: int
    mine_discard_seen: _containers.RepeatedScalarFieldContainer[int]
    mine_squares: _containers.RepeatedCompositeFieldContainer[SquareCost]
    plot_squares: _containers.RepeatedCompositeFieldContainer[SquareCost]
    def __init__(self, game_id: _Optional[str] = ..., version: _Optional[int] = ..., viewer: _Optional[int] = ..., phase: _Optional[_Union[Phase, str]] = ..., round: _Optional[int] = ..., rounds: _Optional[int] = ..., start_seat: _Optional[int] = ..., turn: _Optional[int] = ..., cards_left_in_turn: _Optional[int] = ..., deck_positions: _Optional[_Iterable[_Union[DeckPosition, _Mapping]]] = ..., arms: _Optional[_Iterable[_Union[ArmPosition, _Mapping]]] = ..., prices: _Optional[_Iterable[_Union[CommodityPrice, _Mapping]]] = ..., tax: _Optional[int] = ..., town_hall: _Optional[_Iterable[_Union[TownHallRow, _Mapping]]] = ..., red_stack_size: _Optional[int] = ..., city: _Optional[_Iterable[_Union[CityTile, _Mapping]]] = ..., plots: _Optional[_Iterable[_Union[Plot, _Mapping]]] = ..., mines: _Optional[_Iterable[_Union[MinePlacement, _Mapping]]] = ..., rocks: _Optional[_Iterable[_Union[Rock, _Mapping]]] = ..., mine_stack_size: _Optional[int] = ..., mine_discard_size: _Optional[int] = ..., technology_taken: _Optional[int] = ..., mine_draws: _Optional[int] = ..., barbara_next: _Optional[int] = ..., patrician_bank: _Optional[_Iterable[_Union[PatricianCount, _Mapping]]] = ..., patrician_pool: _Optional[_Iterable[_Union[PatricianCount, _Mapping]]] = ..., council: _Optional[_Iterable[_Union[PatricianCount, _Mapping]]] = ..., revealed_events: _Optional[_Iterable[int]] = ..., current_event: _Optional[int] = ..., guild_setup_card: _Optional[int] = ..., mine_setup_card: _Optional[int] = ..., guild_sets_left: _Optional[_Iterable[int]] = ..., building_in_hand: _Optional[int] = ..., players: _Optional[_Iterable[_Union[PlayerBoard, _Mapping]]] = ..., pending: _Optional[_Union[PendingDecision, _Mapping]] = ..., drawn: _Optional[_Iterable[int]] = ..., kept_tile: _Optional[int] = ..., over: _Optional[bool] = ..., scores: _Optional[_Iterable[int]] = ..., town_discards: _Optional[_Iterable[int]] = ..., uses_events: _Optional[bool] = ..., free_action: _Optional[bool] = ..., work: _Optional[_Iterable[_Union[WorkStep, _Mapping]]] = ..., mine_reshuffles: _Optional[int] = ..., mine_discard_seen: _Optional[_Iterable[int]] = ..., mine_squares: _Optional[_Iterable[_Union[SquareCost, _Mapping]]] = ..., plot_squares: _Optional[_Iterable[_Union[SquareCost, _Mapping]]] = ...) -> None: ...

class WorkStep(_message.Message):
    __slots__ = ("kind", "seat", "args")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ARGS_FIELD_NUMBER: _ClassVar[int]
    kind: str
    seat: int
    args: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, kind: _Optional[str] = ..., seat: _Optional[int] = ..., args: _Optional[_Iterable[int]] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("kind", "seat", "text")
    KIND_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    kind: str
    seat: int
    text: str
    def __init__(self, kind: _Optional[str] = ..., seat: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class DecisionRecord(_message.Message):
    __slots__ = ("version", "seat", "decision", "text", "source", "applied_at", "think_time", "kind")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    SOURCE_FIELD_NUMBER: _ClassVar[int]
    APPLIED_AT_FIELD_NUMBER: _ClassVar[int]
    THINK_TIME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    version: int
    seat: int
    decision: Decision
    text: str
    source: DecisionSource
    applied_at: _timestamp_pb2.Timestamp
    think_time: _duration_pb2.Duration
    kind: DecisionKind
    def __init__(self, version: _Optional[int] = ..., seat: _Optional[int] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ..., text: _Optional[str] = ..., source: _Optional[_Union[DecisionSource, str]] = ..., applied_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., think_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., kind: _Optional[_Union[DecisionKind, str]] = ...) -> None: ...

class ScoreItem(_message.Message):
    __slots__ = ("name", "points")
    NAME_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    name: str
    points: int
    def __init__(self, name: _Optional[str] = ..., points: _Optional[int] = ...) -> None: ...

class SeatResult(_message.Message):
    __slots__ = ("seat", "score", "groschen", "winner", "breakdown", "resigned")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    GROSCHEN_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    BREAKDOWN_FIELD_NUMBER: _ClassVar[int]
    RESIGNED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    score: int
    groschen: int
    winner: bool
    breakdown: _containers.RepeatedCompositeFieldContainer[ScoreItem]
    resigned: bool
    def __init__(self, seat: _Optional[int] = ..., score: _Optional[int] = ..., groschen: _Optional[int] = ..., winner: _Optional[bool] = ..., breakdown: _Optional[_Iterable[_Union[ScoreItem, _Mapping]]] = ..., resigned: _Optional[bool] = ...) -> None: ...

class GameResult(_message.Message):
    __slots__ = ("seats", "winners")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    WINNERS_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedCompositeFieldContainer[SeatResult]
    winners: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, seats: _Optional[_Iterable[_Union[SeatResult, _Mapping]]] = ..., winners: _Optional[_Iterable[int]] = ...) -> None: ...

class SeatInfo(_message.Message):
    __slots__ = ("seat", "joined", "name", "resigned", "strikes", "replaced", "time_bank_left")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    JOINED_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    RESIGNED_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    REPLACED_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_LEFT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    joined: bool
    name: str
    resigned: bool
    strikes: int
    replaced: bool
    time_bank_left: _duration_pb2.Duration
    def __init__(self, seat: _Optional[int] = ..., joined: _Optional[bool] = ..., name: _Optional[str] = ..., resigned: _Optional[bool] = ..., strikes: _Optional[int] = ..., replaced: _Optional[bool] = ..., time_bank_left: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...

class GameSummary(_message.Message):
    __slots__ = ("game_id", "options", "clock", "status", "version", "seats", "pending_seat", "pending_kind", "created_at", "updated_at", "result", "rules_version", "label", "abandon_reason", "components_hash")
    GAME_ID_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    CLOCK_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    PENDING_SEAT_FIELD_NUMBER: _ClassVar[int]
    PENDING_KIND_FIELD_NUMBER: _ClassVar[int]
    CREATED_AT_FIELD_NUMBER: _ClassVar[int]
    UPDATED_AT_FIELD_NUMBER: _ClassVar[int]
    RESULT_FIELD_NUMBER: _ClassVar[int]
    RULES_VERSION_FIELD_NUMBER: _ClassVar[int]
    LABEL_FIELD_NUMBER: _ClassVar[int]
    ABANDON_REASON_FIELD_NUMBER: _ClassVar[int]
    COMPONENTS_HASH_FIELD_NUMBER: _ClassVar[int]
    game_id: str
    options: GameOptions
    clock: ClockSettings
    status: GameStatus
    version: int
    seats: _containers.RepeatedCompositeFieldContainer[SeatInfo]
    pending_seat: int
    pending_kind: DecisionKind
    created_at: _timestamp_pb2.Timestamp
    updated_at: _timestamp_pb2.Timestamp
    result: GameResult
    rules_version: int
    label: str
    abandon_reason: str
    components_hash: str
    def __init__(self, game_id: _Optional[str] = ..., options: _Optional[_Union[GameOptions, _Mapping]] = ..., clock: _Optional[_Union[ClockSettings, _Mapping]] = ..., status: _Optional[_Union[GameStatus, str]] = ..., version: _Optional[int] = ..., seats: _Optional[_Iterable[_Union[SeatInfo, _Mapping]]] = ..., pending_seat: _Optional[int] = ..., pending_kind: _Optional[_Union[DecisionKind, str]] = ..., created_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., updated_at: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., result: _Optional[_Union[GameResult, _Mapping]] = ..., rules_version: _Optional[int] = ..., label: _Optional[str] = ..., abandon_reason: _Optional[str] = ..., components_hash: _Optional[str] = ...) -> None: ...

class Clock(_message.Message):
    __slots__ = ("seat", "deadline", "time_bank_left", "decision_time")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_LEFT_FIELD_NUMBER: _ClassVar[int]
    DECISION_TIME_FIELD_NUMBER: _ClassVar[int]
    seat: int
    deadline: _timestamp_pb2.Timestamp
    time_bank_left: _duration_pb2.Duration
    decision_time: _duration_pb2.Duration
    def __init__(self, seat: _Optional[int] = ..., deadline: _Optional[_Union[datetime.datetime, _timestamp_pb2.Timestamp, _Mapping]] = ..., time_bank_left: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ..., decision_time: _Optional[_Union[datetime.timedelta, _duration_pb2.Duration, _Mapping]] = ...) -> None: ...
