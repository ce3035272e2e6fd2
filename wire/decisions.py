"""Decisions both ways: an engine option as the wire's ``Decision`` payload, and back; an option's cost.

A payload that names no option raises :class:`~kutnahora.wire.values.Malformed`. Payloads are built once per
distinct option (:func:`decision_payload`): options are small frozen values, repeated all game long.
"""

from __future__ import annotations

from kutnahora.engine import Cost, Option
from kutnahora.engine.components import Action
from kutnahora.engine.options import (
    SKIP,
    ArrangeGuilds,
    ChooseAction,
    ChooseGuild,
    ChooseGuildSet,
    ChoosePatrician,
    ChooseSquare,
    ChooseTile,
    Confirm,
    PlayCard,
    Skip,
)
from kutnahora.v1 import common_pb2, game_pb2
from kutnahora.wire.values import (
    ACTION,
    ACTION_BACK,
    COLOR,
    COLOR_BACK,
    GUILD,
    GUILD_BACK,
    Malformed,
    from_wire_enum,
)


def option_to_decision(option: Option) -> game_pb2.Decision:
    """The wire payload of an engine option."""
    match option:
        case PlayCard(card=card, action=None):
            return game_pb2.Decision(play_card=game_pb2.PlayCard(card=card, no_effect=True))
        case PlayCard(card=card, action=Action() as action):
            return game_pb2.Decision(play_card=game_pb2.PlayCard(card=card, action=ACTION[action]))
        case ChooseAction(action=action):
            return game_pb2.Decision(choose_action=game_pb2.ChooseAction(action=ACTION[action]))
        case ChooseGuildSet(index=index):
            return game_pb2.Decision(choose_guild_set=game_pb2.ChooseGuildSet(index=index))
        case ArrangeGuilds(guilds=guilds):
            return game_pb2.Decision(arrange_guilds=game_pb2.ArrangeGuilds(guilds=[GUILD[g] for g in guilds]))
        case ChooseTile(tile=tile):
            return game_pb2.Decision(choose_tile=game_pb2.ChooseTile(tile=tile))
        case ChooseSquare(row=row, col=col):
            return game_pb2.Decision(
                choose_square=game_pb2.ChooseSquare(square=common_pb2.Square(row=row, col=col))
            )
        case ChooseGuild(guild=guild):
            return game_pb2.Decision(choose_guild=game_pb2.ChooseGuild(guild=GUILD[guild]))
        case ChoosePatrician(color=color):
            return game_pb2.Decision(choose_patrician=game_pb2.ChoosePatrician(color=COLOR[color]))
        case Confirm(yes=yes):
            return game_pb2.Decision(confirm=game_pb2.Confirm(yes=yes))
        case Skip():
            return game_pb2.Decision(skip=game_pb2.Skip())
    raise TypeError(f"not an option: {option!r}")


def decision_to_option(decision: game_pb2.Decision) -> Option:
    """The engine option a wire payload names; raises :class:`Malformed` when it names none."""
    which = decision.WhichOneof("choice")
    if which is None:
        raise Malformed("the decision sets none of its choices (play_card, choose_tile, skip, ...)")
    if which == "play_card":
        play = decision.play_card
        if play.no_effect:
            if play.action != common_pb2.ACTION_UNSPECIFIED:
                raise Malformed("play_card sets both an action and no_effect")
            return PlayCard(play.card, None)
        return PlayCard(play.card, from_wire_enum(ACTION_BACK, play.action, "play_card.action"))
    if which == "choose_action":
        return ChooseAction(
            from_wire_enum(ACTION_BACK, decision.choose_action.action, "choose_action.action")
        )
    if which == "choose_guild_set":
        return ChooseGuildSet(decision.choose_guild_set.index)
    if which == "arrange_guilds":
        wire = decision.arrange_guilds.guilds
        if len(wire) != 3:
            raise Malformed(f"arrange_guilds must list three guilds, not {len(wire)}")
        a, b, c = (from_wire_enum(GUILD_BACK, g, "arrange_guilds.guilds") for g in wire)
        return ArrangeGuilds((a, b, c))
    if which == "choose_tile":
        return ChooseTile(decision.choose_tile.tile)
    if which == "choose_square":
        if not decision.choose_square.HasField("square"):
            raise Malformed("choose_square must set its square")
        square = decision.choose_square.square
        return ChooseSquare(square.row, square.col)
    if which == "choose_guild":
        return ChooseGuild(from_wire_enum(GUILD_BACK, decision.choose_guild.guild, "choose_guild.guild"))
    if which == "choose_patrician":
        color = decision.choose_patrician.color
        return ChoosePatrician(from_wire_enum(COLOR_BACK, color, "choose_patrician.color"))
    if which == "confirm":
        return Confirm(decision.confirm.yes)
    return SKIP


_DECISIONS: dict[Option, game_pb2.Decision] = {}
_CACHE_LIMIT = 20_000


def decision_payload(option: Option) -> game_pb2.Decision:
    """The wire payload of an option, built once per distinct option (options are small frozen values).

    The returned message is shared: copy it (``CopyFrom``, or pass it to a constructor), never change it.
    """
    decision = _DECISIONS.get(option)
    if decision is None:
        if len(_DECISIONS) >= _CACHE_LIMIT:
            _DECISIONS.clear()
        decision = _DECISIONS[option] = option_to_decision(option)
    return decision


def option_cost_to_wire(cost: Cost) -> game_pb2.OptionCost:
    """The wire form of an option's cost."""
    return game_pb2.OptionCost(
        groschen=cost.groschen,
        permits=cost.permits,
        wood=cost.wood,
        reputation=cost.reputation,
        points=cost.points,
        pelicans=cost.pelicans,
    )
