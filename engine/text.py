"""Readable descriptions of decisions and options, for people (the human client, logs, option texts).

The canonical machine form of an option is :func:`kutnahora.engine.options.option_text`; this module adds
names and context from the component set and the pending decision.
"""

from __future__ import annotations

from kutnahora.engine.component_cache import ComponentCache
from kutnahora.engine.components import Action, Building, Commodity, ComponentSet, MineTile, Side
from kutnahora.engine.costs import Cost
from kutnahora.engine.economy import price
from kutnahora.engine.events import action_words, plural
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
from kutnahora.engine.town import plot_costs

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


SKIP_TEXTS: dict[DecisionKind, str] = {
    DecisionKind.MINE_TILE: "Discard them all",
    DecisionKind.TECH_SQUARE: "Remove the tile from the game",
    DecisionKind.RIGHTS_TILE: "Take no building",
    DecisionKind.PLOT_SQUARE: "Claim no plot",
    DecisionKind.BUILD_TILE: "Build nothing",
    DecisionKind.REMOVE_HOUSE: "Remove no house",
    DecisionKind.PUBLIC_REWARD: "Take no public building",
    DecisionKind.SEAT_PATRICIAN: "Seat no patrician",
    DecisionKind.BARBARA_HOUSE: "Remove no house",
    DecisionKind.BARBARA_PATRICIAN: "Seat no patrician",
    DecisionKind.SCORE_BUILDING: "Score no building",
}
"""What declining means, by decision kind (``Skip`` options)."""


def building_line(building: Building) -> str:
    """Name, owner, production, costs and dot sides of a building tile, in one line."""
    owner = building.guild.title() if building.guild else f"{str(building.color).title()} public"
    production = f", +{building.production} {building.commodity}" if building.commodity else ""
    dots = "".join(letter for letter, side in zip("NESW", Side, strict=True) if building.dots.on(side))
    return (
        f"{building.name} ({owner}{production}; wood {building.wood_cost}, plot {building.plot_cost}, "
        f"dots {dots or '-'})"
    )


def mine_tile_line(tile: MineTile) -> str:
    """Stars, ore, population, points and wood cost of a mine tile."""
    return (
        f"{tile.stars}★ ore {tile.ore} population +{tile.population} points {tile.points} "
        f"wood {tile.wood_cost}"
    )


def describe_option(state: GameState, kind: DecisionKind, option: Option) -> str:
    """A sentence-like description of one option of a decision of this kind.

    This is the one wording of options: the server sends it with every option, and the terminal client
    words a decision payload the same way (``kutnahora.clients.render``); a test holds them together.
    """
    components = state.components
    match option:
        case PlayCard(card=card, action=None):
            return f"Play card {card} for no effect"
        case PlayCard(card=card, action=Action() as action):
            return f"Play card {card}: {action_words(action)}"
        case ChooseAction(action=action):
            return f"Joker as {action_words(action)}"
        case ChooseGuildSet(index=index):
            return "Guilds " + ", ".join(g.title() for g in guild_sets(state)[index])
        case ArrangeGuilds(guilds=guilds):
            return "Rows: " + " / ".join(g.title() for g in guilds)
        case ChooseTile(tile=tile) if kind is DecisionKind.MINE_TILE:
            return f"Mine tile {tile}: {mine_tile_line(components.mine_tile(tile))}"
        case ChooseTile(tile=tile):
            return building_line(components.building(tile))
        case ChooseSquare(row=row, col=col):
            where = (
                "Mine square" if kind in (DecisionKind.MINE_SQUARE, DecisionKind.TECH_SQUARE) else "Square"
            )
            return f"{where} row {row}, column {col}"
        case ChooseGuild(guild=guild):
            return f"The {guild.title()} row"
        case ChoosePatrician(color=color):
            return f"A {color} patrician"
        case Confirm(yes=yes):
            if kind is DecisionKind.TAX:
                return "Pay the tax" if yes else "Lose reputation instead"
            if kind is DecisionKind.REFILL_MINERS:
                return "Buy a permit to refill the miner pool" if yes else "Do not refill the miner pool"
            return "Yes" if yes else "No"
        case Skip():
            return SKIP_TEXTS.get(kind, "Skip")
    raise TypeError(f"not an option: {option!r}")


def describe_cost(cost: Cost) -> str:
    """A cost in words: ``12 groschen (4 wood)``, ``1 reputation``, ``1 pelican, 2 points``; ``free``."""
    parts: list[str] = []
    if cost.groschen:
        bought = [plural(cost.permits, "permit")] if cost.permits else []
        bought += [f"{cost.wood} wood"] if cost.wood else []
        parts.append(f"{cost.groschen} groschen" + (f" ({', '.join(bought)})" if bought else ""))
    if cost.reputation:
        parts.append(f"{cost.reputation} reputation")
    if cost.points:
        parts.append(plural(cost.points, "point"))
    if cost.pelicans:
        parts.append(plural(cost.pelicans, "pelican"))
    return ", ".join(parts) or "free"


def why_unavailable(state: GameState, seat: int, action: Action) -> str:
    """Why a paid ``action`` cannot have effect for ``seat`` now (docs/rules.md#r4), in words for the seat."""
    player = state.players[seat]
    components = state.components
    match action:
        case Action.ST_BARBARA:
            return "you have no pelican token"
        case Action.MINE:
            if player.miners_pool + player.miners_reserve == 0:
                return "you have no miner left"
            if player.miners_pool == 0:
                permit = price(state, Commodity.PERMITS)
                return f"your miner pool is empty and a permit to refill it costs {permit} groschen"
            return "no mine tile is left to draw"
        case Action.RIGHTS:
            if len(player.slots) >= components.building_slots:
                return f"your {components.building_slots} building slots are full"
            return "no top tile of your guilds, nor a public one, is affordable"
        case Action.PLOT:
            if len(player.plots) >= components.plot_markers:
                return "all your plot markers are in town"
            cheapest = min(plot_costs(state, seat, free=False).values(), default=None)
            if cheapest is None:
                return "no square is free"
            return f"the cheapest plot costs {cheapest} groschen"
        case Action.BUILDING:
            if not player.plots:
                return "you have no plot to build on"
            if not player.slots:
                return "you hold no building rights"
            return "none of your buildings can be built now (wood, a market or a house is missing)"
        case Action.JOKER:
            return "no other action could have effect after the Joker's reputation cost"
        case Action.INCOME:
            return "income can always be taken"
    raise AssertionError(action)


def unavailable_actions(state: GameState) -> list[tuple[int, Action, str]]:
    """For a pending card play: every card half in the seat's hand not offered with effect, and why."""
    pending = state.pending
    if pending is None or pending.kind is not DecisionKind.PLAY_CARD:
        return []
    missing = _missing_halves(state.components, tuple(state.players[pending.seat].hand), pending.options)
    if not missing:
        return []
    reasons: dict[Action, str] = {}
    for _, action in missing:
        if action not in reasons:
            reasons[action] = why_unavailable(state, pending.seat, action)
    return [(card, action, reasons[action]) for card, action in missing]


_Halves = tuple[tuple[int, Action], ...]
_MissingByHand = dict[tuple[tuple[int, ...], tuple[Option, ...]], _Halves]
_MISSING: ComponentCache[_MissingByHand] = ComponentCache(lambda _: {})
_MISSING_LIMIT = 20_000


def _missing_halves(components: ComponentSet, hand: tuple[int, ...], options: tuple[Option, ...]) -> _Halves:
    """The card halves in ``hand`` that ``options`` do not offer with effect, in the order of the action
    cards (worked out once per component set, hand and options)."""
    known = _MISSING.get(components)
    key = (hand, options)
    missing = known.get(key)
    if missing is None:
        offered = {(o.card, o.action) for o in options if isinstance(o, PlayCard)}
        found: list[tuple[int, Action]] = []
        for card in components.action_cards:
            if card.number in hand:
                found.extend(
                    (card.number, action)
                    for action in dict.fromkeys((card.top, card.bottom))
                    if (card.number, action) not in offered
                )
        if len(known) >= _MISSING_LIMIT:
            known.clear()
        missing = known[key] = tuple(found)
    return missing
