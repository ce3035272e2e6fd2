"""Observation vectors written straight from the engine's state, and kept up to date entry by entry.

:meth:`~kutnahora.learned.encoding.ObservationLayout.encode` turns an :class:`~kutnahora.engine.Observation`
into its vector. The adapters do not make that observation: a :class:`StateEncoder` writes, for a
:class:`~kutnahora.engine.GameState` and a viewer, exactly the vector
``layout.encode(observe(state, viewer), normalized)`` would give (the same entries, the same ``float32``
values, in both forms), reading the state directly and applying the rules of what a seat may see (the
mine tiles being chosen only to the seat that owes the decision, a mine tile being placed to others only
once it is a technology tile, a seat's own discards) as :func:`kutnahora.engine.observe` does.

It keeps one working vector per viewer and number of players and writes into it only what changed since
that viewer's last vector:

- the parts that read the same for every viewer are built once per change and copied in with one slice
  assignment: a seat's board (by its whole :class:`~kutnahora.engine.state.PlayerState`, the market and the
  tax, which its income and tax due come from) and the town hall (by each place's label, top tile and
  size);
- the market (by the decks and the arms), and the city and mines (by the plots, rocks, buildings and mine
  tiles), are written again for a viewer only when they changed since its vector last held them;
- the counters, the patricians and the one-hot entries of the small sections are written each time (a few
  dozen entries), and each set of flags (the town's discards, the events revealed, the guild sets left,
  the drawn tiles, the seat's own discards) only when it differs from what the vector holds.

Every comparison is by value against copies, never by identity, so one encoder may serve any states in
any order (the clones of a search, several games at once) and still give every vector exactly.

The working vectors are ``array('f')`` buffers (entries written from Python at the cost of a list's,
slices copied as memory), read through NumPy without a copy: :class:`StateEncoder` returns a new
``float32`` array, :class:`ListEncoder` (OpenSpiel's tensors, which are lists) keeps Python lists and
returns a copy. In the normalised form every number is scaled and clipped as it is written, rounded to
``float32`` as NumPy would, so neither form needs a pass over the whole vector.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from dataclasses import MISSING, fields
from itertools import count
from operator import attrgetter
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.engine import GameState
from kutnahora.engine.components import Arm, Color, Commodity, Deck, Guild
from kutnahora.engine.economy import current_prices, income, no_market
from kutnahora.engine.rounds import rounds_in_game, tax_due
from kutnahora.engine.state import Phase, PlayerState
from kutnahora.learned.encoding import (
    COUNTERS,
    KINDS,
    MAX_SEATS,
    PLAYER_COUNTS,
    SEAT_COUNTERS,
    STACK_LABELS,
    ObservationLayout,
)

_ARMS: tuple[Arm, ...] = tuple(Arm)
_COMMODITIES: tuple[Commodity, ...] = tuple(Commodity)
_COLORS: tuple[Color, ...] = tuple(Color)
_GUILDS: tuple[Guild, ...] = tuple(Guild)
_SETUP = (Phase.GUILD_SETS, Phase.GUILD_ROWS)
_SEAT_FIELDS = tuple(f for f in fields(PlayerState) if f.name not in ("seat", "mines"))
"""The fields of a :class:`~kutnahora.engine.state.PlayerState` a seat's block is written from."""
_NAMES = [f.name for f in _SEAT_FIELDS]
_PLAYER_FIELDS = attrgetter(*_NAMES)
_CONTAINERS = tuple(i for i, f in enumerate(_SEAT_FIELDS) if f.default_factory is not MISSING)
"""Those that hold lists or dicts (changed in place, so copied to be compared later)."""


def _frozen(values: tuple[Any, ...]) -> tuple[Any, ...]:
    copied = list(values)
    for index in _CONTAINERS:
        copied[index] = copied[index].copy()
    return tuple(copied)


class _Work:
    """One viewer's working vector, with the generation of each shared part it holds."""

    __slots__ = (
        "city",
        "counters",
        "flags",
        "hall",
        "market",
        "mines",
        "ones",
        "patricians",
        "seats",
        "store",
        "view",
    )

    def __init__(self, store: Any, view: npt.NDArray[np.float32] | None) -> None:
        self.store = store
        self.view = view
        self.market = -1
        self.hall = -1
        self.city = -1
        self.mines = -1
        self.seats = [-1] * MAX_SEATS
        self.ones: list[int] = []
        """The entries of the small sections set to 1 (one-hot entries), to be cleared when they change."""
        self.flags: list[Any] = [None] * 6
        """Per set of flags, the value the vector holds."""
        self.counters: tuple[int, ...] = ()
        """The counters the vector holds."""
        self.patricians: tuple[dict[Color, int], ...] = ()
        """Copies of the bank, pool and council the vector holds."""


class _Seat:
    """A seat's block, shared by every viewer, with what each of its parts was written from."""

    __slots__ = ("block", "gen", "income", "key", "market", "numbers", "tax")

    def __init__(self, block: Any) -> None:
        self.block = block
        self.key: tuple[Any, ...] = ()
        """A copy of the seat's :class:`~kutnahora.engine.state.PlayerState` fields the block holds."""
        self.market = -1
        self.tax = -1
        self.gen = -1
        self.numbers: tuple[int, ...] = ()
        self.income = 0


class _Shared:
    """A part that reads the same for every viewer: what it was built from, its generation, its entries."""

    __slots__ = ("block", "gen", "key")

    def __init__(self, key: Any, gen: int, block: Any) -> None:
        self.key = key
        self.gen = gen
        self.block = block


class _Encoder:
    """The encoder over one kind of working store; see the module's text."""

    def __init__(self, layout: ObservationLayout, normalized: bool = False) -> None:
        self.layout = layout
        self.normalized = normalized
        c = layout.components
        at = {s.name: s.start for s in layout.sections}
        self._at = at
        self._size = layout.size
        self._buildings = layout.buildings
        self._mine_tiles = len(c.mine_tiles)
        self._tiles = layout.mine_tiles
        self._card_index = {card.number: i for i, card in enumerate(c.action_cards)}
        self._event_index = {e.id: i for i, e in enumerate(c.event_cards)}
        self._label_index = {label: i for i, label in enumerate(STACK_LABELS)}
        self._guild_index = {g: i for i, g in enumerate(_GUILDS)}
        self._commodity_index = {commodity: i for i, commodity in enumerate(_COMMODITIES)}
        self._hall_cols = layout.hall_cols
        self._stack = 1 + len(STACK_LABELS) + 1 + layout.buildings
        self._hall_size = layout.section("town_hall").stop - at["town_hall"]
        self._city_cols = layout.city_cols
        self._square = 1 + MAX_SEATS + layout.buildings + MAX_SEATS + 1
        self._city_size = layout.section("city").stop - at["city"]
        self._mine_cols = layout.mine_cols
        self._mine_square = 1 + layout.mine_tiles + MAX_SEATS
        self._mines_size = layout.section("mines").stop - at["mines"]
        self._seat_size = layout.section("seat +0").stop - at["seat +0"]
        self._seat_at = [at[f"seat +{k}"] for k in range(MAX_SEATS)]
        self._usable = {
            n: [
                at["city"] + (r * self._city_cols + col) * self._square for r, col in c.board_for(n).squares()
            ]
            for n in PLAYER_COUNTS
        }
        scale, low = layout.scale.tolist(), layout.normalized_low.tolist()
        self._scales: Callable[[int, int], tuple[list[float], list[float]]] = lambda start, stop: (
            scale[start:stop],
            low[start:stop],
        )
        self._counter_scale = self._scales(at["counters"], at["counters"] + len(COUNTERS))
        self._market_size = len(Deck) + len(_ARMS) + len(_COMMODITIES)
        self._market_scale = self._scales(at["market.decks"], at["market.decks"] + self._market_size)
        self._patricians_scale = self._scales(at["patricians.bank"], at["patricians.bank"] + 3 * len(_COLORS))
        seat = at["seat +0"]
        self._seat_scale = self._scales(seat, seat + len(SEAT_COUNTERS))
        self._production = len(SEAT_COUNTERS) + 4 * len(_GUILDS)
        production = seat + self._production
        self._production_scale = self._scales(production, production + len(_COMMODITIES) + 3)
        sizes = at["town_hall"] + 1 + len(STACK_LABELS)
        scale, low = self._scales(sizes, sizes + 1)
        places = layout.hall_rows * layout.hall_cols
        self._hall_scale = (scale * places, low * places)
        """The scale of a stack's size, once per place (the sizes are written together)."""
        self._city_at = at["city"]
        self._mines_at = at["mines"]
        self._decks_at = at["market.decks"]
        self._hall_at = at["town_hall"]
        self._counters_at = at["counters"]
        self._patricians_at = at["patricians.bank"]
        self._players_at = at["players"] - 2
        self._phase_at = {phase: at["phase"] + i for i, phase in enumerate(Phase)}
        self._start_at = at["start_seat"]
        self._guild_card_at = at["setup.guild_card"] - 1
        self._mine_card_at = at["setup.mine_card"] - 1
        self._in_hand_at = at["building_in_hand"]
        self._event_at = at["events.current"]
        self._kind_at = {kind: at["pending.kind"] + i for i, kind in enumerate(KINDS)}
        self._owes_at = at["pending.seat"]
        self._kept_at = at["private.kept"]
        self._flag_sections = [
            (at[name], layout.section(name).stop - at[name])
            for name in (
                "town_discards",
                "events.revealed",
                "setup.guild_sets_left",
                "private.drawn",
                "private.discarded",
                "market.no_market",
            )
        ]
        self._options: object = None
        self._rounds_and_events = (0, False)
        """The rounds in the game and whether it uses events, read from the options (immutable) it was for."""
        self._draws = [1, *[tile.draws for tile in c.technology_tiles]]
        """Mine tiles drawn per Mine action, by the number of technology tiles taken."""
        self._zeros: dict[int, Any] = {}
        self._works: dict[tuple[int | None, int], _Work] = {}
        self._gens = count()
        self._market_key: tuple[dict[Any, int], dict[Any, int]] | None = None
        self._market = _Shared(None, -1, None)
        self._no_market: list[int] = []
        self._prices: dict[Commodity, int] = {}
        self._hall = _Shared(None, -1, None)
        self._city = _Shared(None, -1, None)
        self._mines = _Shared(None, -1, None)
        self._seats = [_Seat(self._store(self._seat_size)) for _ in range(MAX_SEATS)]
        names = _NAMES
        self._fields = tuple(
            names.index(name)
            for name in ("production", "houses_removed", "mine_ore", "guild_set", "guilds", "hand", "slots")
        )
        """Where the fields a seat's block is written from sit among a PlayerState's fields."""
        self._guild_set_at = len(SEAT_COUNTERS)
        self._guilds_at = self._guild_set_at + len(_GUILDS)
        self._hand_at = self._guilds_at + 3 * len(_GUILDS) + len(_COMMODITIES) + 3
        self._slots_at = self._hand_at + len(self._card_index)

    # --- what differs between the stores -----------------------------------------------------------------

    def _store(self, size: int) -> Any:
        """A new store of zeros."""
        raise NotImplementedError

    def _view(self, store: Any) -> npt.NDArray[np.float32] | None:
        return None

    def _numbers(self, values: Sequence[int], scale: tuple[list[float], list[float]]) -> Any:
        """The numbers as the store holds them: each as a float32, scaled and clipped when normalised."""
        raise NotImplementedError

    def _zero(self, size: int) -> Any:
        zeros = self._zeros.get(size)
        if zeros is None:
            zeros = self._zeros[size] = self._store(size)
        return zeros

    def _cleared(self, part: _Shared, size: int, pair: bool = False) -> Any:
        """The block of a shared part, zeroed to be written again (made once: a list is costly to make)."""
        block = part.block
        if block is None:
            return self._store(size)
        if pair:
            block = block[0]
        block[0:size] = self._zero(size)
        return block

    def _scaled(self, values: Sequence[int], scale: tuple[list[float], list[float]]) -> list[float]:
        return [min(max(v * f, low), 1.0) for v, f, low in zip(values, scale[0], scale[1], strict=False)]

    # --- the vector --------------------------------------------------------------------------------------

    def _work(self, state: GameState, viewer: int | None) -> _Work:
        """The viewer's working vector, brought up to date with ``state``."""
        players = state.players
        n = len(players)
        if viewer is not None and not 0 <= viewer < n:
            raise ValueError(f"seat must be 0..{n - 1}, not {viewer}")
        work = self._works.get((viewer, n))
        if work is None:
            store = self._store(self._size)
            work = self._works[(viewer, n)] = _Work(store, self._view(store))
        s = work.store
        rel = 0 if viewer is None else viewer

        # the market: decks, arms, prices, no-market flags
        deck_position, arms = state.deck_position, state.arms
        key = self._market_key
        if key is None or key[0] != deck_position or key[1] != arms:
            self._set_market(state)
        market = self._market
        if work.market != market.gen:
            work.market = market.gen
            s[self._decks_at : self._decks_at + self._market_size] = market.block
            self._flags(work, s, 5, self._no_market, self._no_market)

        # the town hall, shared by every viewer (a tile belongs to one stack's label, so the tiles tell it)
        hall = self._hall
        if hall.key != [[stack.tiles for stack in row] for row in state.town_hall]:
            hall = self._set_hall(state)
        if work.hall != hall.gen:
            work.hall = hall.gen
            s[self._hall_at : self._hall_at + self._hall_size] = hall.block

        # the city and the mines: the entries every viewer shares copied in, then the owners relative to it
        city = self._city
        if city.key != (n, state.plots, state.city):
            city = self._set_city(state, n)
        if work.city != city.gen:
            work.city = city.gen
            block, relative = city.block
            s[self._city_at : self._city_at + self._city_size] = block
            for base, seat in relative:
                s[base + (seat - rel) % n] = 1.0
        mines = self._mines
        if mines.key != (state.rocks, state.mines):
            mines = self._set_mines(state)
        if work.mines != mines.gen:
            work.mines = mines.gen
            block, relative = mines.block
            s[self._mines_at : self._mines_at + self._mines_size] = block
            for base, seat in relative:
                s[base + (seat - rel) % n] = 1.0

        # every seat's board, shared by every viewer, in the viewer's order
        tax = state.tax
        gen = market.gen
        held = work.seats
        seat_at, size = self._seat_at, self._seat_size
        for seat, part, values in zip(range(n), self._seats, map(_PLAYER_FIELDS, players), strict=False):
            if part.market != gen or part.tax != tax or part.key != values:
                self._set_seat(part, state, seat, values, gen, tax)
            slot = (seat - rel) % n
            if held[slot] != part.gen:
                held[slot] = part.gen
                base = seat_at[slot]
                s[base : base + size] = part.block

        # the counters and the patricians
        options = state.options
        if options is not self._options:
            self._options = options
            self._rounds_and_events = (rounds_in_game(state), options.uses_events())
        rounds, events = self._rounds_and_events
        counters = (
            state.round,
            rounds,
            3 if state.turn_index >= 2 * n else state.turn_index // n + 1,
            state.cards_left_in_turn,
            tax,
            len(state.red_stack),
            len(state.mine_stack),
            len(state.mine_discard),
            state.technology_taken,
            self._draws[state.technology_taken],
            state.barbara_next,
            state.phase is Phase.OVER,
            events,
            state.free_action,
            state.mine_reshuffles,
        )
        if counters != work.counters:
            work.counters = counters
            s[self._counters_at : self._counters_at + len(COUNTERS)] = self._numbers(
                counters, self._counter_scale
            )
        bank, pool, council = state.patrician_bank, state.patrician_pool, state.council
        if work.patricians != (bank, pool, council):
            work.patricians = (bank.copy(), pool.copy(), council.copy())
            s[self._patricians_at : self._patricians_at + 3 * len(_COLORS)] = self._numbers(
                [
                    *[bank.get(c, 0) for c in _COLORS],
                    *[pool.get(c, 0) for c in _COLORS],
                    *[council.get(c, 0) for c in _COLORS],
                ],
                self._patricians_scale,
            )

        # the one-hot entries of the small sections
        pending = state.pending
        own = pending is not None and viewer == pending.seat
        ones = [
            self._players_at + n,
            self._phase_at[state.phase],
            self._start_at + (state.start_seat - rel) % n,
            self._guild_card_at + state.guild_setup_card,
            self._mine_card_at + state.mine_setup_card,
        ]
        if state.building_in_hand is not None:
            ones.append(self._in_hand_at + state.building_in_hand)
        revealed = state.events[: state.round] if state.phase not in _SETUP else []
        if revealed:
            event = state.current_event()
            if event is not None:
                ones.append(self._event_at + self._event_index[event])
        if pending is not None:
            ones.append(self._kind_at[pending.kind])
            ones.append(self._owes_at + (pending.seat - rel) % n)
        placed = state.kept_tile
        if placed is not None and (own or placed >= self._mine_tiles):
            ones.append(self._kept_at + placed)
        if ones != work.ones:
            for index in work.ones:
                s[index] = 0.0
            for index in ones:
                s[index] = 1.0
            work.ones = ones

        # the sets of flags, written when they differ from what the vector holds
        flags = work.flags
        if flags[0] != state.town_discards:
            self._flags(work, s, 0, state.town_discards, state.town_discards)
        if flags[1] != revealed:
            event_index = self._event_index
            self._flags(work, s, 1, revealed, [event_index[e] for e in revealed if e is not None])
        if flags[2] != state.guild_sets_left:
            self._flags(work, s, 2, state.guild_sets_left, state.guild_sets_left)
        drawn = state.drawn if own else []
        if flags[3] != drawn:
            self._flags(work, s, 3, drawn, drawn)
        seen = state.mine_discards_seen[viewer] if viewer is not None else []
        if flags[4] != seen:
            self._flags(work, s, 4, seen, seen)
        return work

    def _flags(self, work: _Work, s: Any, which: int, value: list[Any], indexes: list[int]) -> None:
        """Write one set of flags: clear the section, set the entries of ``indexes``; it holds ``value``."""
        start, size = self._flag_sections[which]
        work.flags[which] = value.copy()
        s[start : start + size] = self._zero(size)
        for index in indexes:
            s[start + index] = 1.0

    # --- the shared parts ---------------------------------------------------------------------------------

    def _set_market(self, state: GameState) -> None:
        self._market_key = (state.deck_position.copy(), state.arms.copy())
        prices = self._prices = current_prices(state)
        decks = state.deck_position
        values = [
            decks.get(Deck.POPULATION, 0),
            decks.get(Deck.ORE, 0),
            *[state.arms.get(a, 0) for a in _ARMS],
            *[prices.get(c, 0) for c in _COMMODITIES],
        ]
        self._no_market = [self._commodity_index[c] for c in _COMMODITIES if no_market(state, c)]
        self._market = _Shared(None, next(self._gens), self._numbers(values, self._market_scale))

    def _set_hall(self, state: GameState) -> _Shared:
        block = self._cleared(self._hall, self._hall_size)
        labels = len(STACK_LABELS)
        places = [
            ((r * self._hall_cols + place) * self._stack, stack)
            for r, row in enumerate(state.town_hall)
            for place, stack in enumerate(row)
        ]
        sizes = self._numbers([len(stack.tiles) for _, stack in places], self._hall_scale)
        for (base, stack), size in zip(places, sizes, strict=True):
            block[base] = 1.0
            block[base + 1 + self._label_index[stack.label]] = 1.0
            block[base + 1 + labels] = size
            block[base + 2 + labels + stack.tiles[-1]] = 1.0
        key = [[stack.tiles.copy() for stack in row] for row in state.town_hall]
        self._hall = _Shared(key, next(self._gens), block)
        return self._hall

    def _set_seat(
        self, part: _Seat, state: GameState, seat: int, values: tuple[Any, ...], market: int, tax: int
    ) -> None:
        """Bring a seat's block up to date, writing only the entries of the fields that changed."""
        player = state.players[seat]
        block = part.block
        old = part.key
        fresh = not old
        production, removed, ore, guild_set, guilds, hand, slots = self._fields
        if fresh or part.market != market or old[production] != values[production] or old[ore] != values[ore]:
            part.income = income(state, seat, self._prices)
        numbers = (
            1,
            player.groschen,
            player.reputation,
            player.points,
            player.mine_ore,
            part.income,
            tax_due(state, seat),
            player.pelicans,
            player.pelicans_used,
            player.miners_pool,
            player.miners_reserve,
            len(player.plots),
            len(player.buildings),
        )
        if numbers != part.numbers:
            part.numbers = numbers
            block[0 : len(SEAT_COUNTERS)] = self._numbers(numbers, self._seat_scale)
        if fresh or old[production] != values[production] or old[removed] != values[removed]:
            produced = player.production
            block[self._production : self._production + len(_COMMODITIES) + 3] = self._numbers(
                [*[produced.get(c, 0) for c in _COMMODITIES], *player.houses_removed[:3]],
                self._production_scale,
            )
        guild = self._guild_index
        if fresh or old[guild_set] != values[guild_set]:
            start = self._guild_set_at
            block[start : start + len(guild)] = self._zero(len(guild))
            for g in player.guild_set:
                block[start + guild[g]] = 1.0
        if fresh or old[guilds] != values[guilds]:
            start = self._guilds_at
            block[start : start + 3 * len(guild)] = self._zero(3 * len(guild))
            for g in player.guilds:
                block[start + guild[g]] = 1.0
                start += len(guild)
        if fresh or old[hand] != values[hand]:
            start, card = self._hand_at, self._card_index
            block[start : start + len(card)] = self._zero(len(card))
            for c in player.hand:
                block[start + card[c]] = 1.0
        if fresh or old[slots] != values[slots]:
            start = self._slots_at
            block[start : start + self._buildings] = self._zero(self._buildings)
            for tile in player.slots:
                block[start + tile] = 1.0
        part.key = _frozen(values)
        part.market = market
        part.tax = tax
        part.gen = next(self._gens)

    def _set_city(self, state: GameState, n: int) -> _Shared:
        """The city's entries that read the same for every viewer, and the seats owning the others."""
        start, width, square, b = self._at["city"], self._city_cols, self._square, self._buildings
        block = self._cleared(self._city, self._city_size, True)
        relative: list[tuple[int, int]] = []
        for index in self._usable[n]:
            block[index - start] = 1.0
        for (row, col), seat in state.plots.items():
            relative.append((start + (row * width + col) * square + 1, seat))
        for (row, col), tile in state.city.items():
            base = (row * width + col) * square + 1 + MAX_SEATS
            block[base + tile.building] = 1.0
            if tile.owner is None:
                block[base + b + MAX_SEATS] = 1.0
            else:
                relative.append((start + base + b, tile.owner))
        key = (n, state.plots.copy(), state.city.copy())
        self._city = _Shared(key, next(self._gens), (block, relative))
        return self._city

    def _set_mines(self, state: GameState) -> _Shared:
        """The mines' entries that read the same for every viewer, and the seats owning the others."""
        start, width, square = self._at["mines"], self._mine_cols, self._mine_square
        block = self._cleared(self._mines, self._mines_size, True)
        relative: list[tuple[int, int]] = []
        for row, col in state.rocks:
            block[(row * width + col) * square] = 1.0
        owners = 1 + self._tiles
        for (row, col), placed in state.mines.items():
            base = (row * width + col) * square
            block[base + 1 + placed.tile] = 1.0
            relative.append((start + base + owners, placed.owner))
        self._mines = _Shared((state.rocks.copy(), state.mines.copy()), next(self._gens), (block, relative))
        return self._mines


class StateEncoder(_Encoder):
    """Observation vectors as NumPy ``float32`` arrays, written from the engine's state (module's text)."""

    def _store(self, size: int) -> array[float]:
        return array("f", bytes(4 * size))

    def _view(self, store: array[float]) -> npt.NDArray[np.float32]:
        return np.frombuffer(store, dtype=np.float32)

    def _numbers(self, values: Sequence[int], scale: tuple[list[float], list[float]]) -> array[float]:
        return array("f", self._scaled(values, scale) if self.normalized else values)

    def encode(
        self, state: GameState, viewer: int | None, out: npt.NDArray[np.float32] | None = None
    ) -> npt.NDArray[np.float32]:
        """``layout.encode(observe(state, viewer), normalized)``: a new array, or written into ``out``."""
        view = self._work(state, viewer).view
        assert view is not None
        if out is None:
            return view.copy()
        np.copyto(out, view)
        return out


class ListEncoder(_Encoder):
    """Observation vectors as Python lists of floats (OpenSpiel's tensors), written from the engine's state.

    A list's copy costs less than turning an array into a list, which makes a float object of every entry.
    """

    def _store(self, size: int) -> list[float]:
        # distinct zero objects: copying a list that holds one object many times is slower
        return array("f", bytes(4 * size)).tolist()

    def _numbers(self, values: Sequence[int], scale: tuple[list[float], list[float]]) -> list[float]:
        if self.normalized:  # rounded to float32, as NumPy's product would be
            return array("f", self._scaled(values, scale)).tolist()
        return list(map(float, values))  # integers: exact as floats

    def encode(self, state: GameState, viewer: int | None) -> list[float]:
        """``layout.encode(observe(state, viewer), normalized).tolist()``, as a new list."""
        store: list[float] = self._work(state, viewer).store
        return store.copy()
