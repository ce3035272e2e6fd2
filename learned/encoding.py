"""A seat's observation as a fixed-size vector of numbers (numpy ``float32``), and its layout.

The vector is built from :func:`kutnahora.engine.observe` for one seat, so it holds exactly what that seat
may see and nothing hidden (no stack order, no other seat's drawn mine tiles, no face-down event). Its
length depends only on the component set, not on the number of players: games of 2, 3 and 4 players share
one layout, and seats absent from a smaller game are zeros.

Seats are **relative to the viewer**: "seat +0" is the viewer itself, "seat +1" the next seat in turn
order, and so on (a spectator's observation, which holds nothing private, is written relative to seat 0).
In the **raw** form (the default) numbers are the game's own integers (groschen, points, reputation,
sizes), not scaled, declared within [−1024, 1024]; one-hot blocks and flags are 0 or 1.
:meth:`ObservationLayout.sections` lists every slice with its meaning, and ``python -m kutnahora.envs``
prints the table for the default component set.

The **normalised** form (``encode(observation, normalized=True)``) divides every number by a fixed scale
and clips it: each of :data:`COUNTERS` by :data:`COUNTER_SCALES`, each of :data:`SEAT_COUNTERS` by
:data:`SEAT_SCALES`, and the rest by :data:`SCALES` (deck positions by 30, arm notches by 5, prices by 10,
a town-hall stack's size by 5, patricians by 5, a seat's production and houses removed by 5). Flags and
one-hot entries are unchanged. Every entry lies in [0, 1], except a seat's reputation and points, which
may be negative and lie in [−1, 1] (:data:`SIGNED`); :meth:`ObservationLayout.bounds` gives each form's
bounds entry by entry. The scales sit above what games reach (a number past one is clipped to 1).

The sections, in order:

- ``players`` one-hot of 2, 3, 4 players; ``phase`` one-hot (guild sets, guild rows, turns, round end,
  over); ``counters``: round, rounds in the game, turn (1–3), cards left in the turn, tax, red stack
  size, mine stack size, mine discard size, technology tiles taken, mine tiles drawn per Mine action,
  the next St. Barbara tile, game over, events in use, the action in progress is free, how often the
  mine discards were reshuffled; ``start_seat`` one-hot (relative).
- ``market``: deck positions (population, ore), arm notches (five arms), current prices and
  no-market flags (six commodities, in ``Commodity`` order).
- ``town_hall``: for every place of the town hall (row × column): present, the stack's label one-hot
  (six guilds then four colours), its size, and its visible top building one-hot.
- ``town_discards`` and ``building_in_hand``: flags and one-hot over building ids.
- ``city``: for every square of the largest city board (row-major): usable on this board, plot
  owner one-hot (relative seat), a building one-hot over building ids, and its owner one-hot (relative
  seat, then "public").
- ``mines``: for every square of the mine area: rock, the tile one-hot over mine and technology tile
  ids, its owner one-hot (relative seat).
- ``patricians``: bank, pool and council counts per colour.
- ``events``: the revealed event cards (flags) and the current round's event (one-hot).
- ``setup``: the guild setup card and mine setup card (one-hot by their number, 1 first), the
  guild sets still on offer (flags by index).
- ``pending``: the pending decision's kind one-hot and the seat that owes it (relative one-hot).
- ``private``: the mine tiles the viewer is choosing from (flags), the mine tile being placed (one-hot;
  another seat's only once it is a technology tile), and the mine tiles the viewer itself put on the
  discard pile since it was last reshuffled (flags).
- ``seat +0`` … ``seat +3``: present, groschen, reputation, points, mine ore, income, tax due, pelicans,
  pelicans used, miners in the pool, miners in reserve, plots claimed, buildings owned; the guild set
  (flags over ``Guild``), the guild on each of the three rows (one-hot each), production per commodity,
  houses removed per row, the action cards in hand (flags by card), the building tiles in the slots
  (flags over building ids).
"""

from __future__ import annotations

import argparse
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.engine import Observation, default_components
from kutnahora.engine.components import Arm, Color, Commodity, ComponentSet, Deck, Guild
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import Phase
from kutnahora.engine.view import CityTileView, MineView, PlayerView, StackView

MAX_SEATS = 4
PLAYER_COUNTS = (2, 3, 4)
PHASES: tuple[str, ...] = tuple(p.value for p in Phase)
KINDS: tuple[DecisionKind, ...] = tuple(DecisionKind)
COUNTERS = (
    "round",
    "rounds in the game",
    "turn",
    "cards left in the turn",
    "tax",
    "red stack size",
    "mine stack size",
    "mine discard size",
    "technology tiles taken",
    "mine tiles drawn per Mine action",
    "next St. Barbara tile",
    "game over",
    "events in use",
    "free action",
    "mine reshuffles",
)
SEAT_COUNTERS = (
    "present",
    "groschen",
    "reputation",
    "points",
    "mine ore",
    "income",
    "tax due",
    "pelicans",
    "pelicans used",
    "miners in the pool",
    "miners in reserve",
    "plots claimed",
    "buildings owned",
)
STACK_LABELS: tuple[str, ...] = tuple(g.value for g in Guild) + tuple(c.value for c in Color)
_ARMS: tuple[Arm, ...] = tuple(Arm)
_COMMODITIES: tuple[Commodity, ...] = tuple(Commodity)
_COLORS: tuple[Color, ...] = tuple(Color)
LOW, HIGH = -1024.0, 1024.0
"""Bounds of every entry of the raw form (the game's numbers stay far inside them)."""
COUNTER_SCALES = (8, 8, 3, 5, 10, 10, 40, 40, 10, 5, 10, 1, 1, 1, 5)
"""The normalised form divides each of :data:`COUNTERS` by this number."""
SEAT_SCALES = (1, 200, 10, 100, 20, 50, 20, 5, 5, 10, 10, 20, 20)
"""The normalised form divides each of :data:`SEAT_COUNTERS` by this number."""
SIGNED = ("reputation", "points")
"""The seat counters that may be negative: their normalised form lies in [−1, 1], every other in [0, 1]."""
SCALES = {
    "market.decks": 30,
    "market.arms": 5,
    "market.prices": 10,
    "town_hall (stack size)": 5,
    "patricians (bank, pool, council)": 5,
    "seat production": 5,
    "seat houses removed": 5,
}
"""The divisors of the other numbers of the normalised form."""


@dataclass(frozen=True, slots=True)
class Section:
    """One slice of the vector: ``vector[start:stop]`` holds ``meaning``."""

    name: str
    start: int
    stop: int
    meaning: str


class ObservationLayout:
    """The layout of the observation vector for one component set, and the encoder that fills it."""

    def __init__(self, components: ComponentSet | None = None) -> None:
        c = components or default_components()
        self.components = c
        self.buildings = len(c.buildings)
        self.mine_tiles = len(c.mine_tiles) + len(c.technology_tiles)
        self.cards = len(c.action_cards)
        self._card_index = {card.number: i for i, card in enumerate(c.action_cards)}
        self._event_index = {e.id: i for i, e in enumerate(c.event_cards)}
        self.hall_rows = len(c.town_hall_rows)
        self.hall_cols = len(c.town_hall_costs)
        boards = list(c.city_boards.values())
        self.city_rows = max(b.rows for b in boards)
        self.city_cols = max(b.columns for b in boards)
        self.mine_rows = c.mine_area.rows
        self.mine_cols = c.mine_area.columns
        self.guild_sets = max(len(row) for card in c.guild_setup_cards for row in card.rows.values())
        self._label_index = {label: i for i, label in enumerate(STACK_LABELS)}
        self._guild_index = {g: i for i, g in enumerate(Guild)}
        self._commodity_index = {commodity: i for i, commodity in enumerate(Commodity)}
        self._phase_index = {phase: i for i, phase in enumerate(PHASES)}
        self._kind_index = {kind: i for i, kind in enumerate(KINDS)}
        self._work: dict[tuple[int, int], _Work] = {}
        self._blocks: dict[object, tuple[Any, npt.NDArray[np.float32]]] = {}

        sections: list[Section] = []
        at = 0

        def add(name: str, size: int, meaning: str) -> int:
            nonlocal at
            sections.append(Section(name, at, at + size, meaning))
            at += size
            return at - size

        b, t = self.buildings, self.mine_tiles
        self._players = add("players", 3, "one-hot: 2, 3, 4 players")
        self._phase = add("phase", len(PHASES), "one-hot: " + ", ".join(PHASES))
        self._counters = add("counters", len(COUNTERS), ", ".join(COUNTERS))
        self._start_seat = add("start_seat", MAX_SEATS, "one-hot: the starting seat, relative")
        self._decks = add("market.decks", 2, "deck positions: population, ore")
        self._arms = add("market.arms", len(Arm), "arm notches: " + ", ".join(Arm))
        self._prices = add("market.prices", len(Commodity), "prices: " + ", ".join(Commodity))
        self._no_market = add("market.no_market", len(Commodity), "flags: no market for the commodity")
        self._stack = 1 + len(STACK_LABELS) + 1 + b
        self._hall = add(
            "town_hall",
            self.hall_rows * self.hall_cols * self._stack,
            f"per place (row × column, {self.hall_rows}×{self.hall_cols}): present, label one-hot "
            f"({len(STACK_LABELS)}), size, top building one-hot ({b})",
        )
        self._discards = add("town_discards", b, "flags: buildings the town built")
        self._in_hand = add("building_in_hand", b, "one-hot: the building being built")
        self._square = 1 + MAX_SEATS + b + MAX_SEATS + 1
        self._city = add(
            "city",
            self.city_rows * self.city_cols * self._square,
            f"per square ({self.city_rows}×{self.city_cols}): usable, plot owner one-hot (relative), "
            f"building one-hot ({b}), building owner one-hot (relative seats, then public)",
        )
        self._mine_square = 1 + t + MAX_SEATS
        self._mines = add(
            "mines",
            self.mine_rows * self.mine_cols * self._mine_square,
            f"per square ({self.mine_rows}×{self.mine_cols}): rock, tile one-hot ({t}), owner one-hot "
            "(relative)",
        )
        self._bank = add("patricians.bank", len(Color), "patricians in the bank: " + ", ".join(Color))
        self._pool = add("patricians.pool", len(Color), "patricians in the pool")
        self._council = add("patricians.council", len(Color), "patricians on the council")
        self._revealed = add("events.revealed", len(c.event_cards), "flags: event cards revealed so far")
        self._event = add("events.current", len(c.event_cards), "one-hot: this round's event card")
        self._guild_card = add("setup.guild_card", len(c.guild_setup_cards), "one-hot: guild setup card")
        self._mine_card = add("setup.mine_card", len(c.mine_setup_cards), "one-hot: mine setup card")
        self._sets_left = add("setup.guild_sets_left", self.guild_sets, "flags: guild sets still on offer")
        self._kind = add("pending.kind", len(KINDS), "one-hot: " + ", ".join(KINDS))
        self._owes = add("pending.seat", MAX_SEATS, "one-hot: the seat that owes the decision, relative")
        self._drawn = add("private.drawn", t, "flags: mine tiles the viewer is choosing from")
        self._kept = add(
            "private.kept",
            t,
            "one-hot: the mine tile being placed (by the viewer; by another seat only a technology tile)",
        )
        self._seen = add("private.discarded", t, "flags: mine tiles the viewer put on the discard pile")
        self._seat = len(SEAT_COUNTERS) + len(Guild) + 3 * len(Guild) + len(Commodity) + 3 + self.cards + b
        self._seats = []
        for k in range(MAX_SEATS):
            self._seats.append(
                add(
                    f"seat +{k}",
                    self._seat,
                    ", ".join(SEAT_COUNTERS) + f"; guild set flags ({len(Guild)}); guild per row one-hot "
                    f"(3×{len(Guild)}); production ({len(Commodity)}); houses removed per row (3); "
                    f"cards in hand ({self.cards}); buildings in the slots ({b})",
                )
            )
        self.size = at
        """The length of the vector."""
        self._numbers: list[int] = list(
            [
                *range(self._counters, self._counters + len(COUNTERS)),
                self._decks,
                self._decks + 1,
                *range(self._arms, self._arms + len(_ARMS)),
                *range(self._prices, self._prices + len(_COMMODITIES)),
                *range(self._bank, self._bank + len(_COLORS)),
                *range(self._pool, self._pool + len(_COLORS)),
                *range(self._council, self._council + len(_COLORS)),
            ]
        )
        """Where the numbers of the small sections go, in the order :meth:`_small_parts` gives them."""
        self.sections: tuple[Section, ...] = tuple(sections)
        self._usable = {
            n: [
                (r * self.city_cols + col) * (1 + MAX_SEATS + len(c.buildings) + MAX_SEATS + 1) + self._city
                for r, col in c.board_for(n).squares()
            ]
            for n in PLAYER_COUNTS
        }
        """Per number of players, the "usable" flags of the city squares on its board."""
        production = len(SEAT_COUNTERS) + 4 * len(Guild)
        numbers = [
            *range(len(SEAT_COUNTERS)),
            *range(production, production + len(_COMMODITIES) + 3),
        ]
        self._seat_numbers = numbers
        """Where a seat block's numbers go in it: its counters, production and houses removed."""
        self._hall_end = self.section("town_hall").stop
        self._city_end = self.section("city").stop
        self._mines_end = self.section("mines").stop
        self.scale, self.normalized_low = self._scales()
        """Per entry, the factor of the normalised form and its lowest value (0, or −1 where signed)."""

    def _scales(self) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The factor of every entry in the normalised form (1 for flags), and every entry's lowest value."""
        divisor = np.ones(self.size, dtype=np.float64)
        low = np.zeros(self.size, dtype=np.float32)
        divisor[self._counters : self._counters + len(COUNTERS)] = COUNTER_SCALES
        divisor[self._decks : self._decks + 2] = SCALES["market.decks"]
        divisor[self._arms : self._arms + len(_ARMS)] = SCALES["market.arms"]
        divisor[self._prices : self._prices + len(_COMMODITIES)] = SCALES["market.prices"]
        sizes = self._hall + 1 + len(STACK_LABELS)
        divisor[sizes : self._hall_end : self._stack] = SCALES["town_hall (stack size)"]
        divisor[self._bank : self._council + len(_COLORS)] = SCALES["patricians (bank, pool, council)"]
        production = len(SEAT_COUNTERS) + 4 * len(Guild)
        for base in self._seats:
            divisor[base : base + len(SEAT_COUNTERS)] = SEAT_SCALES
            for name in SIGNED:
                low[base + SEAT_COUNTERS.index(name)] = -1.0
            divisor[base + production : base + production + len(_COMMODITIES)] = SCALES["seat production"]
            removed = base + production + len(_COMMODITIES)
            divisor[removed : removed + 3] = SCALES["seat houses removed"]
        return (1.0 / divisor).astype(np.float32), low

    def section(self, name: str) -> Section:
        """A section by name."""
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(f"no section {name!r}")

    def encode(
        self,
        obs: Observation,
        normalized: bool = False,
        out: npt.NDArray[np.float32] | None = None,
    ) -> npt.NDArray[np.float32]:
        """The vector of an observation (``observe(state, seat)``); a spectator's is relative to seat 0.

        ``normalized`` gives the scaled and clipped form (:attr:`scale`, :attr:`normalized_low`, 1) instead
        of the game's own numbers. The vector is written into ``out`` when given (a float32 array of
        :attr:`size`), else into a new array; either way the caller owns it.

        One working vector is kept per viewer and number of players, and each large section (town hall,
        city, mines, each seat) is written again only when the parts of the observation it is built from
        change (compared by identity first, as an :class:`~kutnahora.engine.Observer` hands back unchanged
        parts, then by value); the small sections are rewritten each time, as a few vectorised writes.
        """
        viewer = 0 if obs.viewer is None else obs.viewer
        n = len(obs.players)
        work = self._work.get((viewer, n))
        if work is None:
            work = self._work[(viewer, n)] = _Work(self.size)
        vector, keys = work.vector, work.keys
        # Every write of this call is gathered into three lists and made by two vectorised assignments:
        # entries set to 1, and numbers with their positions. The small sections' ones are remembered, to be
        # cleared next time; a large section is cleared (one fill) when it is written again.
        ones, at, values = self._small_parts(obs, viewer, n)
        small = len(ones)
        hall = obs.town_hall
        if not _same(keys.get("hall"), hall):
            keys["hall"] = hall
            vector[self._hall : self._hall_end] = self._block("hall", hall, self._write_hall)
        city, plots = obs.city, obs.plots
        kept = keys.get("city")
        if kept is None or not (_same(kept[0], city) and _same(kept[1], plots)):
            keys["city"] = (city, plots)
            vector[self._city : self._city_end] = 0.0
            self._write_city(city, plots, viewer, n, ones)
        mines, rocks = obs.mines, obs.rocks
        kept = keys.get("mines")
        if kept is None or not (_same(kept[0], mines) and _same(kept[1], rocks)):
            keys["mines"] = (mines, rocks)
            vector[self._mines : self._mines_end] = 0.0
            self._write_mines(mines, rocks, viewer, n, ones)
        for player in obs.players:
            slot = (player.seat - viewer) % n
            if keys.get(slot) is not player:
                keys[slot] = player
                base = self._seats[slot]
                vector[base : base + self._seat] = self._block(player.seat, player, self._write_player)
        vector[work.ones] = 0.0
        everywhere = np.frombuffer(array("q", ones), dtype=np.int64)  # a C loop, unlike numpy's from a list
        work.ones = everywhere[:small]
        vector[everywhere] = 1.0
        vector[np.frombuffer(array("q", at), dtype=np.int64)] = np.frombuffer(array("f", values), np.float32)
        if out is None:
            out = np.empty(self.size, dtype=np.float32)
        if normalized:
            np.multiply(vector, self.scale, out=out)
            np.maximum(out, self.normalized_low, out=out)  # np.clip is several times slower here
            np.minimum(out, 1.0, out=out)
        else:
            np.copyto(out, vector)
        return out

    def _block(
        self,
        slot: object,
        part: Any,
        write: Callable[[Any, int, list[int], list[int], list[float]], None],
    ) -> npt.NDArray[np.float32]:
        """The section of a part that reads the same for every viewer (the town hall, a seat's board).

        Kept per slot while the part is unchanged, so that a part is encoded once however many viewers
        observe it; a viewer's vector copies it in when the part it holds is not the same object.
        """
        kept = self._blocks.get(slot)
        if kept is not None and _same(kept[0], part):
            return kept[1]
        ones: list[int] = []
        at: list[int] = []
        values: list[float] = []
        write(part, 0, ones, at, values)
        block = np.zeros(self._hall_end - self._hall if slot == "hall" else self._seat, dtype=np.float32)
        block[ones] = 1.0
        block[at] = values
        self._blocks[slot] = (part, block)
        return block

    def normalize(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        """The normalised form of a raw vector (of this layout): scaled by :attr:`scale`, then clipped."""
        scaled: npt.NDArray[np.float32] = np.clip(vector * self.scale, self.normalized_low, 1.0)
        return scaled

    def bounds(self, normalized: bool) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]]:
        """The lowest and highest value of every entry, in the raw or the normalised form."""
        if normalized:
            return self.normalized_low.copy(), np.ones(self.size, dtype=np.float32)
        return np.full(self.size, LOW, dtype=np.float32), np.full(self.size, HIGH, dtype=np.float32)

    def _write_hall(
        self,
        town_hall: tuple[tuple[StackView, ...], ...],
        start: int,
        ones: list[int],
        at: list[int],
        values: list[float],
    ) -> None:
        labels = len(STACK_LABELS)
        label = self._label_index
        for r, places in enumerate(town_hall):
            for place, stack in enumerate(places):
                base = start + (r * self.hall_cols + place) * self._stack
                ones.append(base)
                ones.append(base + 1 + label[stack.label])
                ones.append(base + 2 + labels + stack.top)
                at.append(base + 1 + labels)
                values.append(stack.size)

    def _write_city(
        self,
        city: tuple[CityTileView, ...],
        plots: tuple[tuple[tuple[int, int], int], ...],
        viewer: int,
        n: int,
        ones: list[int],
    ) -> None:
        width, square, b, start = self.city_cols, self._square, self.buildings, self._city
        ones.extend(self._usable[n])
        for (row, col), seat in plots:
            ones.append(start + (row * width + col) * square + 1 + (seat - viewer) % n)
        for tile in city:
            row, col = tile.square
            base = start + (row * width + col) * square + 1 + MAX_SEATS
            ones.append(base + tile.building)
            ones.append(base + b + (MAX_SEATS if tile.owner is None else (tile.owner - viewer) % n))

    def _write_mines(
        self,
        mines: tuple[MineView, ...],
        rocks: tuple[tuple[tuple[int, int], int], ...],
        viewer: int,
        n: int,
        ones: list[int],
    ) -> None:
        width, square, start = self.mine_cols, self._mine_square, self._mines
        ones.extend(start + (row * width + col) * square for (row, col), _rock in rocks)
        for placed in mines:
            row, col = placed.square
            base = start + (row * width + col) * square
            ones.append(base + 1 + placed.tile)
            ones.append(base + 1 + self.mine_tiles + (placed.owner - viewer) % n)

    def _write_player(
        self, player: PlayerView, base: int, ones: list[int], at: list[int], values: list[float]
    ) -> None:
        guild = self._guild_index
        guilds = len(guild)
        production = dict(player.production)
        at.extend(self._seat_numbers)
        values.extend(
            (
                1,
                player.groschen,
                player.reputation,
                player.points,
                player.mine_ore,
                player.income,
                player.tax_due,
                player.pelicans,
                player.pelicans_used,
                player.miners_pool,
                player.miners_reserve,
                len(player.plots),
                len(player.buildings),
            )
        )
        values.extend([production.get(c, 0) for c in _COMMODITIES])
        values.extend(player.houses_removed[:3])
        base += len(SEAT_COUNTERS)
        ones.extend([base + guild[g] for g in player.guild_set])
        base += guilds
        ones.extend([base + r * guilds + guild[g] for r, g in enumerate(player.guilds)])
        base += 3 * guilds + len(_COMMODITIES) + 3
        card = self._card_index
        ones.extend([base + card[c] for c in player.hand])
        base += self.cards
        ones.extend([base + tile for tile in player.slots])

    def _small_parts(self, obs: Observation, viewer: int, n: int) -> tuple[list[int], list[int], list[float]]:
        """The entries set to 1 of the small sections, and the positions and values of their numbers."""
        ones = [
            self._players + n - 2,
            self._phase + self._phase_index[obs.phase],
            self._start_seat + (obs.start_seat - viewer) % n,
            self._guild_card + obs.guild_setup_card - 1,
            self._mine_card + obs.mine_setup_card - 1,
        ]
        decks = dict(obs.deck_positions)
        arms = dict(obs.arms)
        prices = dict(obs.prices)
        bank, pool, council = dict(obs.patrician_bank), dict(obs.patrician_pool), dict(obs.council)
        values: list[float] = [
            obs.round,
            obs.rounds,
            obs.turn,
            obs.cards_left_in_turn,
            obs.tax,
            obs.red_stack_size,
            obs.mine_stack_size,
            obs.mine_discard_size,
            obs.technology_taken,
            obs.mine_draws,
            obs.barbara_next,
            int(obs.over),
            int(obs.uses_events),
            int(obs.free_action),
            obs.mine_reshuffles,
            decks.get(Deck.POPULATION, 0),
            decks.get(Deck.ORE, 0),
            *[arms.get(a, 0) for a in _ARMS],
            *[prices.get(c, 0) for c in _COMMODITIES],
            *[bank.get(c, 0) for c in _COLORS],
            *[pool.get(c, 0) for c in _COLORS],
            *[council.get(c, 0) for c in _COLORS],
        ]
        if obs.no_market:
            ones.extend([self._no_market + self._commodity_index[c] for c in obs.no_market])
        if obs.town_discards:
            ones.extend([self._discards + tile for tile in obs.town_discards])
        if obs.building_in_hand is not None:
            ones.append(self._in_hand + obs.building_in_hand)
        if obs.revealed_events:
            ones.extend([self._revealed + self._event_index[e] for e in obs.revealed_events])
        if obs.current_event is not None:
            ones.append(self._event + self._event_index[obs.current_event])
        if obs.guild_sets_left:
            ones.extend([self._sets_left + i for i in obs.guild_sets_left])
        if obs.pending is not None:
            ones.append(self._kind + self._kind_index[obs.pending.kind])
            ones.append(self._owes + (obs.pending.seat - viewer) % n)
        if obs.drawn:
            ones.extend([self._drawn + tile for tile in obs.drawn])
        if obs.kept_tile is not None:
            ones.append(self._kept + obs.kept_tile)
        if obs.mine_discard_seen:
            ones.extend([self._seen + tile for tile in obs.mine_discard_seen])
        return ones, self._numbers.copy(), values

    def describe(self) -> list[str]:
        """One line per section: its slice and meaning."""
        return [f"{s.start:>5}:{s.stop:<5} {s.name:<22} {s.meaning}" for s in self.sections]


class _Work:
    """A working vector for one viewer and number of players, with what each large section was built from."""

    __slots__ = ("keys", "ones", "vector")

    def __init__(self, size: int) -> None:
        self.vector = np.zeros(size, dtype=np.float32)
        self.keys: dict[object, Any] = {}
        self.ones: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        """The entries of the small sections set to 1 last time."""


def _same(kept: object, now: object) -> bool:
    """Whether a part is unchanged: the very same object, or equal to it."""
    return kept is now or (kept is not None and kept == now)


def main(argv: list[str] | None = None) -> int:
    """Print the observation layout and the action ranges of the default component set."""
    from kutnahora.learned.actions import ActionSpace

    parser = argparse.ArgumentParser(
        prog="python -m kutnahora.envs",
        description="Print the layout of the observation vector and the action id ranges "
        "for the default component set.",
    )
    parser.parse_args(argv)
    layout = ObservationLayout()
    print(f"observation vector: {layout.size} float32 values")
    print("\n".join(layout.describe()))
    space = ActionSpace(layout.components)
    print(f"\naction ids: {space.size}")
    print("\n".join(space.describe()))
    return 0
