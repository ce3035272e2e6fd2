"""The fixed action space: every option of every decision as one integer id, and back.

A decision lists its legal options as small values of a handful of kinds (see
:mod:`kutnahora.engine.options`). The action space gives each kind of option a range of ids of its own,
and inside the range one id per possible parameter value, so that an id names one option whatever the
decision is, and two different options never share an id. The ranges, in order (sizes for the default
component set; a component file with other counts gives other sizes, computed the same way):

=================  =====================================  ============================================
range              option                                 id inside the range
=================  =====================================  ============================================
``play_card``      ``PlayCard(card, action)``             ``3 × card index + half``: half 0 the card's
                                                          top action, 1 its bottom action, 2 for no
                                                          effect (6 cards: 18 ids)
``joker``          ``ChooseAction(action)``               the action's place in ``Action`` (7 ids)
``guild_set``      ``ChooseGuildSet(index)``              the index on the guild setup card's row (the
                                                          longest row: 4 ids)
``guild_rows``     ``ArrangeGuilds((a, b, c))``           the ordered triple of distinct guilds, in
                                                          lexicographic order of ``Guild`` (6·5·4 = 120)
``tile``           ``ChooseTile(tile)``                   the tile id: a building id (town hall, slots,
                                                          city) or a mine/technology tile id, as the
                                                          decision says (max of both counts: 36)
``square``         ``ChooseSquare(row, col)``             ``row × width + col`` on a grid as large as the
                                                          largest of the city boards and the mine area
                                                          (6 rows × 7 columns: 42)
``guild``          ``ChooseGuild(guild)``                 the guild's place in ``Guild`` (6)
``patrician``      ``ChoosePatrician(color)``             the colour's place in ``Color`` (4)
``confirm``        ``Confirm(yes)``                       0 no, 1 yes (2)
``skip``           ``Skip()``                             0 (1)
=================  =====================================  ============================================

The default component set gives 240 ids. A decision's options are one kind of question (a tile *of the
town hall*, a square *of the mines*), so the same id range serves every decision that asks for that kind
of value; the pending decision's kind, which is part of every observation, says which question it is.
Most ids are illegal at any one moment: :meth:`ActionSpace.mask` marks the legal ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np
import numpy.typing as npt

from kutnahora.engine import Option, PendingDecision, option_text
from kutnahora.engine.components import Action, Color, ComponentSet, Guild
from kutnahora.engine.options import (
    SKIP,
    ArrangeGuilds,
    ChooseAction,
    ChooseGuild,
    ChooseGuildSet,
    ChoosePatrician,
    ChooseSquare,
    ChooseTile,
    Confirm,
    PlayCard,
    Skip,
)

ACTIONS: tuple[Action, ...] = tuple(Action)
GUILDS: tuple[Guild, ...] = tuple(Guild)
COLORS: tuple[Color, ...] = tuple(Color)
GUILD_TRIPLES: tuple[tuple[Guild, Guild, Guild], ...] = tuple(permutations(GUILDS, 3))


@dataclass(frozen=True, slots=True)
class IdRange:
    """The ids ``start`` … ``stop - 1`` given to one kind of option."""

    name: str
    start: int
    stop: int

    @property
    def size(self) -> int:
        """How many ids the range holds."""
        return self.stop - self.start


class ActionSpace:
    """Maps options to ids and ids to options for one component set (see the module's table)."""

    def __init__(self, components: ComponentSet) -> None:
        self.components = components
        self._cards = tuple(components.action_cards)
        self._card_index = {card.number: i for i, card in enumerate(self._cards)}
        c = components
        self.guild_sets = max(len(row) for card in c.guild_setup_cards for row in card.rows.values())
        self.tiles = max(len(c.buildings), len(c.mine_tiles) + len(c.technology_tiles))
        boards = [*components.city_boards.values()]
        self.square_rows = max([b.rows for b in boards] + [components.mine_area.rows])
        self.square_cols = max([b.columns for b in boards] + [components.mine_area.columns])
        sizes = (
            ("play_card", 3 * len(self._cards)),
            ("joker", len(ACTIONS)),
            ("guild_set", self.guild_sets),
            ("guild_rows", len(GUILD_TRIPLES)),
            ("tile", self.tiles),
            ("square", self.square_rows * self.square_cols),
            ("guild", len(GUILDS)),
            ("patrician", len(COLORS)),
            ("confirm", 2),
            ("skip", 1),
        )
        ranges: list[IdRange] = []
        start = 0
        for name, size in sizes:
            ranges.append(IdRange(name, start, start + size))
            start += size
        self.ranges: tuple[IdRange, ...] = tuple(ranges)
        self.size = start
        """How many ids there are: the length of a mask."""
        self._start = {r.name: r.start for r in ranges}
        self._triple_index = {triple: i for i, triple in enumerate(GUILD_TRIPLES)}
        self._ids: dict[Option, int] = {}
        self._by_kind = self._lookups()

    def range(self, name: str) -> IdRange:
        """The id range of one kind of option, by its name in the module's table."""
        for r in self.ranges:
            if r.name == name:
                return r
        raise KeyError(f"no id range {name!r}; the ranges are {', '.join(r.name for r in self.ranges)}")

    def id_of(self, option: Option) -> int:
        """The id of an option; raises ValueError for a value no decision of this component set can list."""
        found = self._ids.get(option)
        if found is None:
            found = self._ids[option] = self._compute_id(option)
        return found

    def ids(self, options: tuple[Option, ...]) -> list[int]:
        """The ids of a decision's options, in the decision's order.

        Each option is looked up by its kind and its fields (plain values that hash in C), not by the option
        itself, whose generated ``__hash__`` and ``__eq__`` run in Python; a value no decision of this
        component set can list falls through to :meth:`id_of`, which says what is wrong with it.
        """
        by_kind = self._by_kind
        try:
            return [by_kind[type(o)](o) for o in options]
        except (KeyError, AttributeError, TypeError):
            return [self.id_of(o) for o in options]

    def _lookups(self) -> dict[type, Callable[[Any], int]]:
        """Per kind of option, a function from the option to its id, through a table of every valid value."""
        start = self._start
        play = {
            (card.number, action): start["play_card"] + 3 * i + half
            for i, card in enumerate(self._cards)
            for half, action in enumerate((card.top, card.bottom, None))
        }
        joker = {a: start["joker"] + i for i, a in enumerate(ACTIONS)}
        sets = {k: start["guild_set"] + k for k in range(self.guild_sets)}
        triples = {t: start["guild_rows"] + i for t, i in self._triple_index.items()}
        tiles = {k: start["tile"] + k for k in range(self.tiles)}
        squares = {
            (r, c): start["square"] + r * self.square_cols + c
            for r in range(self.square_rows)
            for c in range(self.square_cols)
        }
        guilds = {g: start["guild"] + i for i, g in enumerate(GUILDS)}
        colors = {c: start["patrician"] + i for i, c in enumerate(COLORS)}
        confirm = {False: start["confirm"], True: start["confirm"] + 1}
        skip = start["skip"]
        return {
            PlayCard: lambda o: play[(o.card, o.action)],
            ChooseAction: lambda o: joker[o.action],
            ChooseGuildSet: lambda o: sets[o.index],
            ArrangeGuilds: lambda o: triples[o.guilds],
            ChooseTile: lambda o: tiles[o.tile],
            ChooseSquare: lambda o: squares[(o.row, o.col)],
            ChooseGuild: lambda o: guilds[o.guild],
            ChoosePatrician: lambda o: colors[o.color],
            Confirm: lambda o: confirm[o.yes],
            Skip: lambda o: skip,
        }

    def mask(self, options: tuple[Option, ...]) -> npt.NDArray[np.int8]:
        """The legal-action mask of a decision: 1 at the id of each listed option, 0 elsewhere."""
        mask = np.zeros(self.size, dtype=np.int8)
        mask[self.ids(options)] = 1
        return mask

    def refusal(self, action_id: object, decision: PendingDecision) -> str:
        """A sentence saying that ``action_id`` is not legal for ``decision``, listing the legal ids."""
        listed = ", ".join(f"{self.id_of(o)} ({option_text(o)})" for o in decision.options)
        return (
            f"action {action_id} is not legal for seat {decision.seat}'s decision {decision.kind.value}; "
            f"legal: {listed}"
        )

    def _compute_id(self, option: Option) -> int:
        start = self._start
        match option:
            case PlayCard(card=card, action=action):
                index = self._card_index.get(card)
                if index is None:
                    raise ValueError(f"there is no action card {card}")
                printed = self._cards[index]
                if action is None:
                    half = 2
                elif action is printed.top:
                    half = 0
                elif action is printed.bottom:
                    half = 1
                else:
                    raise ValueError(f"card {card} shows {printed.top} and {printed.bottom}, not {action}")
                return start["play_card"] + 3 * index + half
            case ChooseAction(action=action):
                return start["joker"] + ACTIONS.index(action)
            case ChooseGuildSet(index=index):
                return start["guild_set"] + self._within(index, self.guild_sets, "guild set index")
            case ArrangeGuilds(guilds=guilds):
                triple = self._triple_index.get(tuple(guilds))  # type: ignore[arg-type]
                if triple is None:
                    raise ValueError(f"{guilds} is not three different guilds")
                return start["guild_rows"] + triple
            case ChooseTile(tile=tile):
                return start["tile"] + self._within(tile, self.tiles, "tile id")
            case ChooseSquare(row=row, col=col):
                row = self._within(row, self.square_rows, "square row")
                col = self._within(col, self.square_cols, "square column")
                return start["square"] + row * self.square_cols + col
            case ChooseGuild(guild=guild):
                return start["guild"] + GUILDS.index(guild)
            case ChoosePatrician(color=color):
                return start["patrician"] + COLORS.index(color)
            case Confirm(yes=yes):
                return start["confirm"] + int(yes)
            case Skip():
                return start["skip"]
        raise ValueError(f"not an option: {option!r}")

    @staticmethod
    def _within(value: int, size: int, what: str) -> int:
        if not 0 <= value < size:
            raise ValueError(f"{what} {value} is outside 0..{size - 1}")
        return value

    def option_of(self, action_id: int) -> Option:
        """The option an id names (whether or not any decision lists it now)."""
        if not 0 <= action_id < self.size:
            raise ValueError(f"action id {action_id} is outside 0..{self.size - 1}")
        for r in self.ranges:
            if action_id < r.stop:
                k = action_id - r.start
                break
        match r.name:
            case "play_card":
                card = self._cards[k // 3]
                half = k % 3
                return PlayCard(card.number, None if half == 2 else (card.top, card.bottom)[half])
            case "joker":
                return ChooseAction(ACTIONS[k])
            case "guild_set":
                return ChooseGuildSet(k)
            case "guild_rows":
                return ArrangeGuilds(GUILD_TRIPLES[k])
            case "tile":
                return ChooseTile(k)
            case "square":
                return ChooseSquare(k // self.square_cols, k % self.square_cols)
            case "guild":
                return ChooseGuild(GUILDS[k])
            case "patrician":
                return ChoosePatrician(COLORS[k])
            case "confirm":
                return Confirm(bool(k))
        return SKIP

    def describe(self) -> list[str]:
        """One line per id range: its name and ids, for documentation and the command line."""
        return [f"{r.name:<10} {r.start:>4} … {r.stop - 1:<4} ({r.size} ids)" for r in self.ranges]
