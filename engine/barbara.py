"""The St. Barbara action and its eleven tiles (003 · The St. Barbara action, 004 · The eleven tiles).

The tile in use is turned as its action begins, so a guild building built during tile 8's free Building
action flips the next tile, not the one being resolved. A tile's middle effect may be declined (its
decision lists a skip); the reputation loss of tiles 3 and 5 may not (docs/rules.md#r12).
"""

from __future__ import annotations

from kutnahora.engine.components import GUILD_COMMODITY, BarbaraEffect
from kutnahora.engine.economy import change_reputation, gain_production, score
from kutnahora.engine.events import Event, plural
from kutnahora.engine.geometry import matching_dots, owned_squares, public_neighbours
from kutnahora.engine.options import (
    SKIP,
    ChooseGuild,
    ChoosePatrician,
    ChooseTile,
    DecisionKind,
    Option,
    PendingDecision,
)
from kutnahora.engine.state import GameState, Step, StepKind
from kutnahora.engine.town import removable_rows, remove_house

REPUTATION_AFTER_LAST_TILE = 2
HOUSE_PRODUCTION_BONUS = 2
REPUTATION_LOSS = {BarbaraEffect.HOUSE_FOR_PRODUCTION: 1, BarbaraEffect.DOUBLE_INCOME: 2}
"""The tiles whose reputation loss cannot be declined (docs/rules.md#r12)."""


def st_barbara_feasible(state: GameState, seat: int) -> bool:
    """The action needs an unused pelican token."""
    return state.players[seat].pelicans > 0


def step_st_barbara(state: GameState, step: Step, events: list[Event]) -> None:
    """Use a pelican, then resolve the current tile and turn it."""
    seat = step.seat
    player = state.players[seat]
    player.pelicans -= 1
    player.pelicans_used += 1
    tiles = state.components.barbara_tiles
    if state.barbara_next > len(tiles):
        events.append(Event("st_barbara", seat, f"seat {seat} honours St. Barbara after the last tile"))
        change_reputation(state, seat, REPUTATION_AFTER_LAST_TILE, events)
        return
    tile = tiles[state.barbara_next - 1]
    state.barbara_next += 1
    events.append(Event("st_barbara", seat, f"seat {seat} takes St. Barbara tile {tile.number}"))
    match tile.effect:
        case BarbaraEffect.REPUTATION:
            change_reputation(state, seat, 2, events)
        case BarbaraEffect.FREE_RIGHTS:
            change_reputation(state, seat, 1, events)
            state.agenda.append(Step(StepKind.RIGHTS, seat, (1,)))
        case BarbaraEffect.HOUSE_FOR_PRODUCTION:
            change_reputation(state, seat, -REPUTATION_LOSS[tile.effect], events)
            options = barbara_house_options(state, seat)
            if len(options) > 1:
                state.pending = PendingDecision(seat, DecisionKind.BARBARA_HOUSE, options)
        case BarbaraEffect.FREE_PLOT:
            change_reputation(state, seat, 1, events)
            state.agenda.append(Step(StepKind.PLOT, seat, (1,)))
        case BarbaraEffect.DOUBLE_INCOME:
            change_reputation(state, seat, -REPUTATION_LOSS[tile.effect], events)
            state.agenda.append(Step(StepKind.INCOME, seat))
            state.agenda.append(Step(StepKind.INCOME, seat))
        case BarbaraEffect.SEAT_FROM_BANK:
            score(state, seat, 2, "St. Barbara", events)
            seat_options = barbara_patrician_options(state, seat)
            if len(seat_options) > 1:
                state.pending = PendingDecision(seat, DecisionKind.BARBARA_PATRICIAN, seat_options)
        case BarbaraEffect.PUBLIC_NEIGHBOURS:
            gained = sum(public_neighbours(state, sq) for sq in owned_squares(state, seat))
            change_reputation(state, seat, gained, events)
        case BarbaraEffect.FREE_BUILDING:
            score(state, seat, 1, "St. Barbara", events)
            state.agenda.append(Step(StepKind.BUILDING, seat, (1,)))
        case BarbaraEffect.DOUBLE_MINE:
            state.agenda.append(Step(StepKind.MINE, seat, (1,)))
            state.agenda.append(Step(StepKind.MINE, seat, (1,)))
        case BarbaraEffect.SCORE_BUILDING:
            building_options = score_building_options(state, seat)
            if len(building_options) > 1:
                state.pending = PendingDecision(seat, DecisionKind.SCORE_BUILDING, building_options)
        case BarbaraEffect.FINAL:
            score(state, seat, 5, "St. Barbara", events)


def barbara_house_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """BARBARA_HOUSE (tile 3): a guild row to remove a house from, or none."""
    return (*(ChooseGuild(g) for g in removable_rows(state, seat)), SKIP)


def barbara_patrician_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """BARBARA_PATRICIAN (tile 6): a patrician of each colour in the bank, or none."""
    return (*(ChoosePatrician(c) for c, count in state.patrician_bank.items() if count > 0), SKIP)


def score_building_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """SCORE_BUILDING (tile 11): one of the seat's buildings, or none."""
    return (*(ChooseTile(state.city[sq].building) for sq in owned_squares(state, seat)), SKIP)


def resolve_barbara_house(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Tile 3: remove the leftmost house of a guild (no reward) and raise its production by 2."""
    if not isinstance(option, ChooseGuild):
        return
    player = state.players[seat]
    remove_house(state, seat, player.guilds.index(option.guild), events)

    gain_production(state, seat, GUILD_COMMODITY[option.guild], HOUSE_PRODUCTION_BONUS, events)


def resolve_barbara_patrician(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Tile 6: seat a patrician straight from the bank."""
    if not isinstance(option, ChoosePatrician):
        return
    state.patrician_bank[option.color] -= 1
    state.council[option.color] += 1
    events.append(Event("council", seat, f"seat {seat} seats a {option.color} patrician from the bank"))


def resolve_score_building(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Tile 10: score one of the seat's buildings as final scoring would."""
    if not isinstance(option, ChooseTile):
        return
    square = next(sq for sq, t in state.city.items() if t.building == option.tile)
    dots = matching_dots(state, square)
    name = state.components.building(option.tile).name
    score(state, seat, dots, f"{plural(dots, 'matching dot')} of {name}, St. Barbara 10", events)
