"""What one seat, or a spectator, may see of a game (DESIGN · Hidden information).

An :class:`Observation` holds every public fact and the viewer's own private ones, and nothing else:
never the order of the mine stack or of any town-hall stack below its top tile, never the mine tiles
another seat is choosing from, never a face-down event, never the random generator. The legal options
of the pending decision go only to the seat that owes it.

The view types are named tuples: immutable, compared and hashed by value at C speed, so a server can
cache what it builds from each part of an observation by that part's value.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.components import COMMODITIES, Arm, Color, Commodity, Deck, Guild, Square
from engine.economy import current_prices, income, no_market
from engine.mine import draws_per_mine_action
from engine.options import DecisionKind, Option
from engine.rounds import rounds_in_game, tax_due
from engine.state import GameState


class PlayerView(NamedTuple):
    """One seat's board, all of it public."""

    seat: int
    groschen: int
    reputation: int
    points: int
    guild_set: tuple[Guild, ...]
    guilds: tuple[Guild, ...]
    production: tuple[tuple[Commodity, int], ...]
    mine_ore: int
    income: int
    tax_due: int
    houses_removed: tuple[int, ...]
    plots: tuple[Square, ...]
    slots: tuple[int, ...]
    pelicans: int
    pelicans_used: int
    miners_pool: int
    miners_reserve: int
    hand: tuple[int, ...]
    buildings: tuple[int, ...]


class StackView(NamedTuple):
    """A town-hall stack: its label, its visible top tile, and how many tiles it holds."""

    label: str
    top: int
    size: int


class CityTileView(NamedTuple):
    """A building in the city."""

    square: Square
    building: int
    owner: int | None


class MineView(NamedTuple):
    """A tile in the mines."""

    square: Square
    tile: int
    owner: int


class PendingView(NamedTuple):
    """The pending decision; ``options`` only for the seat that owes it."""

    seat: int
    kind: DecisionKind
    options: tuple[Option, ...]


class Observation(NamedTuple):
    """A game as ``viewer`` sees it (None: a spectator)."""

    viewer: int | None
    version: int
    phase: str
    round: int
    rounds: int
    start_seat: int
    turn: int  # 1..3 within the round
    cards_left_in_turn: int
    deck_positions: tuple[tuple[Deck, int], ...]
    arms: tuple[tuple[Arm, int], ...]
    prices: tuple[tuple[Commodity, int], ...]
    no_market: tuple[Commodity, ...]
    tax: int
    town_hall: tuple[tuple[StackView, ...], ...]
    red_stack_size: int
    town_discards: tuple[int, ...]  # buildings the town built, in order
    city: tuple[CityTileView, ...]
    plots: tuple[tuple[Square, int], ...]
    mines: tuple[MineView, ...]
    rocks: tuple[tuple[Square, int], ...]
    mine_stack_size: int
    mine_discard_size: int
    technology_taken: int
    mine_draws: int
    barbara_next: int
    patrician_bank: tuple[tuple[Color, int], ...]
    patrician_pool: tuple[tuple[Color, int], ...]
    council: tuple[tuple[Color, int], ...]
    revealed_events: tuple[int, ...]  # event card ids of the rounds so far, in round order
    current_event: int | None
    guild_setup_card: int
    mine_setup_card: int
    guild_sets_left: tuple[int, ...]
    building_in_hand: int | None
    players: tuple[PlayerView, ...]
    pending: PendingView | None
    drawn: tuple[int, ...]  # mine tiles the viewer is choosing from
    kept_tile: int | None  # the mine tile the viewer is placing
    over: bool
    scores: tuple[int, ...]


def _player_view(state: GameState, seat: int, prices: dict[Commodity, int]) -> PlayerView:
    p = state.players[seat]
    return PlayerView(
        seat=seat,
        groschen=p.groschen,
        reputation=p.reputation,
        points=p.points,
        guild_set=p.guild_set,
        guilds=p.guilds,
        production=tuple(p.production.items()),
        mine_ore=p.mine_ore,
        income=income(state, seat, prices),
        tax_due=tax_due(state, seat),
        houses_removed=tuple(p.houses_removed),
        plots=tuple(p.plots),
        slots=tuple(p.slots),
        pelicans=p.pelicans,
        pelicans_used=p.pelicans_used,
        miners_pool=p.miners_pool,
        miners_reserve=p.miners_reserve,
        hand=tuple(p.hand),
        buildings=tuple(p.buildings),
    )


def observe(state: GameState, viewer: int | None) -> Observation:
    """The observation for a seat, or for a spectator when ``viewer`` is None."""
    n = len(state.players)
    if viewer is not None and not 0 <= viewer < n:
        raise ValueError(f"seat must be 0..{n - 1}, not {viewer}")
    pending = state.pending
    own = pending is not None and viewer == pending.seat
    pending_view = (
        PendingView(pending.seat, pending.kind, pending.options if own else ())
        if pending is not None
        else None
    )
    revealed = state.events[: state.round] if state.phase not in ("guild_sets", "guild_rows") else []
    prices = current_prices(state)
    kept_is_public = state.kept_tile is not None and state.kept_tile >= len(state.components.mine_tiles)
    return Observation(
        viewer=viewer,
        version=state.version,
        phase=state.phase.value,
        round=state.round,
        rounds=rounds_in_game(state),
        start_seat=state.start_seat,
        turn=min(state.turn_index // n, 2) + 1,
        cards_left_in_turn=state.cards_left_in_turn,
        deck_positions=tuple((Deck(d), pos) for d, pos in state.deck_position.items()),
        arms=tuple(state.arms.items()),
        prices=tuple(prices.items()),
        no_market=tuple(c for c in COMMODITIES if no_market(state, c)),
        tax=state.tax,
        town_hall=tuple(
            tuple(StackView(s.label, s.tiles[-1], len(s.tiles)) for s in row) for row in state.town_hall
        ),
        red_stack_size=len(state.red_stack),
        town_discards=tuple(state.town_discards),
        city=tuple(CityTileView(sq, t.building, t.owner) for sq, t in sorted(state.city.items())),
        plots=tuple(sorted(state.plots.items())),
        mines=tuple(MineView(sq, m.tile, m.owner) for sq, m in sorted(state.mines.items())),
        rocks=tuple(sorted(state.rocks.items())),
        mine_stack_size=len(state.mine_stack),
        mine_discard_size=len(state.mine_discard),
        technology_taken=state.technology_taken,
        mine_draws=draws_per_mine_action(state),
        barbara_next=state.barbara_next,
        patrician_bank=tuple(state.patrician_bank.items()),
        patrician_pool=tuple(state.patrician_pool.items()),
        council=tuple(state.council.items()),
        revealed_events=tuple(e for e in revealed if e is not None),
        current_event=state.current_event() if revealed else None,
        guild_setup_card=state.guild_setup_card,
        mine_setup_card=state.mine_setup_card,
        guild_sets_left=tuple(state.guild_sets_left),
        building_in_hand=state.building_in_hand,
        players=tuple(_player_view(state, s, prices) for s in range(n)),
        pending=pending_view,
        drawn=tuple(state.drawn) if own else (),
        kept_tile=state.kept_tile if (own or kept_is_public) else None,
        over=state.over,
        scores=tuple(p.points for p in state.players),
    )
