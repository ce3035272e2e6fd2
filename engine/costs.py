"""What an option costs: groschen (and the permits or wood they buy), reputation, points and pelicans.

A bot or a person choosing among the listed options needs each option's price. :func:`option_cost` gives
it as the engine charges it, for the pending decision of a state. The cost of an option is everything that
choosing it commits the seat to paying, now or in the decisions that follow it without a further choice:

* playing the Mine half (or the Joker as Mine) with an empty miner pool commits to the refill's permit
  (003 · The Mine action · step 1); the Joker costs 1 reputation below 6 (002 · Action cards);
  St. Barbara uses a pelican, and tiles 3 and 5 take 1 and 2 reputation (004 · The eleven tiles);
* a mine square costs its wood (003 · Where you can dig), a town-hall tile its column (1 groschen, or
  permits), a plot its groschen (003 · The Plot action), seating a patrician 10 groschen, the tax its due;
  refusing the tax costs the rounds track's reputation;
* a building costs its wood at today's wood price; it is paid when the tile is placed, so the tile
  and every square offered for it show the same cost.

A reputation loss past the bottom of the track is paid in points instead, 2 a step (docs/rules.md#r10). The
free actions of St. Barbara cost nothing. Other options cost nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from kutnahora.engine.barbara import REPUTATION_LOSS
from kutnahora.engine.components import Action, Commodity, Square
from kutnahora.engine.economy import POINTS_PER_STEP_BEYOND_TRACK, REPUTATION_MIN, price
from kutnahora.engine.flow import joker_cost
from kutnahora.engine.mine import mine_square_costs
from kutnahora.engine.options import (
    ChooseAction,
    ChoosePatrician,
    ChooseSquare,
    ChooseTile,
    Confirm,
    DecisionKind,
    Option,
    PendingDecision,
    PlayCard,
)
from kutnahora.engine.rounds import reputation_penalty, tax_due
from kutnahora.engine.state import GameState
from kutnahora.engine.town import column_cost, plot_costs


@dataclass(frozen=True, slots=True)
class Cost:
    """What an option costs one seat. ``groschen`` is the whole money price; ``permits`` and ``wood`` say
    how many of those it buys (their price is already in ``groschen``)."""

    groschen: int = 0
    permits: int = 0
    wood: int = 0
    reputation: int = 0
    points: int = 0
    pelicans: int = 0

    def __bool__(self) -> bool:
        return any((self.groschen, self.permits, self.wood, self.reputation, self.points, self.pelicans))


FREE = Cost()

PRICED_KINDS = frozenset(
    {
        DecisionKind.PLAY_CARD,
        DecisionKind.JOKER_ACTION,
        DecisionKind.REFILL_MINERS,
        DecisionKind.MINE_SQUARE,
        DecisionKind.RIGHTS_TILE,
        DecisionKind.PLOT_SQUARE,
        DecisionKind.BUILD_TILE,
        DecisionKind.BUILD_SQUARE,
        DecisionKind.SEAT_PATRICIAN,
        DecisionKind.TAX,
    }
)
"""The decision kinds with an option that may cost something (:func:`option_cost`); every option of any
other kind is free."""

_PAID_ACTIONS = (Action.MINE, Action.JOKER, Action.ST_BARBARA)


def reputation_cost(state: GameState, seat: int, loss: int) -> Cost:
    """Losing ``loss`` reputation: the steps left on the track, then 2 points a step beyond it."""
    if loss <= 0:
        return FREE
    on_track = max(0, min(loss, state.players[seat].reputation - REPUTATION_MIN))
    return Cost(reputation=on_track, points=POINTS_PER_STEP_BEYOND_TRACK * (loss - on_track))


def _permits(state: GameState, count: int) -> Cost:
    return Cost(groschen=count * price(state, Commodity.PERMITS), permits=count)


def _wood(state: GameState, count: int) -> Cost:
    return Cost(groschen=count * price(state, Commodity.WOOD), wood=count)


def action_cost(state: GameState, seat: int, action: Action) -> Cost:
    """What starting a paid action costs before any of its choices (the Joker's own price included)."""
    player = state.players[seat]
    match action:
        case Action.MINE:
            return _permits(state, 1) if player.miners_pool == 0 else FREE
        case Action.JOKER:
            return reputation_cost(state, seat, joker_cost(state, seat))
        case Action.ST_BARBARA:
            tiles = state.components.barbara_tiles
            loss = 0
            if state.barbara_next <= len(tiles):
                loss = REPUTATION_LOSS.get(tiles[state.barbara_next - 1].effect, 0)
            lost = reputation_cost(state, seat, loss)
            return Cost(reputation=lost.reputation, points=lost.points, pelicans=1)
    return FREE


def option_cost(state: GameState, option: Option, decision: PendingDecision | None = None) -> Cost:
    """What ``option`` of the pending decision (or of ``decision``) costs the seat that owes it."""
    pending = decision or state.pending
    if pending is None:
        return FREE
    seat, kind = pending.seat, pending.kind
    free = state.free_action
    match kind, option:
        case DecisionKind.PLAY_CARD, PlayCard(action=action) if action is not None:
            return action_cost(state, seat, action)
        case DecisionKind.JOKER_ACTION, ChooseAction(action=action):
            return action_cost(state, seat, action)
        case DecisionKind.REFILL_MINERS, Confirm(yes=True):
            return _permits(state, 1)
        case DecisionKind.MINE_SQUARE, ChooseSquare(row=row, col=col) if not free:
            return _wood(state, mine_square_costs(state)[(row, col)])
        case DecisionKind.RIGHTS_TILE, ChooseTile(tile=tile) if not free:
            return _rights_cost(state, tile)
        case DecisionKind.PLOT_SQUARE, ChooseSquare(row=row, col=col):
            return Cost(groschen=plot_costs(state, seat, free=free)[(row, col)])
        case DecisionKind.BUILD_TILE, ChooseTile(tile=tile) if not free:
            return _wood(state, state.components.building(tile).wood_cost)
        case DecisionKind.BUILD_SQUARE, ChooseSquare() if not free and state.building_in_hand is not None:
            return _wood(state, state.components.building(state.building_in_hand).wood_cost)
        case DecisionKind.SEAT_PATRICIAN, ChoosePatrician():
            return Cost(groschen=state.components.patrician_seat_cost)
        case DecisionKind.TAX, Confirm(yes=True):
            return Cost(groschen=tax_due(state, seat))
        case DecisionKind.TAX, Confirm(yes=False):
            return reputation_cost(state, seat, reputation_penalty(state))
    return FREE


def option_costs(state: GameState) -> tuple[Cost, ...]:
    """The cost of every legal option of the pending decision, in the order they are listed.

    The same as :func:`option_cost` for each option, with each decision's price table worked out once.
    """
    pending = state.pending
    if pending is None:
        return ()
    options = pending.options
    kind = pending.kind
    if kind not in PRICED_KINDS:
        return (FREE,) * len(options)
    if kind is DecisionKind.PLAY_CARD:  # the most frequent decision: only the paid actions are priced
        return _card_costs(state, pending.seat, options)
    if kind is DecisionKind.PLOT_SQUARE:
        table = plot_costs(state, pending.seat, free=state.free_action)
        by_groschen: dict[int, Cost] = {}
        return tuple(
            _cost_of(by_groschen, table[(o.row, o.col)], _groschen) if isinstance(o, ChooseSquare) else FREE
            for o in options
        )
    if kind is DecisionKind.MINE_SQUARE and not state.free_action:
        wood = mine_square_costs(state)
        by_wood: dict[int, Cost] = {}
        return tuple(
            _cost_of(by_wood, wood[(o.row, o.col)], partial(_wood, state))
            if isinstance(o, ChooseSquare)
            else FREE
            for o in options
        )
    if kind is DecisionKind.RIGHTS_TILE and not state.free_action:
        columns = {row[col].tiles[-1]: col for row in state.town_hall for col in range(len(row))}
        by_column = [_column_cost(state, col) for col in range(len(state.components.town_hall_costs))]
        return tuple(by_column[columns[o.tile]] if isinstance(o, ChooseTile) else FREE for o in options)
    return tuple(option_cost(state, option, pending) for option in options)


def _groschen(amount: int) -> Cost:
    return Cost(groschen=amount)


def _cost_of(known: dict[int, Cost], amount: int, make: Callable[[int], Cost]) -> Cost:
    """The cost of ``amount`` (made once per decision: equal prices share one value)."""
    cost = known.get(amount)
    if cost is None:
        cost = known[amount] = make(amount)
    return cost


def _card_costs(state: GameState, seat: int, options: tuple[Option, ...]) -> tuple[Cost, ...]:
    """The costs of a card play's options: each paid action (:func:`action_cost`) priced once, if listed."""
    priced: list[tuple[Action, Cost]] = []
    costs: list[Cost] = []
    for option in options:
        action = option.action if isinstance(option, PlayCard) else None
        if action is None or action not in _PAID_ACTIONS:
            costs.append(FREE)
            continue
        cost = next((known for paid, known in priced if paid is action), None)
        if cost is None:
            cost = action_cost(state, seat, action)
            priced.append((action, cost))
        costs.append(cost)
    return tuple(costs)


def mine_squares(state: GameState) -> list[tuple[Square, int]]:
    """Every square a new mine may use now with its wood cost, in row-major order."""
    return sorted(mine_square_costs(state).items())


def plot_squares(state: GameState, seat: int | None) -> list[tuple[Square, int]]:
    """Every square a Plot action may claim now with its cost in groschen for ``seat`` (None: before the
    reputation discount), in row-major order."""
    return sorted(plot_costs(state, seat, free=False).items())


def _column_cost(state: GameState, column: int) -> Cost:
    unit, amount = state.components.town_hall_costs[column]
    if unit == "groschen":
        return Cost(groschen=column_cost(state, column))
    return _permits(state, amount)


def _rights_cost(state: GameState, tile: int) -> Cost:
    for row in state.town_hall:
        for col, stack in enumerate(row):
            if stack.tiles[-1] == tile:
                return _column_cost(state, col)
    raise ValueError(f"tile {tile} is not on top of a town-hall stack")
