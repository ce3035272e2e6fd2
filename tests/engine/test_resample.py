"""Cloning a state, and resampling one from a seat's observation without reading what it hides.

The resampler's three promises (docs/architecture.md#hidden-information): states that differ only in what a
seat cannot see resample alike; a resampled state, observed from that seat, gives back the observation; and
over many samples every hidden tile turns up exactly where the rules leave room for it (the mine stack is
tier I over II over III until its discards are shuffled, 000 · Board Setup · 12 and 001 · Rules Reminders; a
guild stack's marked tile is its bottom, 000 · Board Setup · 4; A events before the red arrival, B after,
000 · Two-Player Game).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import fields

import pytest

from kutnahora.engine import (
    DecisionKind,
    GameOptions,
    GameState,
    Option,
    apply,
    clone,
    legal,
    new_game,
    observe,
    pending_options,
    resample,
    state_hash,
)
from kutnahora.engine.components import Action
from kutnahora.engine.options import PlayCard
from kutnahora.engine.state import PendingDecision

Chooser = Callable[[GameState, random.Random], Option]


def random_choice(state: GameState, rng: random.Random) -> Option:
    """Any legal option."""
    return rng.choice(legal(state))


def prospector(state: GameState, rng: random.Random) -> Option:
    """Mines whenever it can and discards every tile it draws: the mine stack runs out and is reshuffled."""
    options = legal(state)
    assert state.pending is not None
    kind = state.pending.kind
    if kind is DecisionKind.PLAY_CARD:
        mining = [o for o in options if isinstance(o, PlayCard) and o.action in (Action.MINE, Action.INCOME)]
        if mining:
            return rng.choice(mining)
    if kind is DecisionKind.MINE_TILE:
        return options[-1]  # skip: discard them all
    if kind is DecisionKind.REFILL_MINERS:
        return options[0]
    return rng.choice(options)


def positions(
    players: int, seed: int, chooser: Chooser = random_choice, every: int = 7
) -> Iterator[GameState]:
    """Every ``every``-th position of one seeded game (the state itself: copy it before keeping it)."""
    state = new_game(GameOptions(players=players, events=seed % 2 == 0), seed)
    rng = random.Random(seed)
    while not state.over:
        if state.version % every == 0:
            yield state
        apply(state, chooser(state, rng))


def played_to(players: int, seed: int, chooser: Chooser, stop: Callable[[GameState], bool]) -> GameState:
    """The first position of a seeded game where ``stop`` holds."""
    for state in positions(players, seed, chooser, every=1):
        if stop(state):
            return state.copy()
    raise AssertionError("the game ended first")


# ---- clone -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_a_clone_equals_the_state_field_by_field_and_plays_on_alike(players: int) -> None:
    for state in positions(players, 11 + players, every=5):
        copy = clone(state)
        for f in fields(state):
            if f.name != "rng":
                assert getattr(copy, f.name) == getattr(state, f.name), f.name
        assert copy.rng.getstate() == state.rng.getstate()
        assert state_hash(copy) == state_hash(state)


def test_a_clone_is_independent_of_its_original() -> None:
    for state in positions(4, 5, prospector, every=9):
        before = state_hash(state), [list(s) for s in state.mine_discards_seen], state.mine_reshuffles
        copy = clone(state)
        rng = random.Random(state.version)
        while not copy.over:
            apply(copy, prospector(copy, rng))
        assert (state_hash(state), state.mine_discards_seen, state.mine_reshuffles) == before


# ---- the options of a decision, worked out again -------------------------------------------------------


@pytest.mark.parametrize(("players", "chooser"), [(2, random_choice), (3, random_choice), (4, prospector)])
def test_pending_options_are_the_options_the_engine_posed(players: int, chooser: Chooser) -> None:
    """Every decision of whole games: the options worked out again equal those the rule module posed."""
    kinds = set()
    for seed in range(6):
        for state in positions(players, seed * 10 + players, chooser, every=1):
            pending = state.pending
            assert pending is not None
            kinds.add(pending.kind)
            assert pending_options(state, pending.seat, pending.kind) == pending.options
    assert len(kinds) >= 10


# ---- resample: the observation comes back -------------------------------------------------------------


@pytest.mark.parametrize(("players", "chooser"), [(2, random_choice), (3, random_choice), (4, prospector)])
def test_a_resampled_state_gives_back_the_observation_it_was_built_from(
    players: int, chooser: Chooser
) -> None:
    shuffled = 0
    for seed in range(4):
        for state in positions(players, seed * 7 + players, chooser, every=3):
            shuffled += state.mine_reshuffles > 0
            for viewer in [None, *range(players)]:
                observation = observe(state, viewer)
                resampled = resample(observation, random.Random(state.version))
                assert observe(resampled, viewer) == observation
                assert legal(resampled) or resampled.over
    if chooser is prospector:
        assert shuffled, "no position after a reshuffle of the mine discards was tried"


def test_a_resampled_state_plays_on_to_the_end_of_the_game() -> None:
    """Its hidden parts, agenda and pending options are complete: random play finishes it."""
    for state in positions(4, 3, prospector, every=11):
        resampled = resample(observe(state, 1), random.Random(1))
        rng = random.Random(2)
        while not resampled.over:
            apply(resampled, prospector(resampled, rng))


def test_a_finished_game_is_refused() -> None:
    state = next(positions(2, 1, every=1))
    while not state.over:
        apply(state, legal(state)[0])
    with pytest.raises(ValueError, match="over"):
        resample(observe(state, 0), random.Random(1))


# ---- resample: only the observation counts ------------------------------------------------------------


def redeal(state: GameState, viewer: int, rng: random.Random) -> GameState:
    """Another real game in the same position for ``viewer``: every part hidden from it dealt again as the
    rules could have dealt it (tiles of one mine tier swapped among the places hidden from the viewer, or
    any tiles once the tiers are mixed; town-hall stacks reordered above their marked tile; future events
    from their deck's unseen cards; another generator)."""
    other = state.copy()
    tiers = {t.id: t.tier for t in other.components.mine_tiles}
    known = set(other.mine_discards_seen[viewer])
    own = other.pending is not None and other.pending.seat == viewer
    places: list[tuple[list[int], int]] = [(other.mine_stack, i) for i in range(len(other.mine_stack))]
    places += [(other.mine_discard, i) for i, t in enumerate(other.mine_discard) if t not in known]
    if not own:
        places += [(other.drawn, i) for i in range(len(other.drawn))]
    groups: dict[int, list[tuple[list[int], int]]] = {}
    for place in places:
        tier = 0 if other.mine_reshuffles else tiers[place[0][place[1]]]
        groups.setdefault(tier, []).append(place)
    renamed: dict[int, int] = {}
    for group in groups.values():
        tiles = [where[i] for where, i in group]
        dealt = tiles.copy()
        rng.shuffle(dealt)
        for (where, i), old, new in zip(group, tiles, dealt, strict=True):
            where[i] = new
            renamed[old] = new
    for seat, seen in enumerate(other.mine_discards_seen):
        if seat != viewer:
            seen[:] = [renamed.get(t, t) for t in seen]
    if not own and other.kept_tile is not None and other.kept_tile in renamed:
        other.kept_tile = renamed[other.kept_tile]
    for row in other.town_hall:
        for stack in row:
            bottom = 1 if other.components.building(stack.tiles[0]).bottom else 0
            below = stack.tiles[bottom:-1]
            rng.shuffle(below)
            stack.tiles[bottom:-1] = below
    rng.shuffle(other.red_stack)
    if other.events:
        seen_events = set(other.events[: other.round])
        for deck in ("A", "B"):
            cards = [e.id for e in other.components.event_cards if e.deck == deck and e.id not in seen_events]
            rounds = [
                r
                for r in range(other.round, len(other.events))
                if other.events[r] is not None and other.components.event_cards[other.events[r]].deck == deck  # type: ignore[index]
            ]
            rng.shuffle(cards)
            for r, card in zip(rounds, cards, strict=False):
                other.events[r] = card
    other.rng = random.Random(rng.random())
    pending = other.pending
    if pending is not None and not own:
        other.pending = PendingDecision(
            pending.seat, pending.kind, pending_options(other, pending.seat, pending.kind)
        )
    return other


@pytest.mark.parametrize(("players", "chooser"), [(2, random_choice), (4, random_choice), (4, prospector)])
def test_states_that_differ_only_in_hidden_parts_resample_alike(players: int, chooser: Chooser) -> None:
    differed = 0
    for state in positions(players, 20 + players, chooser, every=5):
        if state.phase in ("guild_sets", "guild_rows"):
            continue
        viewer = state.version % players
        other = redeal(state, viewer, random.Random(state.version))
        observation = observe(state, viewer)
        assert observe(other, viewer) == observation
        differed += state_hash(other) != state_hash(state)
        a = resample(observation, random.Random(99))
        b = resample(observe(other, viewer), random.Random(99))
        assert state_hash(a) == state_hash(b)
        assert a.mine_discards_seen == b.mine_discards_seen
        assert a.pending == b.pending
    assert differed > 10


# ---- resample: each hidden tile where it may be, and everywhere it may be ---------------------------------


def _places_of_mine_tiles(state: GameState) -> dict[int, str]:
    where = {t: "stack" for t in state.mine_stack}
    where.update({t: "discard" for t in state.mine_discard})
    where.update({t: "hand" for t in state.drawn})
    if state.kept_tile is not None and state.kept_tile < len(state.components.mine_tiles):
        where[state.kept_tile] = "hand"
    return where


@pytest.mark.parametrize("reshuffled", [False, True])
def test_hidden_mine_tiles_appear_where_they_may_and_everywhere_they_may(reshuffled: bool) -> None:
    viewer = 2

    def ready(state: GameState) -> bool:
        pending = state.pending
        return (
            pending is not None
            and pending.kind is DecisionKind.MINE_TILE
            and pending.seat != viewer
            and len(state.mine_discard) >= 4
            and len(state.mine_discards_seen[viewer]) >= 1
            and (state.mine_reshuffles > 0) == reshuffled
            and (reshuffled or len(state.mine_stack) > 9)
        )

    state = played_to(4, 8, prospector, ready)
    tiers = {t.id: t.tier for t in state.components.mine_tiles}
    observation = observe(state, viewer)
    real = _places_of_mine_tiles(state)
    own_discards = set(state.mine_discards_seen[viewer])
    hidden = {t for t, place in real.items() if t not in own_discards}
    # where the rules leave room for each hidden tile, worked out from the real game
    stack_tiers = {tiers[t] for t in state.mine_stack}
    drawn_tiers = {tiers[t] for t, place in real.items() if place != "stack" and t not in own_discards}
    may: dict[int, set[str]] = {}
    for tile in hidden:
        places = {"discard", "hand"} if (reshuffled or tiers[tile] in drawn_tiers) else set()
        if reshuffled or tiers[tile] in stack_tiers:
            places.add("stack")
        may[tile] = places

    seen: dict[int, set[str]] = {t: set() for t in real}
    for sample in range(300):
        resampled = resample(observation, random.Random(sample))
        places = _places_of_mine_tiles(resampled)
        assert places.keys() == real.keys()
        for tile in own_discards:
            assert places[tile] == "discard"
        for tile in hidden:
            seen[tile].add(places[tile])
        if not reshuffled:
            order = [tiers[t] for t in resampled.mine_stack]
            assert order == sorted(order, reverse=True), "tier III at the bottom, tier I on top"
        assert sorted(tiers[t] for t in resampled.mine_stack) == sorted(
            tiers[t] for t in state.mine_stack
        ) or (reshuffled)
    for tile in hidden:
        assert seen[tile] == may[tile], (tile, tiers[tile])
    if not reshuffled:
        assert any(places == {"stack"} for places in may.values()), "some tiles may only be in the stack"


def test_town_hall_tiles_and_events_appear_where_they_may_and_everywhere_they_may() -> None:
    state = played_to(2, 4, random_choice, lambda s: s.round == 2 and s.phase == "turns")
    observation = observe(state, 0)
    below: dict[tuple[int, int], set[tuple[int, int]]] = {}
    future: dict[int, set[int | None]] = {}
    for sample in range(300):
        resampled = resample(observation, random.Random(sample))
        for r, row in enumerate(resampled.town_hall):
            for c, stack in enumerate(row):
                real = state.town_hall[r][c].tiles
                assert stack.tiles[-1] == real[-1]
                assert sorted(stack.tiles) == sorted(real)
                if state.components.building(real[0]).bottom:
                    assert stack.tiles[0] == real[0], "a guild stack's marked tile stays at the bottom"
                for depth, tile in enumerate(stack.tiles[:-1]):
                    below.setdefault((r, c), set()).add((depth, tile))
        assert resampled.events[: state.round] == state.events[: state.round]
        for r in range(state.round, len(state.events)):
            future.setdefault(r, set()).add(resampled.events[r])
    for (r, c), pairs in below.items():
        real = state.town_hall[r][c].tiles
        fixed = 1 if state.components.building(real[0]).bottom else 0
        movable = real[fixed:-1]
        expected = {(0, real[0])} if fixed else set()
        expected |= {(depth, tile) for depth in range(fixed, len(real) - 1) for tile in movable}
        assert pairs == expected
    track = state.components.rounds_tracks[2]
    revealed = set(state.events[: state.round])
    for r, events in future.items():
        round_number = r + 1
        if round_number == track.rounds:
            assert events == {None}
            continue
        deck = "A" if round_number <= track.red_arrival_round else "B"
        unseen = {e.id for e in state.components.event_cards if e.deck == deck and e.id not in revealed}
        assert events == unseen
