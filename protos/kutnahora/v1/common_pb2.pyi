from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from typing import ClassVar as _ClassVar, Optional as _Optional

DESCRIPTOR: _descriptor.FileDescriptor

class Guild(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    GUILD_UNSPECIFIED: _ClassVar[Guild]
    GUILD_METALLURGISTS: _ClassVar[Guild]
    GUILD_MINERS: _ClassVar[Guild]
    GUILD_BUILDERS: _ClassVar[Guild]
    GUILD_SCRIBES: _ClassVar[Guild]
    GUILD_GROCERS: _ClassVar[Guild]
    GUILD_INNKEEPERS: _ClassVar[Guild]

class Commodity(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COMMODITY_UNSPECIFIED: _ClassVar[Commodity]
    COMMODITY_SILVER: _ClassVar[Commodity]
    COMMODITY_ORE: _ClassVar[Commodity]
    COMMODITY_WOOD: _ClassVar[Commodity]
    COMMODITY_PERMITS: _ClassVar[Commodity]
    COMMODITY_FOOD: _ClassVar[Commodity]
    COMMODITY_BEER: _ClassVar[Commodity]

class Deck(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECK_UNSPECIFIED: _ClassVar[Deck]
    DECK_POPULATION: _ClassVar[Deck]
    DECK_ORE: _ClassVar[Deck]

class Arm(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ARM_UNSPECIFIED: _ClassVar[Arm]
    ARM_WOOD: _ClassVar[Arm]
    ARM_FOOD: _ClassVar[Arm]
    ARM_BEER: _ClassVar[Arm]
    ARM_SILVER_ORE: _ClassVar[Arm]
    ARM_PERMITS: _ClassVar[Arm]

class Color(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOR_UNSPECIFIED: _ClassVar[Color]
    COLOR_GREEN: _ClassVar[Color]
    COLOR_SILVER: _ClassVar[Color]
    COLOR_YELLOW: _ClassVar[Color]
    COLOR_RED: _ClassVar[Color]

class Action(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_UNSPECIFIED: _ClassVar[Action]
    ACTION_RIGHTS: _ClassVar[Action]
    ACTION_INCOME: _ClassVar[Action]
    ACTION_PLOT: _ClassVar[Action]
    ACTION_MINE: _ClassVar[Action]
    ACTION_BUILDING: _ClassVar[Action]
    ACTION_JOKER: _ClassVar[Action]
    ACTION_ST_BARBARA: _ClassVar[Action]

class Side(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SIDE_UNSPECIFIED: _ClassVar[Side]
    SIDE_NORTH: _ClassVar[Side]
    SIDE_EAST: _ClassVar[Side]
    SIDE_SOUTH: _ClassVar[Side]
    SIDE_WEST: _ClassVar[Side]
GUILD_UNSPECIFIED: Guild
GUILD_METALLURGISTS: Guild
GUILD_MINERS: Guild
GUILD_BUILDERS: Guild
GUILD_SCRIBES: Guild
GUILD_GROCERS: Guild
GUILD_INNKEEPERS: Guild
COMMODITY_UNSPECIFIED: Commodity
COMMODITY_SILVER: Commodity
COMMODITY_ORE: Commodity
COMMODITY_WOOD: Commodity
COMMODITY_PERMITS: Commodity
COMMODITY_FOOD: Commodity
COMMODITY_BEER: Commodity
DECK_UNSPECIFIED: Deck
DECK_POPULATION: Deck
DECK_ORE: Deck
ARM_UNSPECIFIED: Arm
ARM_WOOD: Arm
ARM_FOOD: Arm
ARM_BEER: Arm
ARM_SILVER_ORE: Arm
ARM_PERMITS: Arm
COLOR_UNSPECIFIED: Color
COLOR_GREEN: Color
COLOR_SILVER: Color
COLOR_YELLOW: Color
COLOR_RED: Color
ACTION_UNSPECIFIED: Action
ACTION_RIGHTS: Action
ACTION_INCOME: Action
ACTION_PLOT: Action
ACTION_MINE: Action
ACTION_BUILDING: Action
ACTION_JOKER: Action
ACTION_ST_BARBARA: Action
SIDE_UNSPECIFIED: Side
SIDE_NORTH: Side
SIDE_EAST: Side
SIDE_SOUTH: Side
SIDE_WEST: Side

class Square(_message.Message):
    __slots__ = ("row", "col")
    ROW_FIELD_NUMBER: _ClassVar[int]
    COL_FIELD_NUMBER: _ClassVar[int]
    row: int
    col: int
    def __init__(self, row: _Optional[int] = ..., col: _Optional[int] = ...) -> None: ...
