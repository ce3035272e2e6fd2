"""The plain values of the wire, both ways: enum members by name, and squares.

Every engine enum is mapped by name (``Guild.METALLURGISTS`` is ``GUILD_METALLURGISTS``); each table is built
once at import, so a missing or renamed member fails loudly at start-up rather than mid-game. ``GUILD`` maps
an engine member to its wire number, ``GUILD_BACK`` a wire number back to the member. A wire number that
names no member raises :class:`Malformed` (:func:`from_wire_enum`).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any, TypeVar

from kutnahora.engine.components import (
    Action,
    Arm,
    BarbaraEffect,
    Color,
    Commodity,
    Deck,
    EffectKind,
    Guild,
    HouseRewardKind,
    Side,
    Square,
)
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import Phase
from kutnahora.v1 import common_pb2, components_pb2, game_pb2

E = TypeVar("E", bound=Enum)


class Malformed(ValueError):
    """A wire message that cannot be read as what it claims to be; the sentence says why."""


def enum_table(engine_enum: type[E], wire_enum: object, prefix: str) -> tuple[dict[E, Any], dict[int, E]]:
    """Map an enum to wire values by name, both ways; fail if a member has no wire value.

    Wire values are typed loosely (each generated enum has its own value type); they are plain ints.
    """
    to_wire: dict[E, Any] = {}
    for member in engine_enum:
        to_wire[member] = wire_enum.Value(prefix + member.name)  # type: ignore[attr-defined]
    return to_wire, {number: member for member, number in to_wire.items()}


GUILD, GUILD_BACK = enum_table(Guild, common_pb2.Guild, "GUILD_")
COMMODITY, COMMODITY_BACK = enum_table(Commodity, common_pb2.Commodity, "COMMODITY_")
DECK, DECK_BACK = enum_table(Deck, common_pb2.Deck, "DECK_")
ARM, ARM_BACK = enum_table(Arm, common_pb2.Arm, "ARM_")
COLOR, COLOR_BACK = enum_table(Color, common_pb2.Color, "COLOR_")
ACTION, ACTION_BACK = enum_table(Action, common_pb2.Action, "ACTION_")
SIDE, SIDE_BACK = enum_table(Side, common_pb2.Side, "SIDE_")
EFFECT_KIND = enum_table(EffectKind, components_pb2.EffectKind, "EFFECT_KIND_")[0]
HOUSE_REWARD_KIND = enum_table(HouseRewardKind, components_pb2.HouseRewardKind, "HOUSE_REWARD_KIND_")[0]
BARBARA_EFFECT = enum_table(BarbaraEffect, components_pb2.BarbaraEffect, "BARBARA_EFFECT_")[0]
DECISION_KIND, DECISION_KIND_BACK = enum_table(DecisionKind, game_pb2.DecisionKind, "DECISION_KIND_")
PHASE, PHASE_BACK = enum_table(Phase, game_pb2.Phase, "PHASE_")
PHASE_BY_VALUE: dict[str, Any] = {phase.value: number for phase, number in PHASE.items()}
CURRENCY: dict[str, Any] = {
    "groschen": components_pb2.CURRENCY_GROSCHEN,
    "permits": components_pb2.CURRENCY_PERMITS,
}
GUILD_BY_VALUE: dict[str, Any] = {guild.value: number for guild, number in GUILD.items()}
COLOR_BY_VALUE: dict[str, Any] = {color.value: number for color, number in COLOR.items()}


def from_wire_enum(table: Mapping[int, E], number: int, what: str) -> E:
    """The member a wire number names; raises :class:`Malformed` (naming the field ``what``) for none."""
    member = table.get(number)
    if member is None:
        raise Malformed(f"{what} must name a known value, not {number}")
    return member


def set_square(target: object, square: Square) -> None:
    """Write a square into a wire ``Square`` (a message or a field of one)."""
    row, col = square
    target.row = row  # type: ignore[attr-defined]
    target.col = col  # type: ignore[attr-defined]


def square_from_wire(square: common_pb2.Square) -> Square:
    """The engine square of a wire ``Square``."""
    return (square.row, square.col)
