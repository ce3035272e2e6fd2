"""The native core's ints and the engine's values: options, and whole states in both directions.

The core lists options as one int each (``type << 24 | (a+1) << 16 | (b+1) << 8 | (c+1)``, see
``Option::key`` in ``native/core/src/rules.hpp``) and writes a state as a flat list of ints in the order of
``native/core/src/serialize.cpp``. :func:`option_of` and :func:`key_of` translate options;
:func:`to_state` builds the engine's :class:`~kutnahora.engine.state.GameState` from a written state (so
that the engine's own ``state_hash``, ``observe`` and ``resample`` work on a native game) and
:func:`from_state` writes an engine state for the core to read.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

from kutnahora.engine.components import Arm, ComponentSet, Deck
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
    DecisionKind,
    Option,
    PendingDecision,
    PlayCard,
    Skip,
)
from kutnahora.engine.state import (
    CityTile,
    GameOptions,
    GameState,
    MinePlacement,
    Phase,
    PlayerState,
    Step,
    StepKind,
    TownHallStack,
)
from kutnahora.native.tables import ACTIONS, COLORS, COMMODITIES, GUILDS

KINDS: tuple[DecisionKind, ...] = tuple(DecisionKind)
STEP_KINDS: tuple[StepKind, ...] = tuple(StepKind)
PHASES: tuple[Phase, ...] = tuple(Phase)
DECKS: tuple[Deck, ...] = (Deck.POPULATION, Deck.ORE)
ARMS: tuple[Arm, ...] = tuple(Arm)
LABELS: tuple[str, ...] = tuple(g.value for g in GUILDS) + tuple(c.value for c in COLORS)
"""Town-hall stack labels by the core's number: the guilds, then the patrician colours."""
FINAL_PARTS = ("during_play", "city", "mines", "income", "reputation", "extras", "total")
RNG_WORDS = 624

_options: dict[int, Option] = {}


def _unpack(key: int) -> tuple[int, int, int, int]:
    return key >> 24, ((key >> 16) & 0xFF) - 1, ((key >> 8) & 0xFF) - 1, (key & 0xFF) - 1


def _make(kind: int, a: int, b: int, c: int) -> Option:
    match kind:
        case 0:
            return PlayCard(a, None if b < 0 else ACTIONS[b])
        case 1:
            return ChooseAction(ACTIONS[a])
        case 2:
            return ChooseGuildSet(a)
        case 3:
            return ArrangeGuilds((GUILDS[a], GUILDS[b], GUILDS[c]))
        case 4:
            return ChooseTile(a)
        case 5:
            return ChooseSquare(a, b)
        case 6:
            return ChooseGuild(GUILDS[a])
        case 7:
            return ChoosePatrician(COLORS[a])
        case 8:
            return Confirm(bool(a))
        case 9:
            return SKIP
    raise ValueError(f"the native core wrote an unknown option type {kind}")


def option_of(key: int) -> Option:
    """The engine's option for one of the core's option keys (one shared value per key)."""
    option = _options.get(key)
    if option is None:
        option = _options[key] = _make(*_unpack(key))
    return option


def _fields(option: Option) -> tuple[int, int, int, int]:
    match option:
        case PlayCard(card=card, action=action):
            return 0, card, -1 if action is None else ACTIONS.index(action), -1
        case ChooseAction(action=action):
            return 1, ACTIONS.index(action), -1, -1
        case ChooseGuildSet(index=index):
            return 2, index, -1, -1
        case ArrangeGuilds(guilds=(a, b, c)):
            return 3, GUILDS.index(a), GUILDS.index(b), GUILDS.index(c)
        case ChooseTile(tile=tile):
            return 4, tile, -1, -1
        case ChooseSquare(row=row, col=col):
            return 5, row, col, -1
        case ChooseGuild(guild=guild):
            return 6, GUILDS.index(guild), -1, -1
        case ChoosePatrician(color=color):
            return 7, COLORS.index(color), -1, -1
        case Confirm(yes=yes):
            return 8, int(yes), -1, -1
        case Skip():
            return 9, -1, -1, -1
    raise TypeError(f"not an option: {option!r}")


def key_of(option: Option) -> int:
    """The core's key for an engine option (:func:`option_of` inverted)."""
    kind, a, b, c = _fields(option)
    return (kind << 24) | (((a + 1) & 0xFF) << 16) | (((b + 1) & 0xFF) << 8) | ((c + 1) & 0xFF)


# ---- whole states -------------------------------------------------------------------------------------


class _Ints:
    """Reads a written state front to back."""

    def __init__(self, values: list[int]) -> None:
        self._it: Iterator[int] = iter(values)

    def one(self) -> int:
        return next(self._it)

    def many(self, count: int) -> list[int]:
        return [next(self._it) for _ in range(count)]

    def ints(self) -> list[int]:
        return self.many(self.one())

    def squares(self) -> list[tuple[int, int]]:
        return [(self.one(), self.one()) for _ in range(self.one())]


def _none(value: int) -> int | None:
    return None if value < 0 else value


def to_state(values: list[int], components: ComponentSet, options: GameOptions, seed: int) -> GameState:
    """The engine's state for a state the core wrote (:func:`from_state` inverted)."""
    r = _Ints(values)
    head = r.many(15)
    deck_position: dict[str, int] = dict(zip(DECKS, r.many(2), strict=True))
    arms = dict(zip(ARMS, r.many(5), strict=True))
    bank, pool, council = (dict(zip(COLORS, r.many(4), strict=True)) for _ in range(3))
    has_pending, pending_seat, pending_kind = r.many(3)
    pending_options = tuple(_make(*r.many(4)) for _ in range(r.one()))
    agenda: list[Step] = []
    for _ in range(r.one()):
        kind, seat, nargs = r.many(3)
        agenda.append(Step(STEP_KINDS[kind], seat, tuple(r.many(nargs))))
    guild_sets_left = r.ints()
    town_hall = [[TownHallStack(LABELS[r.one()], r.ints()) for _ in range(r.one())] for _ in range(r.one())]
    red_stack, town_discards = r.ints(), r.ints()
    city: dict[tuple[int, int], CityTile] = {}
    for _ in range(r.one()):
        row, col, building, owner = r.many(4)
        city[(row, col)] = CityTile(building, _none(owner))
    plots = {(row, col): seat for row, col, seat in (r.many(3) for _ in range(r.one()))}
    mines: dict[tuple[int, int], MinePlacement] = {}
    for _ in range(r.one()):
        row, col, tile, owner = r.many(4)
        mines[(row, col)] = MinePlacement(tile, owner)
    rocks = {(row, col): tile for row, col, tile in (r.many(3) for _ in range(r.one()))}
    mine_stack, mine_discard = r.ints(), r.ints()
    seen = [r.ints() for _ in range(r.one())]
    drawn = r.ints()
    events: list[int | None] = [_none(e) for e in r.ints()]
    has_final = r.one()
    finals = [r.many(len(FINAL_PARTS)) for _ in range(r.one())]
    players: list[PlayerState] = []
    for seat in range(r.one()):
        groschen = r.one()
        guild_set = tuple(GUILDS[g] for g in r.ints())
        guilds = tuple(GUILDS[g] for g in r.ints())
        reputation, points = r.many(2)
        production = dict(zip(COMMODITIES, r.many(6), strict=True))
        mine_ore = r.one()
        houses = r.many(3)
        player_plots = r.squares()
        slots = r.ints()
        pelicans, used, miners_pool, miners_reserve = r.many(4)
        players.append(
            PlayerState(
                seat,
                groschen,
                guild_set,
                guilds,
                reputation,
                points,
                production,
                mine_ore,
                houses,
                player_plots,
                slots,
                pelicans,
                used,
                miners_pool,
                miners_reserve,
                r.ints(),
                r.ints(),
                r.squares(),
            )
        )
    words = [w & 0xFFFFFFFF for w in r.many(RNG_WORDS)]
    rng = random.Random.__new__(random.Random)
    rng.setstate((3, (*words, r.one()), None))
    (phase, round_, start_seat, turn_index, cards_left, version, guild_card, mine_card, tax, reshuffles) = (
        head[:10]
    )
    kept_tile, free_action, technology_taken, barbara_next, building_in_hand = head[10:]
    pending = PendingDecision(pending_seat, KINDS[pending_kind], pending_options) if has_pending else None
    return GameState(
        components=components,
        options=options,
        seed=seed,
        rng=rng,
        players=players,
        phase=PHASES[phase],
        round=round_,
        start_seat=start_seat,
        turn_index=turn_index,
        cards_left_in_turn=cards_left,
        version=version,
        pending=pending,
        agenda=agenda,
        guild_setup_card=guild_card,
        mine_setup_card=mine_card,
        guild_sets_left=guild_sets_left,
        deck_position=deck_position,
        arms=arms,
        tax=tax,
        town_hall=town_hall,
        red_stack=red_stack,
        town_discards=town_discards,
        city=city,
        plots=plots,
        mines=mines,
        rocks=rocks,
        mine_stack=mine_stack,
        mine_discard=mine_discard,
        mine_discards_seen=seen,
        mine_reshuffles=reshuffles,
        drawn=drawn,
        kept_tile=_none(kept_tile),
        free_action=bool(free_action),
        technology_taken=technology_taken,
        barbara_next=barbara_next,
        patrician_bank=bank,
        patrician_pool=pool,
        council=council,
        events=events,
        building_in_hand=_none(building_in_hand),
        final_scores=(
            {seat: dict(zip(FINAL_PARTS, parts, strict=True)) for seat, parts in enumerate(finals)}
            if has_final
            else None
        ),
    )


def _opt(value: int | None) -> int:
    return -1 if value is None else value


def _squares(squares: list[tuple[int, int]]) -> list[int]:
    out = [len(squares)]
    for row, col in squares:
        out += [row, col]
    return out


def from_state(state: GameState) -> list[int]:
    """An engine state written as the core reads it (:func:`to_state` inverted)."""
    s = state
    out = [
        PHASES.index(s.phase),
        s.round,
        s.start_seat,
        s.turn_index,
        s.cards_left_in_turn,
        s.version,
        s.guild_setup_card,
        s.mine_setup_card,
        s.tax,
        s.mine_reshuffles,
        _opt(s.kept_tile),
        int(s.free_action),
        s.technology_taken,
        s.barbara_next,
        _opt(s.building_in_hand),
    ]
    out += [s.deck_position[d] for d in DECKS]
    out += [s.arms[a] for a in ARMS]
    for table in (s.patrician_bank, s.patrician_pool, s.council):
        out += [table[c] for c in COLORS]
    pending = s.pending
    if pending is None:
        out += [0, 0, 0, 0]
    else:
        out += [1, pending.seat, KINDS.index(pending.kind), len(pending.options)]
        for option in pending.options:
            out += _fields(option)
    out.append(len(s.agenda))
    for step in s.agenda:
        out += [STEP_KINDS.index(step.kind), step.seat, len(step.args), *step.args]
    out += [len(s.guild_sets_left), *s.guild_sets_left, len(s.town_hall)]
    for stacks in s.town_hall:
        out.append(len(stacks))
        for stack in stacks:
            out += [LABELS.index(stack.label), len(stack.tiles), *stack.tiles]
    out += [len(s.red_stack), *s.red_stack, len(s.town_discards), *s.town_discards]
    out.append(len(s.city))
    for (row, col), tile in s.city.items():
        out += [row, col, tile.building, _opt(tile.owner)]
    out.append(len(s.plots))
    for (row, col), seat in s.plots.items():
        out += [row, col, seat]
    out.append(len(s.mines))
    for (row, col), placed in s.mines.items():
        out += [row, col, placed.tile, placed.owner]
    out.append(len(s.rocks))
    for (row, col), rock in s.rocks.items():
        out += [row, col, rock]
    out += [len(s.mine_stack), *s.mine_stack, len(s.mine_discard), *s.mine_discard]
    out.append(len(s.mine_discards_seen))
    for seen in s.mine_discards_seen:
        out += [len(seen), *seen]
    out += [len(s.drawn), *s.drawn, len(s.events), *(_opt(e) for e in s.events)]
    finals = s.final_scores
    if finals is None:
        out += [0, 0]
    else:
        out += [1, len(finals)]
        for seat in range(len(finals)):
            out += [finals[seat][part] for part in FINAL_PARTS]
    out.append(len(s.players))
    for p in s.players:
        out += [p.groschen, len(p.guild_set), *(GUILDS.index(g) for g in p.guild_set)]
        out += [len(p.guilds), *(GUILDS.index(g) for g in p.guilds), p.reputation, p.points]
        out += [p.production[c] for c in COMMODITIES]
        out += [p.mine_ore, *p.houses_removed, *_squares(p.plots), len(p.slots), *p.slots]
        out += [p.pelicans, p.pelicans_used, p.miners_pool, p.miners_reserve]
        out += [len(p.hand), *p.hand, len(p.buildings), *p.buildings, *_squares(p.mines)]
    _version, words, _gauss = s.rng.getstate()
    out += [w - (1 << 32) if w >= 1 << 31 else w for w in words[:RNG_WORDS]]
    out.append(words[RNG_WORDS])
    return out


def seed_words(seed: int) -> list[int]:
    """The 32-bit words ``random.Random(seed)`` seeds its generator with (CPython's ``init_by_array``)."""
    n = abs(seed)
    words = []
    while n:
        words.append(n & 0xFFFFFFFF)
        n >>= 32
    return words or [0]
