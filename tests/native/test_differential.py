"""The native core plays the same game as the engine: seeded random and perturbed games in lock-step.

Both engines play every game side by side; before every decision the legal options (as canonical text)
and the whole state (hidden parts and the random generator included, as the core writes it) must be equal,
and every decision's events after it; the engine's state hash and every seat's observation (and a
spectator's) are compared at the start and every few decisions, the hash again at the end, and the final
results (scores, groschen, winners, breakdown) must be equal. Perturbed games change an engine state in
the middle of a game (groschen, reputation, pelicans, the tax) and hand it to the core, which must play
on exactly as the engine does.
``python -m kutnahora.bench.native_bench --differential N`` plays many more.
"""

from __future__ import annotations

import random

import pytest

from kutnahora.bench.native_bench import perturb
from kutnahora.engine import (
    DecisionKind,
    GameOptions,
    apply,
    legal,
    new_game,
    observe,
    option_text,
    result,
    state_hash,
)
from kutnahora.engine.game import IllegalDecision
from kutnahora.engine.state import GameState
from kutnahora.native import native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the native core is not built")

HASH_EVERY = 25


def lockstep(state: GameState, seed: int, perturb_at: int | None = None) -> int:
    """Play ``state`` to its end with random options in both engines, comparing at every decision; returns
    the decisions made."""
    from kutnahora.native.convert import from_state
    from kutnahora.native.game import NativeGame

    native = NativeGame.from_state(state) if state.version else NativeGame.new(state.options, state.seed)
    chooser = random.Random(seed * 7919 + 13)
    assert state_hash(state) == native.state_hash()
    decisions = 0
    while True:
        options = legal(state)
        assert [option_text(o) for o in native.legal()] == [option_text(o) for o in options], (
            f"legal options differ at decision {decisions}"
        )
        assert native._game.dump() == from_state(state), f"states differ at decision {decisions}"
        if decisions % HASH_EVERY == 0:
            assert native.state_hash() == state_hash(state)
            copy = native.to_state()  # what the engine observes a native game from
            for seat in (*range(len(state.players)), None):
                assert observe(copy, seat) == observe(state, seat)
        if not options:
            break
        if perturb_at is not None and decisions == perturb_at:
            perturb(state, chooser)
            native = NativeGame.from_state(state)
            perturb_at = None
            continue
        option = options[chooser.randrange(len(options))]
        assert native.apply(option) == apply(state, option), f"events differ at decision {decisions}"
        decisions += 1
    assert native.over and state.over
    assert native.state_hash() == state_hash(state)
    assert native.result() == result(state)
    assert native.points() == tuple(p.points for p in state.players)
    return decisions


@pytest.mark.parametrize("players", [2, 3, 4])
def test_random_games_are_the_same_game(players: int) -> None:
    for seed in range(60):
        options = GameOptions(players=players, events=seed % 3 == 0)
        lockstep(new_game(options, seed + 1000 * players), seed)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_perturbed_games_are_the_same_game(players: int) -> None:
    for seed in range(30):
        options = GameOptions(players=players, events=seed % 2 == 0)
        state = new_game(options, 50_000 + seed)
        chooser = random.Random(seed)
        target = chooser.randrange(8, 150)  # some way into the game first, in the engine alone, then on
        while not state.over and (state.version < target or state.pending.kind is not DecisionKind.PLAY_CARD):
            moves = legal(state)  # to a card play: its options (a card for no effect) are never empty
            apply(state, moves[chooser.randrange(len(moves))])
        if state.over:
            continue
        lockstep(state, seed, perturb_at=0)


def test_large_seeds_and_setup_cards_are_dealt_alike() -> None:
    from kutnahora.native.game import NativeGame

    for seed in (0, 1, 2**31, 2**32 + 5, 2**64 + 3, -17):
        for guild_card, mine_card in ((None, None), (1, 2)):
            options = GameOptions(players=3, guild_setup_card=guild_card, mine_setup_card=mine_card)
            assert NativeGame.new(options, seed).state_hash() == state_hash(new_game(options, seed))


def test_refusals_change_nothing() -> None:
    from kutnahora.engine.options import ChooseTile, PlayCard
    from kutnahora.native.game import NativeGame

    game = NativeGame.new(GameOptions(players=2), 5)
    before = game.state_hash()
    seat = game.seat
    assert seat is not None
    with pytest.raises(IllegalDecision, match="owes the next decision"):
        game.apply(game.legal()[0], seat=1 - seat)
    with pytest.raises(IllegalDecision, match="is not a legal answer"):
        game.apply(ChooseTile(99))
    with pytest.raises(IllegalDecision, match="is not a legal answer"):
        game.apply(PlayCard(1, None))  # a card play during the guild draft
    assert game.state_hash() == before
    while not game.over:
        game.apply_index(0)
    with pytest.raises(IllegalDecision, match="game is over"):
        game.apply(ChooseTile(1))


def test_clones_are_independent() -> None:
    from kutnahora.native.game import NativeGame

    game = NativeGame.new(GameOptions(players=4), 9)
    for _ in range(30):
        game.apply_index(game.legal_count() - 1)
    copy = game.clone()
    before = game.state_hash()
    copy.playout(3)
    assert copy.over and not game.over
    assert game.state_hash() == before
    engine = game.to_state()
    engine.players[0].groschen += 5  # the engine's copy is a copy too
    assert game.state_hash() == before


def test_a_state_out_of_range_is_refused_when_read() -> None:
    from kutnahora.native import core_module
    from kutnahora.native.convert import from_state
    from kutnahora.native.game import core_components

    state = new_game(GameOptions(players=3), 4)
    table = core_components(state.components, 3)
    written = from_state(state)
    core_module().Game.load(table, written)  # as written: read back
    state.red_stack.append(999)  # no such building
    with pytest.raises(ValueError, match="building id is out of range"):
        core_module().Game.load(table, from_state(state))
    with pytest.raises(ValueError, match="ends too early"):
        core_module().Game.load(table, written[:-5])
    with pytest.raises(ValueError, match="player count"):
        core_module().Game.load(core_components(state.components, 4), written)
