"""Decisions: what a seat is asked, and the options it may answer with.

At every moment of a game exactly one seat owes exactly one :class:`PendingDecision` (or the game is
over). The decision lists every legal answer as an option value; :func:`kutnahora.engine.game.apply` accepts
only one of those. Options are small frozen values whose ``repr`` round-trips and whose :func:`option_text`
gives a short canonical form (``play 2 mine``, ``square 1,3``) used in logs, golden files and the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from kutnahora.engine.components import Action, Color, Guild


class DecisionKind(StrEnum):
    """What the pending decision asks for."""

    GUILD_SET = "guild_set"  # setup: choose a set of three guilds
    GUILD_ROWS = "guild_rows"  # setup: place your three guilds on the rows of your board
    PLAY_CARD = "play_card"  # play an action card half, or a card for no effect
    JOKER_ACTION = "joker_action"  # the Joker: which action to take
    REFILL_MINERS = "refill_miners"  # one miner in the pool: buy a permit to refill it?
    MINE_TILE = "mine_tile"  # keep one of the drawn mine tiles, or discard them all
    MINE_SQUARE = "mine_square"  # where the kept mine tile goes
    TECH_SQUARE = "tech_square"  # where the mining-technology tile goes (or remove it)
    RIGHTS_TILE = "rights_tile"  # which town-hall tile to take
    PLOT_SQUARE = "plot_square"  # which city square to claim
    BUILD_TILE = "build_tile"  # which tile from your slots to build
    BUILD_SQUARE = "build_square"  # on which of your plots
    REMOVE_HOUSE = "remove_house"  # building effect: remove the leftmost house of a row
    PUBLIC_REWARD = "public_reward"  # house reward: take a public building for free
    SEAT_PATRICIAN = "seat_patrician"  # after income: pay 10 to seat a patrician from the pool
    TAX = "tax"  # end of round: pay the tax or lose reputation
    BARBARA_HOUSE = "barbara_house"  # St. Barbara 3: remove a house for +2 production
    BARBARA_PATRICIAN = "barbara_patrician"  # St. Barbara 6: seat a patrician from the bank
    SCORE_BUILDING = "score_building"  # St. Barbara 10: score one building's dots


@dataclass(frozen=True, slots=True)
class PlayCard:
    """Play action card ``card`` for ``action`` (one of its halves), or for no effect when ``None``."""

    card: int
    action: Action | None


@dataclass(frozen=True, slots=True)
class ChooseAction:
    """The Joker: take this action."""

    action: Action


@dataclass(frozen=True, slots=True)
class ChooseGuildSet:
    """Setup: take the guild set at this index of the guild setup card's row."""

    index: int


@dataclass(frozen=True, slots=True)
class ArrangeGuilds:
    """Setup: put these guilds on the board's rows, top to bottom."""

    guilds: tuple[Guild, Guild, Guild]


@dataclass(frozen=True, slots=True)
class ChooseTile:
    """Choose a tile: a drawn mine tile, a town-hall building, a building in your slots, or in the city."""

    tile: int


@dataclass(frozen=True, slots=True)
class ChooseSquare:
    """Choose a square (in the city or the mines, as the decision says)."""

    row: int
    col: int


@dataclass(frozen=True, slots=True)
class ChooseGuild:
    """Choose one of your guild rows."""

    guild: Guild


@dataclass(frozen=True, slots=True)
class ChoosePatrician:
    """Choose a patrician colour."""

    color: Color


@dataclass(frozen=True, slots=True)
class Confirm:
    """Yes or no: pay the tax, refill the miner pool."""

    yes: bool


@dataclass(frozen=True, slots=True)
class Skip:
    """Decline an optional effect: discard the drawn mine tiles, leave a reward, remove a tile."""


Option = (
    PlayCard
    | ChooseAction
    | ChooseGuildSet
    | ArrangeGuilds
    | ChooseTile
    | ChooseSquare
    | ChooseGuild
    | ChoosePatrician
    | Confirm
    | Skip
)

SKIP = Skip()

YES_NO = (Confirm(True), Confirm(False))
"""The options of a yes-or-no decision (REFILL_MINERS, TAX), yes first."""


@dataclass(frozen=True, slots=True)
class PendingDecision:
    """The one decision the game waits for: who owes it, what it asks, and every legal answer."""

    seat: int
    kind: DecisionKind
    options: tuple[Option, ...]


def option_text(option: Option) -> str:
    """The canonical short text of an option, e.g. ``play 2 mine`` or ``square 1,3``."""
    match option:
        case PlayCard(card=card, action=None):
            return f"play {card} none"
        case PlayCard(card=card, action=action):
            return f"play {card} {action}"
        case ChooseAction(action=action):
            return f"action {action}"
        case ChooseGuildSet(index=index):
            return f"set {index}"
        case ArrangeGuilds(guilds=guilds):
            return "rows " + ",".join(guilds)
        case ChooseTile(tile=tile):
            return f"tile {tile}"
        case ChooseSquare(row=row, col=col):
            return f"square {row},{col}"
        case ChooseGuild(guild=guild):
            return f"guild {guild}"
        case ChoosePatrician(color=color):
            return f"patrician {color}"
        case Confirm(yes=yes):
            return "yes" if yes else "no"
        case Skip():
            return "skip"
    raise TypeError(f"not an option: {option!r}")


def parse_option(text: str) -> Option:
    """Parse the canonical text form written by :func:`option_text`."""
    words = text.strip().split()
    if not words:
        raise ValueError("empty option text")
    head, rest = words[0], words[1:]
    try:
        match head, rest:
            case "play", [card, "none"]:
                return PlayCard(int(card), None)
            case "play", [card, action]:
                return PlayCard(int(card), Action(action))
            case "action", [action]:
                return ChooseAction(Action(action))
            case "set", [index]:
                return ChooseGuildSet(int(index))
            case "rows", [guilds]:
                a, b, c = (Guild(g) for g in guilds.split(","))
                return ArrangeGuilds((a, b, c))
            case "tile", [tile]:
                return ChooseTile(int(tile))
            case "square", [square]:
                row, col = square.split(",")
                return ChooseSquare(int(row), int(col))
            case "guild", [guild]:
                return ChooseGuild(Guild(guild))
            case "patrician", [color]:
                return ChoosePatrician(Color(color))
            case "yes", []:
                return Confirm(True)
            case "no", []:
                return Confirm(False)
            case "skip", []:
                return SKIP
    except ValueError as error:
        raise ValueError(f"cannot read option {text!r}: {error}") from None
    raise ValueError(f"cannot read option {text!r}")
