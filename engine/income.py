"""The Income action and seating a patrician on the council (003 · The Income action)."""

from __future__ import annotations

from kutnahora.engine.economy import income, pay
from kutnahora.engine.events import Event
from kutnahora.engine.options import SKIP, ChoosePatrician, DecisionKind, Option, PendingDecision
from kutnahora.engine.state import GameState, Step


def step_income(state: GameState, step: Step, events: list[Event]) -> None:
    """Collect production at current prices, then offer to seat one patrician from the pool for 10."""
    seat = step.seat
    player = state.players[seat]
    gained = income(state, seat)
    player.groschen += gained
    events.append(Event("income", seat, f"seat {seat} collects {gained} groschen"))
    cost = state.components.patrician_seat_cost
    if player.groschen >= cost:
        options = seat_patrician_options(state, seat)
        if len(options) > 1:
            state.pending = PendingDecision(seat, DecisionKind.SEAT_PATRICIAN, options)


def seat_patrician_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """SEAT_PATRICIAN: a patrician of each colour in the pool, or none."""
    return (*(ChoosePatrician(c) for c, count in state.patrician_pool.items() if count > 0), SKIP)


def resolve_seat_patrician(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to SEAT_PATRICIAN: pay 10 and move the patrician from the pool to the council."""
    if not isinstance(option, ChoosePatrician):
        return
    pay(state, seat, state.components.patrician_seat_cost, "a seat on the council", events)
    state.patrician_pool[option.color] -= 1
    state.council[option.color] += 1
    events.append(Event("council", seat, f"seat {seat} seats a {option.color} patrician on the council"))
