"""The mutable state of one game: plain dataclasses of ints, lists and dicts.

The state holds everything, hidden information included (stack orders, drawn mine tiles, face-down
events, the random generator). What a seat may see is decided by :mod:`kutnahora.engine.view`; how the state
changes is decided by the rule modules. A state is copied with :meth:`GameState.copy` and identified by
:func:`kutnahora.engine.game.state_hash`.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from enum import StrEnum

from kutnahora.engine.components import Arm, Color, Commodity, ComponentSet, Guild, Square
from kutnahora.engine.options import PendingDecision


class Phase(StrEnum):
    """Where the game is."""

    GUILD_SETS = "guild_sets"
    GUILD_ROWS = "guild_rows"
    TURNS = "turns"
    ROUND_END = "round_end"
    OVER = "over"


class StepKind(StrEnum):
    """Work the engine still has to do inside the current action or round end."""

    MINE = "mine"  # a Mine action (args: free)
    MINE_DRAW = "mine_draw"  # draw mine tiles (args: free)
    TECHNOLOGY = "technology"  # play the next mining-technology tile as a free mine
    RIGHTS = "rights"  # a Rights action (args: free, public_only)
    PLOT = "plot"  # a Plot action (args: free)
    BUILDING = "building"  # a Building action (args: free)
    BUILDING_EFFECT = "building_effect"  # one printed effect (args: building id, effect index)
    HOUSE = "house"  # mark a guild building with a house (args: building id)
    INCOME = "income"  # an Income action
    ST_BARBARA = "st_barbara"  # a St. Barbara action
    EVENT_ADVANCES = "event_advances"  # the round's event advances the decks
    TAX = "tax"  # one seat's taxes
    PATRICIAN_SCORING = "patrician_scoring"
    NEXT_ROUND = "next_round"  # red arrival, starting player, event reveal, or the final scoring


@dataclass(frozen=True, slots=True)
class Step:
    """One unit of pending engine work for a seat; ``args`` are small ints."""

    kind: StepKind
    seat: int
    args: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class GameOptions:
    """What a game is created with. ``events`` applies to three and four players (two always use them)."""

    players: int = 4
    events: bool = False
    guild_setup_card: int | None = None  # None: chosen at random
    mine_setup_card: int | None = None  # None: chosen at random

    def uses_events(self) -> bool:
        """Two-player games always use event cards; three and four only when asked."""
        return self.players == 2 or self.events


@dataclass(slots=True)
class PlayerState:
    """One seat's board and belongings."""

    seat: int
    groschen: int
    guild_set: tuple[Guild, ...] = ()  # chosen at setup, in card order
    guilds: tuple[Guild, ...] = ()  # board rows top to bottom, once arranged
    reputation: int = 0
    points: int = 0
    production: dict[Commodity, int] = field(default_factory=lambda: {c: 0 for c in Commodity})
    mine_ore: int = 0  # ore production from mines, tracked apart from buildings
    houses_removed: list[int] = field(default_factory=lambda: [0, 0, 0])  # per row, from the left
    plots: list[Square] = field(default_factory=list)  # squares claimed in the city
    slots: list[int] = field(default_factory=list)  # building tiles held (rights)
    pelicans: int = 0  # unused (purple side up)
    pelicans_used: int = 0
    miners_pool: int = 0
    miners_reserve: int = 0
    hand: list[int] = field(default_factory=list)  # action cards still in hand this round
    buildings: list[int] = field(default_factory=list)  # guild buildings built and owned
    mines: list[Square] = field(default_factory=list)  # mine squares marked with this seat's miners


@dataclass(slots=True)
class TownHallStack:
    """A stack on the town hall board; ``tiles[-1]`` is the top tile, the only one visible."""

    label: str  # the guild or the patrician colour of the stack
    tiles: list[int]


@dataclass(frozen=True, slots=True)
class CityTile:
    """A building standing in the city (replaced, never changed, so copies of the city may share it)."""

    building: int
    owner: int | None  # None for public buildings


@dataclass(frozen=True, slots=True)
class MinePlacement:
    """A tile standing in the mines (replaced, never changed, so copies of the mines may share it)."""

    tile: int
    owner: int


@dataclass(slots=True)
class GameState:
    """Everything about one game, hidden information included."""

    components: ComponentSet
    options: GameOptions
    seed: int
    rng: random.Random
    players: list[PlayerState]
    phase: Phase = Phase.GUILD_SETS
    round: int = 1
    start_seat: int = 0
    turn_index: int = 0  # 0 .. 3 * players - 1 within the round
    cards_left_in_turn: int = 0
    version: int = 0  # decisions applied so far
    pending: PendingDecision | None = None
    agenda: list[Step] = field(default_factory=list)  # a stack: the last step runs next
    # setup
    guild_setup_card: int = 0
    mine_setup_card: int = 0
    guild_sets_left: list[int] = field(default_factory=list)  # indexes into the setup card's row
    # economy
    deck_position: dict[str, int] = field(default_factory=dict)  # Deck value -> card position
    arms: dict[Arm, int] = field(default_factory=lambda: {a: 0 for a in Arm})
    tax: int = 0
    # town hall, city, mines
    town_hall: list[list[TownHallStack]] = field(default_factory=list)
    red_stack: list[int] = field(default_factory=list)
    town_discards: list[int] = field(default_factory=list)  # tiles the town built (discarded, public)
    city: dict[Square, CityTile] = field(default_factory=dict)
    plots: dict[Square, int] = field(default_factory=dict)  # square -> seat
    mines: dict[Square, MinePlacement] = field(default_factory=dict)
    rocks: dict[Square, int] = field(default_factory=dict)  # square -> rock tile id
    mine_stack: list[int] = field(default_factory=list)  # the last element is the top
    mine_discard: list[int] = field(default_factory=list)
    # per seat, the tiles it put on the discard pile since the pile was last shuffled into the stack: a
    # seat knows where those are, the others do not (what a seat has seen, not part of the position)
    mine_discards_seen: list[list[int]] = field(default_factory=list)
    mine_reshuffles: int = 0  # how often the discards became the stack (the tiers are mixed since)
    drawn: list[int] = field(default_factory=list)  # mine tiles the pending seat is choosing from
    kept_tile: int | None = None  # the mine tile being placed
    free_action: bool = False  # the sub-action being decided costs nothing (St. Barbara, house rewards)
    technology_taken: int = 0
    # St. Barbara, patricians, events
    barbara_next: int = 1  # the current tile's number; 12 once all are flipped
    patrician_bank: dict[Color, int] = field(default_factory=dict)
    patrician_pool: dict[Color, int] = field(default_factory=dict)
    council: dict[Color, int] = field(default_factory=dict)
    events: list[int | None] = field(default_factory=list)  # event per round (index round - 1)
    building_in_hand: int | None = None  # the tile chosen for a Building action in progress
    final_scores: dict[int, dict[str, int]] | None = None  # seat -> score breakdown, once over
    # derived, not part of the game: open mine squares and costs, for the number of mines it was built at
    mine_costs_cache: tuple[int, dict[Square, int]] | None = None

    def copy(self) -> GameState:
        """A fully independent copy, random generator included (components are shared)."""
        return copy.deepcopy(self, {id(self.components): self.components})

    def clone(self) -> GameState:
        """The same as :meth:`copy`, many times faster: what a search calls for every simulation.

        Only what the rules change in place is copied (lists, dicts, players, town-hall stacks, the
        generator); immutable values and the objects the rules only ever replace (options, steps, city
        tiles, mine placements, the mine-cost cache) are shared.
        """
        rng = random.Random.__new__(random.Random)  # unseeded: Random() would read the OS's entropy first
        rng.setstate(self.rng.getstate())
        final = self.final_scores
        return GameState(
            self.components,
            self.options,
            self.seed,
            rng,
            [_clone_player(p) for p in self.players],
            self.phase,
            self.round,
            self.start_seat,
            self.turn_index,
            self.cards_left_in_turn,
            self.version,
            self.pending,
            self.agenda.copy(),
            self.guild_setup_card,
            self.mine_setup_card,
            self.guild_sets_left.copy(),
            self.deck_position.copy(),
            self.arms.copy(),
            self.tax,
            [[TownHallStack(s.label, s.tiles.copy()) for s in row] for row in self.town_hall],
            self.red_stack.copy(),
            self.town_discards.copy(),
            self.city.copy(),
            self.plots.copy(),
            self.mines.copy(),
            self.rocks.copy(),
            self.mine_stack.copy(),
            self.mine_discard.copy(),
            [seen.copy() for seen in self.mine_discards_seen],
            self.mine_reshuffles,
            self.drawn.copy(),
            self.kept_tile,
            self.free_action,
            self.technology_taken,
            self.barbara_next,
            self.patrician_bank.copy(),
            self.patrician_pool.copy(),
            self.council.copy(),
            self.events.copy(),
            self.building_in_hand,
            None if final is None else {seat: parts.copy() for seat, parts in final.items()},
            self.mine_costs_cache,
        )

    @property
    def over(self) -> bool:
        """Whether the game has ended."""
        return self.phase is Phase.OVER

    def current_event(self) -> int | None:
        """The event card of the current round, if any."""
        if self.round - 1 < len(self.events):
            return self.events[self.round - 1]
        return None


def clone(state: GameState) -> GameState:
    """An independent copy of ``state``, cheap enough to make for every simulation of a search."""
    return state.clone()


def _clone_player(p: PlayerState) -> PlayerState:
    """An independent copy of a player's board (see :meth:`GameState.clone`)."""
    return PlayerState(
        p.seat,
        p.groschen,
        p.guild_set,
        p.guilds,
        p.reputation,
        p.points,
        p.production.copy(),
        p.mine_ore,
        p.houses_removed.copy(),
        p.plots.copy(),
        p.slots.copy(),
        p.pelicans,
        p.pelicans_used,
        p.miners_pool,
        p.miners_reserve,
        p.hand.copy(),
        p.buildings.copy(),
        p.mines.copy(),
    )
