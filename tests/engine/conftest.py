"""Prepared positions for the rule-by-rule engine tests.

A test starts a game with :func:`started` (the guild draft answered with the first legal option), plays
canonical option texts with :func:`play`, and prepares a position by setting fields of the state directly
with the small helpers below. After preparing, :func:`repose` poses the pending PLAY_CARD decision again,
so that its options are worked out from the prepared position exactly as the engine would.
"""

from __future__ import annotations

from typing import Any

from kutnahora.engine import (
    GameOptions,
    apply,
    default_components,
    legal,
    new_game,
    option_text,
    parse_option,
)
from kutnahora.engine.components import Deck, Guild, Square
from kutnahora.engine.events import Event
from kutnahora.engine.flow import play_card_options, run
from kutnahora.engine.options import DecisionKind, PendingDecision
from kutnahora.engine.state import CityTile, GameState, MinePlacement, Phase


def named(name: str) -> int:
    """The id of the building of this name in the default component set."""
    return next(b.id for b in default_components().buildings if b.name == name)


def started(players: int = 4, seed: int = 1, **options: Any) -> GameState:
    """A new game whose guild draft is answered with the first legal option: round 1, seat 0 to play."""
    state = new_game(GameOptions(players=players, **options), seed)
    while state.phase is not Phase.TURNS:
        apply(state, legal(state)[0])
    return state


def play(state: GameState, *texts: str) -> list[Event]:
    """Apply options given in their canonical text form, in order; returns every event."""
    events: list[Event] = []
    for text in texts:
        events.extend(apply(state, parse_option(text)))
    return events


def texts(state: GameState) -> list[str]:
    """The pending decision's legal options as canonical texts."""
    return [option_text(o) for o in legal(state)]


def kind(state: GameState) -> DecisionKind:
    """What the pending decision asks for."""
    assert state.pending is not None
    return state.pending.kind


def repose(state: GameState, seat: int | None = None) -> None:
    """Pose PLAY_CARD again for ``seat`` (default: the seat already owing it) after preparing the state."""
    state.mine_costs_cache = None
    if seat is None:
        assert state.pending is not None and state.pending.kind is DecisionKind.PLAY_CARD
        seat = state.pending.seat
    state.pending = PendingDecision(seat, DecisionKind.PLAY_CARD, play_card_options(state, seat))


def run_on(state: GameState) -> list[Event]:
    """Drop the pending decision and let the engine pose the next one (valid between cards and turns)."""
    events: list[Event] = []
    state.pending = None
    state.mine_costs_cache = None
    run(state, events)
    return events


def finish_turns(state: GameState) -> list[Event]:
    """Play every remaining card of the round for no effect, up to the round end (its first decision,
    or the next round when the round end needs none)."""
    events: list[Event] = []
    round_number = state.round
    while state.phase is Phase.TURNS and state.round == round_number:
        assert state.pending is not None and state.pending.kind is DecisionKind.PLAY_CARD
        card = min(state.players[state.pending.seat].hand)
        events.extend(play(state, f"play {card} none"))
    return events


def set_guilds(state: GameState, seat: int, *guilds: Guild) -> None:
    """Give a seat these three guilds, on its board's rows top to bottom."""
    a, b, c = guilds
    state.players[seat].guild_set = (a, b, c)
    state.players[seat].guilds = (a, b, c)


def pull_tile(state: GameState, tile: int) -> None:
    """Remove a building tile from wherever it waits (a town-hall stack or the red stack)."""
    if tile in state.red_stack:
        state.red_stack.remove(tile)
        return
    for row in state.town_hall:
        for stack in row:
            if tile in stack.tiles:
                stack.tiles.remove(tile)
                if not stack.tiles:
                    row.remove(stack)
                return


def give_rights(state: GameState, seat: int, *tiles: int) -> None:
    """Put building tiles in a seat's slots, taken out of the town hall."""
    for tile in tiles:
        pull_tile(state, tile)
        state.players[seat].slots.append(tile)


def claim(state: GameState, seat: int, *squares: Square) -> None:
    """Put a seat's plot markers on city squares."""
    for square in squares:
        state.players[seat].plots.append(square)
        state.plots[square] = seat


def build(state: GameState, square: Square, tile: int, owner: int | None) -> None:
    """Stand a building in the city (owner None for a public building)."""
    pull_tile(state, tile)
    state.city[square] = CityTile(tile, owner)
    if owner is not None:
        state.players[owner].buildings.append(tile)


def dig(state: GameState, seat: int, square: Square, tile: int) -> None:
    """Stand a mine tile in the mines, marked with one of the seat's miners from the reserve."""
    if tile in state.mine_stack:
        state.mine_stack.remove(tile)
    state.mines[square] = MinePlacement(tile, seat)
    state.players[seat].mines.append(square)
    state.players[seat].miners_reserve -= 1
    state.mine_costs_cache = None


def stack_top(state: GameState, *tiles: int) -> None:
    """Put these mine tiles on top of the mine stack, the first one on the very top."""
    for tile in tiles:
        if tile in state.mine_stack:
            state.mine_stack.remove(tile)
    state.mine_stack.extend(reversed(tiles))


def set_deck(state: GameState, deck: Deck, position: int) -> None:
    """Put a price deck at a card position."""
    state.deck_position[deck] = position
