"""The end of a round and the start of the next (000 · Round End Procedure, 001 · Setup for Next Round).

Order, after every seat's third turn: the round's event advances the decks; each seat, from the starting
player, pays the tax or loses reputation; patricians score in the final three rounds; then either the game
ends with the final scoring, or the red-patrician buildings may arrive, the starting player moves on, the
next event is revealed and everyone takes their cards back.
"""

from __future__ import annotations

from kutnahora.engine.components import Deck
from kutnahora.engine.economy import advance_deck, change_reputation, pay, raise_tax
from kutnahora.engine.events import Event
from kutnahora.engine.options import YES_NO, Confirm, DecisionKind, Option, PendingDecision
from kutnahora.engine.scoring import final_scoring, score_patricians
from kutnahora.engine.state import GameState, Phase, Step, StepKind, TownHallStack

PLOT_SURCHARGE = {0: 0, 1: 0, 2: 3, 3: 8}


def rounds_in_game(state: GameState) -> int:
    """5 rounds with four players, 6 with two or three."""
    return state.components.rounds_tracks[state.options.players].rounds


def begin_round_end(state: GameState) -> None:
    """Queue the round-end work once every seat has played its five cards."""
    state.phase = Phase.ROUND_END
    n = len(state.players)
    steps = [Step(StepKind.EVENT_ADVANCES, state.start_seat)]
    steps += [Step(StepKind.TAX, (state.start_seat + i) % n) for i in range(n)]
    steps.append(Step(StepKind.PATRICIAN_SCORING, state.start_seat))
    steps.append(Step(StepKind.NEXT_ROUND, state.start_seat))
    state.agenda.extend(reversed(steps))


def step_event_advances(state: GameState, step: Step, events: list[Event]) -> None:
    """The round's event advances the decks, before taxes."""
    event_id = state.current_event()
    if event_id is None:
        return
    card = state.components.event_cards[event_id]
    advance_deck(state, Deck.POPULATION, card.population, events)
    advance_deck(state, Deck.ORE, card.ore, events)


def tax_due(state: GameState, seat: int) -> int:
    """The tax counter plus the plot surcharge: +3 with two plot markers in town, +8 with three."""
    return state.tax + PLOT_SURCHARGE[len(state.players[seat].plots)]


def reputation_penalty(state: GameState) -> int:
    """The reputation a seat loses instead of paying this round's tax."""
    return state.components.rounds_tracks[state.options.players].reputation_penalty[state.round - 1]


def tax_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """TAX: pay it, or lose reputation."""
    return YES_NO


def step_tax(state: GameState, step: Step, events: list[Event]) -> None:
    """Pay the tax or lose reputation; a seat that cannot pay loses reputation (docs/rules.md#r9)."""
    seat = step.seat
    due = tax_due(state, seat)
    if state.players[seat].groschen >= due:
        state.pending = PendingDecision(seat, DecisionKind.TAX, tax_options(state, seat))
    else:
        events.append(Event("tax_unpaid", seat, f"seat {seat} cannot pay {due} groschen of tax"))
        change_reputation(state, seat, -reputation_penalty(state), events)


def resolve_tax(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to TAX."""
    if isinstance(option, Confirm) and option.yes:
        pay(state, seat, tax_due(state, seat), "taxes", events)
    else:
        events.append(Event("tax_refused", seat, f"seat {seat} does not pay the tax"))
        change_reputation(state, seat, -reputation_penalty(state), events)


def step_patrician_scoring(state: GameState, step: Step, events: list[Event]) -> None:
    """Patricians on the council score in each of the final three rounds (docs/rules.md#r8)."""
    if state.round > rounds_in_game(state) - 3:
        score_patricians(state, events)


def step_next_round(state: GameState, step: Step, events: list[Event]) -> None:
    """End the game after the last round, or set up the next one."""
    if state.round >= rounds_in_game(state):
        state.final_scores = final_scoring(state, events)
        state.phase = Phase.OVER
        events.append(Event("game_over", None, "the game is over"))
        return
    track = state.components.rounds_tracks[state.options.players]
    if state.round == track.red_arrival_round:
        red_arrival(state, events)
    n = len(state.players)
    state.round += 1
    state.start_seat = (state.start_seat + 1) % n
    state.turn_index = 0
    state.cards_left_in_turn = 2
    for player in state.players:
        player.hand = [card.number for card in state.components.action_cards]
    state.phase = Phase.TURNS
    events.append(Event("round_started", state.start_seat, f"round {state.round} begins"))
    reveal_event(state, events)


def red_arrival(state: GameState, events: list[Event]) -> None:
    """Shuffle the red-patrician buildings and put one at the end of each town-hall row (docs/rules.md#r7)."""
    tiles = list(state.red_stack)
    state.red_stack = []
    state.rng.shuffle(tiles)
    for row, tile in zip(state.town_hall, tiles, strict=False):
        row.append(TownHallStack("red", [tile]))
    events.append(Event("red_arrival", None, "the red-patrician buildings arrive at the town hall"))


def reveal_event(state: GameState, events: list[Event]) -> None:
    """Reveal the round's event; its tax is added at once (docs/rules.md#r11)."""
    event_id = state.current_event()
    if event_id is None:
        return
    card = state.components.event_cards[event_id]
    events.append(Event("event_revealed", None, f"event {card.name} is revealed"))
    raise_tax(state, card.tax, events)
