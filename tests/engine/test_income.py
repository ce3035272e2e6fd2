"""The Income action and seating a patrician on the council."""

from __future__ import annotations

from kutnahora.engine.components import Color, Commodity, Deck
from kutnahora.engine.economy import income, price
from kutnahora.engine.options import DecisionKind
from tests.engine.conftest import kind, play, repose, set_deck, started, texts


def test_income_is_production_times_price() -> None:
    """003 · The Income action: add up all your production, each commodity at its current price, and take
    that many groschen; ore from buildings and from mines counts the same (004 · Miners guild)."""
    state = started(4)
    set_deck(state, Deck.POPULATION, 22)
    set_deck(state, Deck.ORE, 9)
    player = state.players[0]
    production = {
        Commodity.SILVER: 2,
        Commodity.ORE: 1,
        Commodity.WOOD: 3,
        Commodity.PERMITS: 1,
        Commodity.FOOD: 4,
        Commodity.BEER: 12,  # production can go past 10
    }
    player.production.update(production)
    player.mine_ore = 2
    expected = sum(amount * price(state, c) for c, amount in production.items())
    expected += 2 * price(state, Commodity.ORE)
    assert income(state, 0) == expected
    repose(state)
    play(state, "play 1 income")
    assert player.groschen == 40 + expected
    assert kind(state) is DecisionKind.PLAY_CARD  # no patrician in the pool: nothing to ask


def test_seat_a_patrician_for_ten_once() -> None:
    """003 · Adding a patrician to the council: after collecting, you may pay 10 groschen once to move one
    patrician from the pool to its scoring space."""
    state = started(4)
    state.patrician_pool[Color.GREEN] = 2
    state.patrician_pool[Color.RED] = 1
    state.patrician_bank[Color.GREEN] = 1
    state.patrician_bank[Color.RED] = 2
    play(state, "play 5 income")
    assert kind(state) is DecisionKind.SEAT_PATRICIAN
    assert texts(state) == ["patrician green", "patrician red", "skip"]
    play(state, "patrician green")
    assert state.players[0].groschen == 30
    assert state.patrician_pool[Color.GREEN] == 1 and state.council[Color.GREEN] == 1
    assert state.patrician_bank[Color.GREEN] == 1
    assert kind(state) is DecisionKind.PLAY_CARD  # only one per Income action
    assert state.pending is not None and state.pending.seat == 0


def test_seating_is_optional() -> None:
    """000 · Adding a Patrician to the Council: you *can* pay 10 groschen; you need not."""
    state = started(4)
    state.patrician_pool[Color.YELLOW] = 1
    play(state, "play 5 income", "skip")
    assert state.players[0].groschen == 40 and state.council[Color.YELLOW] == 0


def test_only_from_the_pool() -> None:
    """000 · Adding a Patrician to the Council: the patrician moves from the pool; a patrician still in
    the bank cannot be seated by an Income action."""
    state = started(4)
    assert state.patrician_bank[Color.SILVER] == 3
    play(state, "play 5 income")
    assert kind(state) is DecisionKind.PLAY_CARD
    assert sum(state.council.values()) == 0


def test_seating_needs_ten_groschen() -> None:
    """003 · Adding a patrician to the council: the seat costs 10 groschen."""
    state = started(4)
    state.patrician_pool[Color.SILVER] = 1
    state.players[0].groschen = 9
    repose(state)
    play(state, "play 5 income")
    assert kind(state) is DecisionKind.PLAY_CARD
    state.players[0].production[Commodity.FOOD] = 1
    repose(state)
    play(state, "play 1 income")
    assert state.players[0].groschen >= 10
    assert kind(state) is DecisionKind.SEAT_PATRICIAN  # income collected first, then the offer
