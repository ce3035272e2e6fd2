"""What one seat, or a spectator, may see of a game (docs/architecture.md#hidden-information).

An :class:`Observation` holds every public fact and the viewer's own private ones, and nothing else:
never the order of the mine stack or of any town-hall stack below its top tile, never the mine tiles
another seat is choosing from, never a face-down event, never the random generator. The legal options
of the pending decision go only to the seat that owes it.

The view types are named tuples: immutable, compared and hashed by value at C speed, so a server can
cache what it builds from each part of an observation by that part's value. An :class:`Observer`
observes one game again and again and rebuilds only the parts whose inputs changed, handing back the
very same part objects otherwise.
"""

from __future__ import annotations

from dataclasses import MISSING, fields
from operator import attrgetter
from typing import Any, NamedTuple

from kutnahora.engine.components import COMMODITIES, Arm, Color, Commodity, Deck, Guild, Square
from kutnahora.engine.economy import current_prices, income, no_market
from kutnahora.engine.mine import draws_per_mine_action
from kutnahora.engine.options import DecisionKind, Option
from kutnahora.engine.rounds import rounds_in_game, tax_due
from kutnahora.engine.state import GameState, PlayerState


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


class WorkStep(NamedTuple):
    """Work the engine still has to do in the current action or round end (public): a
    :class:`~kutnahora.engine.state.StepKind` value, the seat, and small int arguments."""

    kind: str
    seat: int
    args: tuple[int, ...]


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
    uses_events: bool  # whether the game uses event cards (two players always do)
    free_action: bool  # the action being resolved costs nothing (St. Barbara, a house reward)
    work: tuple[WorkStep, ...]  # the engine's work still to do, the next step last
    mine_reshuffles: int  # how often the mine discards became the stack; the tiers are mixed since
    mine_discard_seen: tuple[int, ...]  # tiles the viewer put on the discard pile since then, sorted


def _player_view(state: GameState, seat: int, prices: dict[Commodity, int]) -> PlayerView:
    p = state.players[seat]
    # Positional, in field order: a named tuple's keyword constructor costs several times more.
    return tuple.__new__(
        PlayerView,
        (
            seat,
            p.groschen,
            p.reputation,
            p.points,
            p.guild_set,
            p.guilds,
            tuple(p.production.items()),
            p.mine_ore,
            income(state, seat, prices),
            tax_due(state, seat),
            tuple(p.houses_removed),
            tuple(p.plots),
            tuple(p.slots),
            p.pelicans,
            p.pelicans_used,
            p.miners_pool,
            p.miners_reserve,
            tuple(p.hand),
            tuple(p.buildings),
        ),
    )


class _Market(NamedTuple):
    deck_positions: tuple[tuple[Deck, int], ...]
    arms: tuple[tuple[Arm, int], ...]
    prices: tuple[tuple[Commodity, int], ...]
    no_market: tuple[Commodity, ...]
    price_of: dict[Commodity, int]


class _Boards(NamedTuple):
    city: tuple[CityTileView, ...]
    plots: tuple[tuple[Square, int], ...]
    mines: tuple[MineView, ...]
    rocks: tuple[tuple[Square, int], ...]


def _market(state: GameState) -> _Market:
    prices = current_prices(state)
    return _Market(
        deck_positions=tuple((Deck(d), pos) for d, pos in state.deck_position.items()),
        arms=tuple(state.arms.items()),
        prices=tuple(prices.items()),
        no_market=tuple(c for c in COMMODITIES if no_market(state, c)),
        price_of=prices,
    )


def _town_hall(state: GameState) -> tuple[tuple[StackView, ...], ...]:
    return tuple(tuple(StackView(s.label, s.tiles[-1], len(s.tiles)) for s in row) for row in state.town_hall)


def _boards(state: GameState) -> _Boards:
    return _Boards(
        city=tuple(CityTileView(sq, t.building, t.owner) for sq, t in sorted(state.city.items())),
        plots=tuple(sorted(state.plots.items())),
        mines=tuple(MineView(sq, m.tile, m.owner) for sq, m in sorted(state.mines.items())),
        rocks=tuple(sorted(state.rocks.items())),
    )


def _assemble(
    state: GameState,
    viewer: int | None,
    market: _Market,
    town_hall: tuple[tuple[StackView, ...], ...],
    boards: _Boards,
    players: tuple[PlayerView, ...],
) -> Observation:
    """The observation from its separately built parts; the rest is read here."""
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
    agenda = state.agenda
    kept = state.kept_tile
    if kept is not None and not own and kept < len(state.components.mine_tiles):
        kept = None  # a mine tile being placed is public only once it is a technology tile
    # Positional, in field order: a named tuple's keyword constructor costs several times more.
    return tuple.__new__(
        Observation,
        (
            viewer,
            state.version,
            state.phase._value_,
            state.round,
            rounds_in_game(state),
            state.start_seat,
            min(state.turn_index // n, 2) + 1,
            state.cards_left_in_turn,
            market.deck_positions,
            market.arms,
            market.prices,
            market.no_market,
            state.tax,
            town_hall,
            len(state.red_stack),
            tuple(state.town_discards),
            boards.city,
            boards.plots,
            boards.mines,
            boards.rocks,
            len(state.mine_stack),
            len(state.mine_discard),
            state.technology_taken,
            draws_per_mine_action(state),
            state.barbara_next,
            tuple(state.patrician_bank.items()),
            tuple(state.patrician_pool.items()),
            tuple(state.council.items()),
            tuple([e for e in revealed if e is not None]),
            state.current_event() if revealed else None,
            state.guild_setup_card,
            state.mine_setup_card,
            tuple(state.guild_sets_left),
            state.building_in_hand,
            players,
            pending_view,
            tuple(state.drawn) if own else (),
            kept,
            state.over,
            tuple(map(_POINTS, state.players)),
            state.options.uses_events(),
            state.free_action,
            tuple([WorkStep(step.kind._value_, step.seat, step.args) for step in agenda]) if agenda else (),
            state.mine_reshuffles,
            tuple(sorted(state.mine_discards_seen[viewer])) if viewer is not None else (),
        ),
    )


def observe(state: GameState, viewer: int | None) -> Observation:
    """The observation for a seat, or for a spectator when ``viewer`` is None."""
    market = _market(state)
    players = tuple(_player_view(state, s, market.price_of) for s in range(len(state.players)))
    return _assemble(state, viewer, market, _town_hall(state), _boards(state), players)


_POINTS = attrgetter("points")

_PLAYER_FIELDS = attrgetter(*(f.name for f in fields(PlayerState)))
# The fields that hold lists or dicts (those made by a default factory); the others hold immutable values.
_PLAYER_CONTAINERS = tuple(i for i, f in enumerate(fields(PlayerState)) if f.default_factory is not MISSING)


def _frozen(values: tuple[Any, ...]) -> tuple[Any, ...]:
    """A copy of a player's field values that later changes to its lists and dicts cannot reach."""
    copied = list(values)
    for index in _PLAYER_CONTAINERS:
        copied[index] = copied[index].copy()
    return tuple(copied)


_HallKey = list[tuple[int, str, list[int]]]


def _copies(dicts: tuple[dict[Any, Any], ...]) -> tuple[dict[Any, Any], ...]:
    """Shallow copies of a part's input dicts, whose values are never changed in place."""
    return tuple([d.copy() for d in dicts])


def _copied_hall_key(key: _HallKey) -> _HallKey:
    """The town-hall stacks' row, label and tiles, with the tiles copied (they change in place)."""
    return [(row, label, tiles.copy()) for row, label, tiles in key]


class Observer:
    """Observes one game again and again, rebuilding only the parts of the view whose inputs changed.

    :func:`observe` builds every part of every observation. Between two versions of a game most parts
    are unchanged, so an observer keeps each part with a copy of what it was built from (a seat's whole
    :class:`~kutnahora.engine.state.PlayerState`, the decks and arms, the town-hall stacks, the boards) and
    builds it again only when that input no longer compares equal. Inputs are compared by value, so nothing
    depends on how the engine changed them, and an unchanged part is the very same object as before,
    which lets a caller cache what it derives from a part by identity. The result always equals
    :func:`observe` for the same state and viewer.
    """

    __slots__ = ("_boards", "_hall", "_market", "_players")

    def __init__(self) -> None:
        self._market: tuple[tuple[dict[Any, int], ...], _Market] | None = None
        self._hall: tuple[_HallKey, tuple[tuple[StackView, ...], ...]] | None = None
        self._boards: tuple[tuple[dict[Square, Any], ...], _Boards] | None = None
        self._players: dict[int, tuple[tuple[Any, ...], _Market, int, PlayerView]] = {}

    def observe(self, state: GameState, viewer: int | None) -> Observation:
        """What :func:`observe` returns for ``state`` and ``viewer``."""
        # The market's and the boards' dicts compared with copies: their values are ints and frozen tiles.
        market_now = (state.deck_position, state.arms)
        market_part = self._market
        if market_part is None or market_part[0] != market_now:
            market_part = self._market = (_copies(market_now), _market(state))
        market = market_part[1]
        hall_key = [(row, s.label, s.tiles) for row, stacks in enumerate(state.town_hall) for s in stacks]
        hall = self._hall
        if hall is None or hall[0] != hall_key or len(hall[1]) != len(state.town_hall):
            hall = self._hall = (_copied_hall_key(hall_key), _town_hall(state))
        boards_now = (state.plots, state.rocks, state.city, state.mines)
        boards = self._boards
        if boards is None or boards[0] != boards_now:
            boards = self._boards = (_copies(boards_now), _boards(state))

        players = []
        cached_players = self._players
        tax = state.tax
        for seat, player in enumerate(state.players):
            values = _PLAYER_FIELDS(player)
            cached = cached_players.get(seat)
            if cached is not None and cached[1] is market and cached[2] == tax and cached[0] == values:
                players.append(cached[3])
                continue
            view = _player_view(state, seat, market.price_of)
            cached_players[seat] = (_frozen(values), market, tax, view)
            players.append(view)
        return _assemble(state, viewer, market, hall[1], boards[1], tuple(players))
