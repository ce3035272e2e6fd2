"""Readable descriptions of decisions and options, for people (the human client, logs, option texts).

The canonical machine form of an option is :func:`kutnahora.engine.options.option_text`; this module adds
names and context from the component set and the pending decision.
"""

from __future__ import annotations

from kutnahora.engine.options import (
    ArrangeGuilds,
    ChooseAction,
    ChooseGuild,
    ChooseGuildSet,
    ChoosePatrician,
    ChooseSquare,
    ChooseTile,
    Confirm,
    DecisionKind,
    Option,
    PlayCard,
    Skip,
)
from kutnahora.engine.setup import guild_sets
from kutnahora.engine.state import GameState

QUESTIONS: dict[DecisionKind, str] = {
    DecisionKind.GUILD_SET: "Choose your set of three guilds",
    DecisionKind.GUILD_ROWS: "Place your guilds on the rows of your board",
    DecisionKind.PLAY_CARD: "Play an action card",
    DecisionKind.JOKER_ACTION: "Choose the action for the Joker",
    DecisionKind.REFILL_MINERS: "Buy a permit to refill your miner pool?",
    DecisionKind.MINE_TILE: "Keep one of the drawn mine tiles",
    DecisionKind.MINE_SQUARE: "Choose where to dig",
    DecisionKind.TECH_SQUARE: "Choose where the mining-technology tile goes",
    DecisionKind.RIGHTS_TILE: "Choose a building to take the rights to",
    DecisionKind.PLOT_SQUARE: "Choose a plot to claim",
    DecisionKind.BUILD_TILE: "Choose a building to build",
    DecisionKind.BUILD_SQUARE: "Choose the plot to build on",
    DecisionKind.REMOVE_HOUSE: "Remove the leftmost house of a row",
    DecisionKind.PUBLIC_REWARD: "Take a public building for free",
    DecisionKind.SEAT_PATRICIAN: "Pay to seat a patrician on the council?",
    DecisionKind.TAX: "Pay the tax, or lose reputation?",
    DecisionKind.BARBARA_HOUSE: "Remove a house for +2 production",
    DecisionKind.BARBARA_PATRICIAN: "Seat a patrician from the bank",
    DecisionKind.SCORE_BUILDING: "Score one of your buildings' dots",
}


def describe_option(state: GameState, kind: DecisionKind, option: Option) -> str:
    """A sentence-like description of one option of a decision of this kind."""
    components = state.components
    match option:
        case PlayCard(card=card, action=None):
            return f"Play card {card} for no effect"
        case PlayCard(card=card, action=action):
            return f"Play card {card}: {str(action).replace('_', ' ').title()}"
        case ChooseAction(action=action):
            return f"Joker as {str(action).replace('_', ' ').title()}"
        case ChooseGuildSet(index=index):
            return "Guilds " + ", ".join(g.title() for g in guild_sets(state)[index])
        case ArrangeGuilds(guilds=guilds):
            return "Rows: " + " / ".join(g.title() for g in guilds)
        case ChooseTile(tile=tile) if kind in (DecisionKind.MINE_TILE,):
            t = components.mine_tile(tile)
            return (
                f"Mine tile {tile}: {t.stars}★ ore {t.ore} population +{t.population} "
                f"points {t.points} wood cost {t.wood_cost}"
            )
        case ChooseTile(tile=tile):
            b = components.building(tile)
            owner = b.guild.title() if b.guild else f"{b.color} public"
            return f"{b.name} ({owner}; wood {b.wood_cost}, plot {b.plot_cost}, {b.dots.count()} dots)"
        case ChooseSquare(row=row, col=col):
            where = (
                "mine square" if kind in (DecisionKind.MINE_SQUARE, DecisionKind.TECH_SQUARE) else "square"
            )
            return f"{where.capitalize()} row {row}, column {col}"
        case ChooseGuild(guild=guild):
            return f"The {guild.title()} row"
        case ChoosePatrician(color=color):
            return f"A {color} patrician"
        case Confirm(yes=yes):
            if kind is DecisionKind.TAX:
                return "Pay the tax" if yes else "Lose reputation instead"
            return "Yes" if yes else "No"
        case Skip():
            if kind is DecisionKind.MINE_TILE:
                return "Discard them all"
            if kind is DecisionKind.TECH_SQUARE:
                return "Remove the tile from the game"
            return "Skip"
    raise TypeError(f"not an option: {option!r}")
