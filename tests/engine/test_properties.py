"""Random-playout properties over many seeds and every player count (STYLE · tests in layers).

Every game is played with random legal options and checked after every decision: it ends after the
right number of rounds; groschen never go negative; reputation stays within −5..9 (docs/rules.md#r10); the tax
counter within 0..25 (001 · Special Cases · Limits); every piece is conserved; every pending decision has
legal, distinct options; and a replay of the decisions rebuilds the same state hash (docs/rules.md#r14).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kutnahora.engine import GameOptions, apply, legal, new_game, replay, result, state_hash
from kutnahora.engine.components import Color
from kutnahora.engine.options import Option
from kutnahora.engine.rounds import rounds_in_game
from kutnahora.engine.state import GameState, StepKind


def check_invariants(state: GameState) -> None:
    """Everything that must hold between any two decisions."""
    c = state.components
    assert 0 <= state.tax <= c.tax_limit
    for p in state.players:
        assert p.groschen >= 0, f"seat {p.seat} has {p.groschen} groschen"
        assert -5 <= p.reputation <= 9
        assert p.pelicans >= 0 and p.pelicans_used >= 0
        # miners: pool + reserve + miners standing on mines = 9
        assert 0 <= p.miners_pool <= c.miner_pool_size
        assert p.miners_pool + p.miners_reserve + len(p.mines) == c.miners_per_player
        # houses: each owned guild building carries one (placed after its effects); at most 4 per row
        assert all(0 <= removed <= c.houses_per_row for removed in p.houses_removed)
        houses_to_place = sum(1 for s in state.agenda if s.kind is StepKind.HOUSE and s.seat == p.seat)
        assert len(p.buildings) <= sum(p.houses_removed) + houses_to_place
        # plot markers: at most 3 in town, and the board agrees
        assert len(p.plots) <= c.plot_markers
        assert all(state.plots[sq] == p.seat for sq in p.plots)
        assert len(p.slots) <= c.building_slots
        assert len(p.hand) <= len(c.action_cards)
    assert len(state.plots) == sum(len(p.plots) for p in state.players)
    assert not set(state.plots) & set(state.city)
    # patricians: bank + pool + council = 3 per colour
    for color in Color:
        total = state.patrician_bank[color] + state.patrician_pool[color] + state.council[color]
        assert total == c.patricians_per_color
    # building tiles: town hall + red stack + slots + city + town discards = 36, each once
    tiles = [t for row in state.town_hall for stack in row for t in stack.tiles]
    tiles += state.red_stack + state.town_discards + [t.building for t in state.city.values()]
    tiles += [t for p in state.players for t in p.slots]
    if state.building_in_hand is not None:
        assert state.building_in_hand in [t for p in state.players for t in p.slots]
    assert sorted(tiles) == list(range(len(c.buildings)))
    # mine tiles: stack + discards + drawn + kept + mines = 27 (technology tiles counted apart)
    n_mines = len(c.mine_tiles)
    held = state.mine_stack + state.mine_discard + state.drawn
    held += [m.tile for m in state.mines.values() if m.tile < n_mines]
    if state.kept_tile is not None and state.kept_tile < n_mines:
        held.append(state.kept_tile)
    assert sorted(held) == list(range(n_mines))
    technology_placed = [m.tile for m in state.mines.values() if m.tile >= n_mines]
    assert len(technology_placed) <= state.technology_taken <= len(c.technology_tiles)
    assert not set(state.mines) & set(state.rocks)
    # the pending decision
    if state.over:
        assert state.pending is None
    else:
        assert state.pending is not None
        options = state.pending.options
        assert options, f"{state.pending.kind} has no options"
        assert len(set(options)) == len(options), "options must be distinct"
        assert 0 <= state.pending.seat < len(state.players)


def play_random(state: GameState, chooser: random.Random, *, check: bool = True) -> list[Option]:
    """Play to the end with random legal options; returns the decisions taken."""
    decisions: list[Option] = []
    while not state.over:
        options = legal(state)
        option = options[chooser.randrange(len(options))]
        apply(state, option)
        decisions.append(option)
        if check:
            check_invariants(state)
        assert len(decisions) < 2000, "a game must end"
    return decisions


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("seed", range(12))
def test_random_playout_keeps_every_invariant(players: int, seed: int) -> None:
    """002 · Overview: 5 rounds with four players, 6 with two or three; invariants hold throughout."""
    state = new_game(GameOptions(players=players, events=seed % 2 == 1), seed)
    check_invariants(state)
    decisions = play_random(state, random.Random(seed))
    assert state.over
    assert state.round == rounds_in_game(state) == (5 if players == 4 else 6)
    outcome = result(state)
    assert outcome is not None
    assert outcome.scores == tuple(p.points for p in state.players)
    assert outcome.winners
    # docs/rules.md#r14: options, seed and decisions define the game.
    again = replay(state.options, seed, decisions)
    assert state_hash(again) == state_hash(state)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(players=st.sampled_from([2, 3, 4]), seed=st.integers(0, 2**32 - 1), choices=st.randoms())
def test_any_seed_any_choices_reaches_a_result(players: int, seed: int, choices: random.Random) -> None:
    """Any seed and any sequence of legal options end in a final result (docs/rules.md#r3: never stuck)."""
    state = new_game(GameOptions(players=players), seed)
    play_random(state, choices)
    assert result(state) is not None


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_listed_option_applies(players: int) -> None:
    """Every legal option of every decision met along a game applies without error."""
    state = new_game(GameOptions(players=players), 99)
    chooser = random.Random(99)
    seen: Counter[str] = Counter()
    while not state.over:
        options = legal(state)
        for option in options:
            trial = state.copy()
            apply(trial, option)
            check_invariants(trial)
        seen[state.pending.kind.value] += 1  # type: ignore[union-attr]
        apply(state, options[chooser.randrange(len(options))])
    assert seen["play_card"] == rounds_in_game(state) * players * 5


def test_same_seed_same_game_different_seed_different_setup() -> None:
    """docs/rules.md#r14: every shuffle comes from the game's seeded generator."""
    a = new_game(GameOptions(players=4), 5)
    b = new_game(GameOptions(players=4), 5)
    c = new_game(GameOptions(players=4), 6)
    assert state_hash(a) == state_hash(b)
    assert state_hash(a) != state_hash(c)


def test_copy_is_independent() -> None:
    """A copied state evolves on its own; the original's hash is untouched."""
    state = new_game(GameOptions(players=3), 11)
    before = state_hash(state)
    twin = state.copy()
    assert state_hash(twin) == before
    play_random(twin, random.Random(1), check=False)
    assert state_hash(state) == before
