"""Prices and the dynamic economy (002 · Prices, 000 · Prices & A Dynamic Economy).

Reads prices off the two card stands, advances the decks (town builds, the turn-over, the deck limits),
moves indicator arms, and changes groschen, reputation, production and taxes. The rules of individual
actions live in their own modules and call these.
"""

from __future__ import annotations

from kutnahora.engine.components import (
    COMMODITIES,
    COMMODITY_ARM,
    COMMODITY_DECK,
    COMMODITY_GUILD,
    Arm,
    Commodity,
    Deck,
    PriceCard,
)
from kutnahora.engine.events import Event, plural
from kutnahora.engine.state import GameState, TownHallStack

REPUTATION_MIN = -5
REPUTATION_MAX = 9
POINTS_PER_STEP_BEYOND_TRACK = 2


def front_card(state: GameState, deck: Deck) -> PriceCard:
    """The card showing at the front of a deck."""
    return state.components.deck(deck).cards[state.deck_position[deck]]


def price(state: GameState, commodity: Commodity) -> int:
    """The current price of one unit of a commodity, in groschen."""
    card = front_card(state, COMMODITY_DECK[commodity])
    return card.prices[commodity][state.arms[COMMODITY_ARM[commodity]]]


def no_market(state: GameState, commodity: Commodity) -> bool:
    """A red X behind the commodity's price: nobody may build that guild's buildings (002 · No market)."""
    return commodity in front_card(state, COMMODITY_DECK[commodity]).red_x


def current_prices(state: GameState) -> dict[Commodity, int]:
    """Every commodity's current price."""
    components = state.components
    position = state.deck_position
    arms = state.arms
    prices: dict[Commodity, int] = {}
    for commodity in COMMODITIES:
        deck = COMMODITY_DECK[commodity]
        card = components.deck(deck).cards[position[deck]]
        prices[commodity] = card.prices[commodity][arms[COMMODITY_ARM[commodity]]]
    return prices


def income(state: GameState, seat: int, prices: dict[Commodity, int] | None = None) -> int:
    """A seat's income at current prices (``prices`` when already known): production times price."""
    if prices is None:
        prices = current_prices(state)
    player = state.players[seat]
    production = player.production
    total = sum(production[c] * prices[c] for c in COMMODITIES)
    return total + player.mine_ore * prices[Commodity.ORE]


def advance_deck(state: GameState, deck: Deck, amount: int, events: list[Event]) -> None:
    """Slide ``amount`` cards to the back, one at a time, resolving each new card's town-builds symbols.

    The turn-over card is part of the position sequence (19 is followed by 20); past the last card an
    advance does nothing (001 · Special Cases · Limits).
    """
    last = state.components.deck(deck).last
    for _ in range(amount):
        position = state.deck_position[deck]
        if position >= last:
            return
        state.deck_position[deck] = position + 1
        card = front_card(state, deck)
        events.append(Event("deck_advanced", None, f"{deck} deck advances to card {card.number}"))
        for commodity in card.town_builds:
            town_builds(state, commodity, events)


def move_arm(state: GameState, arm: Arm, events: list[Event]) -> None:
    """Move an indicator arm one notch right, unless it is already at its last notch."""
    if state.arms[arm] < state.components.arm_notches - 1:
        state.arms[arm] += 1
        events.append(Event("arm_moved", None, f"the {arm} arm moves to notch {state.arms[arm]}"))


def find_stack(state: GameState, label: str) -> tuple[int, int] | None:
    """Where the town-hall stack with this label stands: (row, column), or None when it is gone."""
    for row_index, row in enumerate(state.town_hall):
        for col_index, stack in enumerate(row):
            if stack.label == label:
                return row_index, col_index
    return None


def take_from_stack(state: GameState, row: int, col: int) -> int:
    """Take the top tile of a stack, move the stack to the end of its row; an empty stack leaves the row."""
    stack: TownHallStack = state.town_hall[row].pop(col)
    tile = stack.tiles.pop()
    if stack.tiles:
        state.town_hall[row].append(stack)
    return tile


def town_builds(state: GameState, commodity: Commodity, events: list[Event]) -> None:
    """The town builds (002 · The town builds): move the arm, discard the top tile of that guild's stack."""
    move_arm(state, COMMODITY_ARM[commodity], events)
    guild = COMMODITY_GUILD[commodity]
    where = find_stack(state, guild)
    if where is not None:
        tile = take_from_stack(state, *where)
        state.town_discards.append(tile)
        name = state.components.building(tile).name
        events.append(Event("town_built", None, f"the town builds {name} ({guild})"))
    else:
        events.append(Event("town_built", None, f"the town builds for {guild}, whose stack is gone"))


def change_reputation(state: GameState, seat: int, delta: int, events: list[Event]) -> None:
    """Move a reputation marker; each step beyond either end of the track is 2 points instead."""
    if delta == 0:
        return
    player = state.players[seat]
    target = player.reputation + delta
    beyond = 0
    if target > REPUTATION_MAX:
        beyond = target - REPUTATION_MAX
        target = REPUTATION_MAX
        player.points += POINTS_PER_STEP_BEYOND_TRACK * beyond
    elif target < REPUTATION_MIN:
        beyond = REPUTATION_MIN - target
        target = REPUTATION_MIN
        player.points -= POINTS_PER_STEP_BEYOND_TRACK * beyond
    player.reputation = target
    sign = "gains" if delta > 0 else "loses"
    text = f"seat {seat} {sign} {abs(delta)} reputation (now {target})"
    if beyond:
        won = "won" if delta > 0 else "lost"
        text += f", {POINTS_PER_STEP_BEYOND_TRACK * beyond} points {won} beyond the track"
    events.append(Event("reputation", seat, text))


def score(state: GameState, seat: int, points: int, why: str, events: list[Event]) -> None:
    """Add points to a seat's score."""
    if points:
        state.players[seat].points += points
        events.append(Event("points", seat, f"seat {seat} scores {plural(points, 'point')} ({why})"))


def pay(state: GameState, seat: int, amount: int, why: str, events: list[Event]) -> None:
    """Take groschen from a seat; callers have checked it can pay."""
    if amount:
        player = state.players[seat]
        assert player.groschen >= amount, "a cost was offered that the seat cannot pay"
        player.groschen -= amount
        events.append(Event("paid", seat, f"seat {seat} pays {amount} groschen for {why}"))


def raise_tax(state: GameState, amount: int, events: list[Event]) -> None:
    """Advance the tax counter, never beyond its limit (001 · Special Cases · Limits)."""
    new = min(state.components.tax_limit, state.tax + amount)
    if new != state.tax:
        state.tax = new
        events.append(Event("tax", None, f"the tax rises to {new}"))


def gain_production(
    state: GameState, seat: int, commodity: Commodity, amount: int, events: list[Event], *, mine: bool = False
) -> None:
    """Raise a seat's production. Ore production always advances the ore deck by the same amount."""
    if amount <= 0:
        return
    player = state.players[seat]
    if mine:
        player.mine_ore += amount
    else:
        player.production[commodity] += amount
    events.append(Event("production", seat, f"seat {seat} produces {amount} more {commodity}"))
    if commodity is Commodity.ORE:
        advance_deck(state, Deck.ORE, amount, events)
