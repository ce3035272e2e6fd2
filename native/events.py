"""The native core's events as the engine's :class:`~kutnahora.engine.events.Event` values.

The core records what happened as small int records (``EventKind`` in ``native/core/src/rules.hpp`` and
a few ints); this module writes each as the engine's event: the same kind, seat and sentence.
"""

from __future__ import annotations

from collections.abc import Callable

from kutnahora.engine.components import Arm, ComponentSet, Deck
from kutnahora.engine.events import Event, action_words, article, plural
from kutnahora.native.tables import ACTIONS, COLORS, COMMODITIES, GUILDS

DECKS = (Deck.POPULATION, Deck.ORE)
ARMS: tuple[Arm, ...] = tuple(Arm)
REWARD_WORDS = ("a free public building", "a pelican", "reputation", "points")  # by HouseRewardKind
PAID_FOR = (
    "a permit for miners",
    "wood for a mine",
    "building rights",
    "a plot",
    "",  # wood for a building, named
    "a seat on the council",
    "taxes",
)
NOTHING = ("can open no mine", "can take no building tile", "can claim no plot", "can build nothing")
Record = tuple[int, int, int, int, int, int]
Renderer = Callable[[ComponentSet, int, int, int, int, int], tuple[str, str]]


def _name(components: ComponentSet, tile: int) -> str:
    return components.building(tile).name


def _reputation(c: ComponentSet, seat: int, delta: int, target: int, beyond: int, _d: int) -> tuple[str, str]:
    sign = "gains" if delta > 0 else "loses"
    text = f"seat {seat} {sign} {abs(delta)} reputation (now {target})"
    if beyond:
        won = "won" if delta > 0 else "lost"
        text += f", {2 * beyond} points {won} beyond the track"
    return "reputation", text


def _points(c: ComponentSet, seat: int, points: int, why: int, tile: int, _d: int) -> tuple[str, str]:
    reasons = {0: "a mine", 2: "St. Barbara", 3: "a house"}
    if why == 1:
        reason = _name(c, tile)
    elif why == 4:
        reason = f"{plural(points, 'matching dot')} of {_name(c, tile)}, St. Barbara 10"
    else:
        reason = reasons[why]
    return "points", f"seat {seat} scores {plural(points, 'point')} ({reason})"


def _paid(c: ComponentSet, seat: int, amount: int, why: int, tile: int, _d: int) -> tuple[str, str]:
    reason = f"wood for {_name(c, tile)}" if why == 4 else PAID_FOR[why]
    return "paid", f"seat {seat} pays {amount} groschen for {reason}"


def _technology(c: ComponentSet, seat: int, variant: int, level: int, _c: int, _d: int) -> tuple[str, str]:
    texts = (
        "no mining-technology tile is left",
        f"seat {seat} takes mining technology {level} and, with no miner left, removes the tile "
        "from the game",
        f"seat {seat} takes mining technology {level}",
        "no square is open: the tile leaves the game",
        f"seat {seat} removes the technology tile from the game",
    )
    return "technology", texts[variant]


def _card(c: ComponentSet, seat: int, card: int, action: int, _c: int, _d: int) -> tuple[str, str]:
    if action < 0:
        return "card_played", f"seat {seat} plays card {card} for no effect"
    return "card_played", f"seat {seat} plays card {card} for {action_words(ACTIONS[action])}"


def _patricians(c: ComponentSet, seat: int, *gained: int) -> tuple[str, str]:
    detail = ", ".join(f"{color} {points}" for color, points in zip(COLORS, gained, strict=True) if points)
    return "patrician_scoring", f"seat {seat} scores {plural(sum(gained), 'point')} ({detail})"


def _st_barbara(c: ComponentSet, seat: int, index: int, _b: int, _c: int, _d: int) -> tuple[str, str]:
    if index < 0:
        return "st_barbara", f"seat {seat} honours St. Barbara after the last tile"
    return "st_barbara", f"seat {seat} takes St. Barbara tile {c.barbara_tiles[index].number}"


def _council(c: ComponentSet, seat: int, color: int, bank: int, _c: int, _d: int) -> tuple[str, str]:
    where = "from the bank" if bank else "on the council"
    return "council", f"seat {seat} seats a {COLORS[color]} patrician {where}"


RENDERERS: tuple[Renderer, ...] = (
    _card,
    lambda c, s, a, b, x, y: ("joker", f"seat {s} uses the Joker for {action_words(ACTIONS[a])}"),
    lambda c, s, a, b, x, y: (
        "guild_set",
        f"seat {s} takes the guilds {GUILDS[a]}, {GUILDS[b]}, {GUILDS[x]}",
    ),
    lambda c, s, a, b, x, y: (
        "guild_rows",
        f"seat {s} places its guilds: {GUILDS[a]}, {GUILDS[b]}, {GUILDS[x]}",
    ),
    lambda c, s, a, b, x, y: ("round_started", f"round {a} begins"),
    lambda c, s, a, b, x, y: (
        "deck_advanced",
        f"{DECKS[a]} deck advances to card {c.deck(DECKS[a]).cards[b].number}",
    ),
    lambda c, s, a, b, x, y: ("arm_moved", f"the {ARMS[a]} arm moves to notch {b}"),
    lambda c, s, a, b, x, y: ("town_built", f"the town builds {_name(c, a)} ({GUILDS[b]})"),
    lambda c, s, a, b, x, y: ("town_built", f"the town builds for {GUILDS[a]}, whose stack is gone"),
    _reputation,
    _points,
    _paid,
    lambda c, s, a, b, x, y: ("tax", f"the tax rises to {a}"),
    lambda c, s, a, b, x, y: ("production", f"seat {s} produces {a} more {COMMODITIES[b]}"),
    lambda c, s, a, b, x, y: ("miners", f"seat {s} moves {plural(a, 'miner')} into the pool"),
    lambda c, s, a, b, x, y: ("no_effect", f"seat {s} {NOTHING[a]}"),
    lambda c, s, a, b, x, y: ("mine_reshuffled", "the mine discards are shuffled into a new stack"),
    lambda c, s, a, b, x, y: ("mine_drawn", f"seat {s} draws {plural(a, 'mine tile')}"),
    lambda c, s, a, b, x, y: ("mine_discarded", f"seat {s} discards {plural(a, 'mine tile')}"),
    lambda c, s, a, b, x, y: ("mine_placed", f"seat {s} opens mine tile {a} at {b},{x}"),
    _technology,
    lambda c, s, a, b, x, y: ("rights", f"seat {s} takes the rights to {_name(c, a)}"),
    lambda c, s, a, b, x, y: ("plot", f"seat {s} claims the plot at {a},{b}"),
    lambda c, s, a, b, x, y: ("built", f"seat {s} builds {_name(c, a)} at {b},{x}"),
    lambda c, s, a, b, x, y: ("pelicans", f"seat {s} takes {plural(a, 'pelican token')}"),
    lambda c, s, a, b, x, y: ("patrician", f"a {COLORS[a]} patrician joins the pool"),
    lambda c, s, a, b, x, y: (
        "barbara_flipped",
        f"St. Barbara tile {c.barbara_tiles[a].number} is flipped unused",
    ),
    lambda c, s, a, b, x, y: ("house_removed", f"seat {s} removes {article(GUILDS[a])} house"),
    lambda c, s, a, b, x, y: (
        "house",
        f"seat {s} places {article(GUILDS[a])} house; its space shows {REWARD_WORDS[b]}",
    ),
    lambda c, s, a, b, x, y: ("income", f"seat {s} collects {a} groschen"),
    _council,
    _st_barbara,
    lambda c, s, a, b, x, y: ("tax_unpaid", f"seat {s} cannot pay {a} groschen of tax"),
    lambda c, s, a, b, x, y: ("tax_refused", f"seat {s} does not pay the tax"),
    lambda c, s, a, b, x, y: ("game_over", "the game is over"),
    lambda c, s, a, b, x, y: ("red_arrival", "the red-patrician buildings arrive at the town hall"),
    lambda c, s, a, b, x, y: ("event_revealed", f"event {c.event_cards[a].name} is revealed"),
    _patricians,
    lambda c, s, a, b, x, y: (
        "final_scoring",
        f"seat {s} scores {plural(a, 'point')} at the end, {b} in all",
    ),
)


def event_of(components: ComponentSet, record: Record) -> Event:
    """The engine's event for one of the core's records."""
    kind, seat, a, b, c, d = record
    name, text = RENDERERS[kind](components, seat, a, b, c, d)
    return Event(name, None if seat < 0 else seat, text)
