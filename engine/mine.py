"""The mines: where a mine may go and what it costs, the Mine action, and mining technology.

Rules: 003 · The Mine action, 000 · The Mine Action, 001 · Rules Reminders and Special Cases (mining
regulations), 004 · Mining technology. Final scoring of mine rows lives in :mod:`kutnahora.engine.scoring`.
"""

from __future__ import annotations

from kutnahora.engine.components import Commodity, Deck, Square
from kutnahora.engine.economy import advance_deck, gain_production, pay, price, score
from kutnahora.engine.events import Event, plural
from kutnahora.engine.options import (
    SKIP,
    YES_NO,
    ChooseSquare,
    ChooseTile,
    Confirm,
    DecisionKind,
    Option,
    PendingDecision,
    Skip,
)
from kutnahora.engine.state import GameState, MinePlacement, Step, StepKind


def mine_square_costs(state: GameState) -> dict[Square, int]:
    """Every square a new mine may use, with its wood cost (003 · Where you can dig).

    An entrance costs the entrance cost; an empty square beside or below a mine costs the highest wood
    cost among those mines. A mine does not open or price the square above it; rocks open nothing.
    """
    cached = state.mine_costs_cache
    if cached is not None and cached[0] == len(state.mines):
        return cached[1]
    area = state.components.mine_area
    costs: dict[Square, int] = {}
    for square in area.entrances:
        if square not in state.mines and square not in state.rocks:
            costs[square] = area.entrance_cost
    for (row, col), placed in state.mines.items():
        wood = state.components.mine_tile(placed.tile).wood_cost
        for other in ((row, col - 1), (row, col + 1), (row + 1, col)):
            r, c = other
            if not (0 <= r < area.rows and 0 <= c < area.columns):
                continue
            if other in state.mines or other in state.rocks:
                continue
            if costs.get(other, -1) < wood:
                costs[other] = wood
    state.mine_costs_cache = (len(state.mines), costs)
    return costs


def draws_per_mine_action(state: GameState) -> int:
    """How many tiles a Mine action draws at the current mining-technology level."""
    if state.technology_taken == 0:
        return 1
    return state.components.technology_tiles[state.technology_taken - 1].draws


def can_refill(state: GameState, seat: int) -> bool:
    """Whether a Mine action's first step can refill the pool: room in it, a miner waiting, a permit paid."""
    player = state.players[seat]
    return (
        player.miners_pool < state.components.miner_pool_size
        and player.miners_reserve > 0
        and player.groschen >= price(state, Commodity.PERMITS)
    )


def mine_feasible(state: GameState, seat: int, *, free: bool) -> bool:
    """Whether a Mine action can have an effect.

    A paid Mine action may be taken only to refill the pool, or to draw and discard every drawn tile
    (001 · Special Cases · Mining regulations), so it is offered whenever the seat can refill the pool, or
    has a miner in it and a tile to draw, whether or not a square is affordable. The free one
    (St. Barbara 9) needs a miner anywhere on the board, a tile and an open square.
    """
    player = state.players[seat]
    tiles = bool(state.mine_stack or state.mine_discard)
    if free:
        return tiles and bool(mine_square_costs(state)) and player.miners_pool + player.miners_reserve > 0
    return can_refill(state, seat) or (tiles and player.miners_pool > 0)


def refill_pool(state: GameState, seat: int, events: list[Event]) -> None:
    """Pay one permit to fill the miner pool from the reserve (003 · The Mine action · step 1)."""
    player = state.players[seat]
    pay(state, seat, price(state, Commodity.PERMITS), "a permit for miners", events)
    moved = min(state.components.miner_pool_size - player.miners_pool, player.miners_reserve)
    player.miners_pool += moved
    player.miners_reserve -= moved
    events.append(Event("miners", seat, f"seat {seat} moves {plural(moved, 'miner')} into the pool"))


def step_mine(state: GameState, step: Step, events: list[Event]) -> None:
    """Start a Mine action: refill the pool when it must or may be, then draw."""
    free = bool(step.args[0])
    seat = step.seat
    player = state.players[seat]
    if free and not mine_feasible(state, seat, free=True):
        # St. Barbara 9 with no miner (or no tile, or no square) left: no effect (001 · Special Cases)
        events.append(Event("no_effect", seat, f"seat {seat} can open no mine"))
        return
    state.agenda.append(Step(StepKind.MINE_DRAW, seat, (int(free),)))
    if free:
        return
    if player.miners_pool == 0:
        refill_pool(state, seat, events)
    elif can_refill(state, seat):
        state.pending = PendingDecision(seat, DecisionKind.REFILL_MINERS, refill_options(state, seat))


def refill_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """REFILL_MINERS: refill the pool from the reserve first, or not."""
    return YES_NO


def mine_tile_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """MINE_TILE: keep one of the drawn tiles (if some square is affordable), or discard them all."""
    options: list[Option] = []
    if _affordable_squares(state, seat, free=state.free_action):
        options.extend(ChooseTile(t) for t in sorted(state.drawn))
    options.append(SKIP)
    return tuple(options)


def mine_square_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """MINE_SQUARE: every square the kept tile may go on that the seat can pay for."""
    return tuple(ChooseSquare(r, c) for r, c in _affordable_squares(state, seat, free=state.free_action))


def tech_square_options(state: GameState, seat: int) -> tuple[Option, ...]:
    """TECH_SQUARE: every open square for the technology tile, or none."""
    return (*(ChooseSquare(r, c) for r, c in sorted(mine_square_costs(state))), SKIP)


def resolve_refill(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to REFILL_MINERS."""
    if isinstance(option, Confirm) and option.yes:
        refill_pool(state, seat, events)


def _affordable_squares(state: GameState, seat: int, *, free: bool) -> list[Square]:
    wood = 0 if free else price(state, Commodity.WOOD)
    budget = state.players[seat].groschen
    return sorted(sq for sq, cost in mine_square_costs(state).items() if cost * wood <= budget)


def step_mine_draw(state: GameState, step: Step, events: list[Event]) -> None:
    """Draw as many tiles as the technology level shows; the seat keeps one or discards them all."""
    free = bool(step.args[0])
    drawn: list[int] = []
    for _ in range(draws_per_mine_action(state)):
        if not state.mine_stack:
            if not state.mine_discard:
                break
            state.mine_stack = state.mine_discard
            state.mine_discard = []
            state.mine_reshuffles += 1
            for seen in state.mine_discards_seen:
                seen.clear()
            state.rng.shuffle(state.mine_stack)
            events.append(Event("mine_reshuffled", None, "the mine discards are shuffled into a new stack"))
        drawn.append(state.mine_stack.pop())
    state.drawn = drawn
    state.free_action = free
    events.append(Event("mine_drawn", step.seat, f"seat {step.seat} draws {plural(len(drawn), 'mine tile')}"))
    state.pending = PendingDecision(step.seat, DecisionKind.MINE_TILE, mine_tile_options(state, step.seat))


def resolve_mine_tile(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to MINE_TILE: keep one tile (the rest are discarded) or discard them all."""
    kept = option.tile if isinstance(option, ChooseTile) else None
    discarded = [t for t in state.drawn if t != kept]
    state.mine_discard.extend(discarded)
    state.mine_discards_seen[seat].extend(discarded)
    state.drawn = []
    if discarded:
        events.append(
            Event("mine_discarded", seat, f"seat {seat} discards {plural(len(discarded), 'mine tile')}")
        )
    if kept is None:
        return
    state.kept_tile = kept
    state.pending = PendingDecision(seat, DecisionKind.MINE_SQUARE, mine_square_options(state, seat))


def place_mine(
    state: GameState, seat: int, square: Square, *, from_reserve: bool, events: list[Event]
) -> None:
    """Put the kept tile on a square, mark it with a miner, and evaluate it (003 · Evaluating a mine)."""
    tile_id = state.kept_tile
    assert tile_id is not None
    state.kept_tile = None
    player = state.players[seat]
    if from_reserve and player.miners_reserve > 0:
        player.miners_reserve -= 1
    else:
        player.miners_pool -= 1
    state.mines[square] = MinePlacement(tile_id, seat)
    player.mines.append(square)
    tile = state.components.mine_tile(tile_id)
    events.append(
        Event("mine_placed", seat, f"seat {seat} opens mine tile {tile_id} at {square[0]},{square[1]}")
    )
    gain_production(state, seat, Commodity.ORE, tile.ore, events, mine=True)
    advance_deck(state, Deck.POPULATION, tile.population, events)
    score(state, seat, tile.points, "a mine", events)


def resolve_mine_square(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to MINE_SQUARE: pay the wood and place the mine."""
    assert isinstance(option, ChooseSquare)
    square = (option.row, option.col)
    if not state.free_action:
        cost = mine_square_costs(state)[square] * price(state, Commodity.WOOD)
        pay(state, seat, cost, "wood for a mine", events)
    place_mine(state, seat, square, from_reserve=state.free_action, events=events)


def step_technology(state: GameState, step: Step, events: list[Event]) -> None:
    """Take the top mining-technology tile and play it as a free mine (004 · Mining technology)."""
    seat = step.seat
    player = state.players[seat]
    if state.technology_taken >= len(state.components.technology_tiles):
        events.append(Event("technology", seat, "no mining-technology tile is left"))
        return
    tile = state.components.technology_tiles[state.technology_taken]
    state.technology_taken += 1
    level = state.technology_taken
    if player.miners_pool + player.miners_reserve == 0:
        # docs/rules.md#r4: the tile needs no miner, since it may always be removed from the game instead
        events.append(
            Event(
                "technology",
                seat,
                f"seat {seat} takes mining technology {level} and, with no miner left, removes the tile "
                "from the game",
            )
        )
        return
    events.append(Event("technology", seat, f"seat {seat} takes mining technology {level}"))
    options = tech_square_options(state, seat)
    if len(options) == 1:
        events.append(Event("technology", seat, "no square is open: the tile leaves the game"))
        return
    state.kept_tile = tile.id
    state.pending = PendingDecision(seat, DecisionKind.TECH_SQUARE, options)


def resolve_tech_square(state: GameState, seat: int, option: Option, events: list[Event]) -> None:
    """Answer to TECH_SQUARE: place the technology tile for free, or remove it from the game."""
    if isinstance(option, Skip):
        state.kept_tile = None
        events.append(Event("technology", seat, f"seat {seat} removes the technology tile from the game"))
        return
    assert isinstance(option, ChooseSquare)
    place_mine(state, seat, (option.row, option.col), from_reserve=True, events=events)
