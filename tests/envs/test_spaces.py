"""The fixed action space and the observation vector: ids name options one to one, the vector holds
what the seat sees and nothing hidden."""

from __future__ import annotations

import random

import numpy as np
import pytest

from kutnahora.engine import GameOptions, GameState, Observer, apply, legal, new_game, observe
from kutnahora.engine.options import DecisionKind
from kutnahora.learned.actions import ActionSpace
from kutnahora.learned.encoding import HIGH, LOW, MAX_SEATS, ObservationLayout
from tests.hidden_information import disguise

SPACE = ActionSpace(ObservationLayout().components)
LAYOUT = ObservationLayout()


def random_games(players: int, games: int, seed: int) -> list[GameState]:
    """Every state of ``games`` random games (states are copied before each decision)."""
    rng = random.Random(seed)
    states: list[GameState] = []
    for g in range(games):
        state = new_game(GameOptions(players=players, events=bool(g % 2)), rng.randrange(2**31))
        while not state.over:
            states.append(state.copy())
            apply(state, rng.choice(legal(state)))
        states.append(state)
    return states


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_legal_option_has_a_distinct_id_that_names_it(players: int) -> None:
    """In many random games, each decision's options map to distinct ids in range, and each id back to
    the very option; the mask marks exactly those ids."""
    kinds: set[DecisionKind] = set()
    decisions = 0
    rng = random.Random(players)
    for g in range(40):
        state = new_game(GameOptions(players=players, events=bool(g % 2)), rng.randrange(2**31))
        while not state.over:
            assert state.pending is not None
            options = legal(state)
            ids = SPACE.ids(options)
            assert len(set(ids)) == len(options), f"{state.pending.kind}: two options share an id"
            assert all(0 <= i < SPACE.size for i in ids)
            assert [SPACE.option_of(i) for i in ids] == list(options)
            mask = SPACE.mask(options)
            assert mask.sum() == len(options) and all(mask[i] == 1 for i in ids)
            kinds.add(state.pending.kind)
            decisions += 1
            apply(state, rng.choice(options))
    assert decisions > 40 * 90
    # The common decisions all occurred (the rarer St. Barbara ones need particular positions).
    assert {DecisionKind.GUILD_SET, DecisionKind.GUILD_ROWS, DecisionKind.PLAY_CARD} <= kinds
    assert {DecisionKind.TAX, DecisionKind.JOKER_ACTION, DecisionKind.REFILL_MINERS} <= kinds
    assert {DecisionKind.MINE_TILE, DecisionKind.RIGHTS_TILE, DecisionKind.PLOT_SQUARE} <= kinds


def test_ids_follow_the_documented_ranges() -> None:
    """A few ids worked out by hand from the table in kutnahora.learned.actions."""
    from kutnahora.engine.components import Action, Guild
    from kutnahora.engine.options import SKIP, ArrangeGuilds, ChooseSquare, ChooseTile, Confirm, PlayCard

    assert [(r.name, r.size) for r in SPACE.ranges] == [
        ("play_card", 18),
        ("joker", 7),
        ("guild_set", 4),
        ("guild_rows", 120),
        ("tile", 36),
        ("square", 42),
        ("guild", 6),
        ("patrician", 4),
        ("confirm", 2),
        ("skip", 1),
    ]
    assert SPACE.size == 240
    # Card 1 shows Rights over Income: its bottom half is the second id of the range.
    assert SPACE.id_of(PlayCard(1, Action.INCOME)) == 1
    assert SPACE.id_of(PlayCard(2, None)) == 5
    assert SPACE.id_of(ArrangeGuilds((Guild.METALLURGISTS, Guild.MINERS, Guild.BUILDERS))) == 29
    assert SPACE.id_of(ChooseTile(35)) == 149 + 35
    assert SPACE.id_of(ChooseSquare(3, 6)) == 185 + 3 * 7 + 6
    assert SPACE.id_of(Confirm(True)) == 238
    assert SPACE.id_of(SKIP) == 239


def test_values_no_decision_can_list_are_refused() -> None:
    from kutnahora.engine.components import Action, Guild
    from kutnahora.engine.options import ArrangeGuilds, ChooseTile, PlayCard

    with pytest.raises(ValueError, match="card 1 shows"):
        SPACE.id_of(PlayCard(1, Action.MINE))
    with pytest.raises(ValueError, match="outside"):
        SPACE.id_of(ChooseTile(36))
    with pytest.raises(ValueError, match="three different guilds"):
        SPACE.id_of(ArrangeGuilds((Guild.MINERS, Guild.MINERS, Guild.BUILDERS)))
    with pytest.raises(ValueError, match=r"outside 0\.\.239"):
        SPACE.option_of(240)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_the_vector_has_one_size_and_stays_in_bounds(players: int) -> None:
    for state in random_games(players, 2, seed=players)[::7]:
        for seat in range(players):
            vector = LAYOUT.encode(observe(state, seat))
            assert vector.shape == (LAYOUT.size,) and vector.dtype == np.float32
            assert vector.min() >= LOW and vector.max() <= HIGH


def test_the_vector_reads_as_documented() -> None:
    """Slices hold the seat-relative values the layout names."""
    state = random_games(3, 1, seed=5)[60]
    for seat in range(3):
        obs = observe(state, seat)
        vector = LAYOUT.encode(obs)
        for k in range(MAX_SEATS):
            block = vector[LAYOUT.section(f"seat +{k}").start :]
            if k >= 3:
                assert not block[: LAYOUT.section("seat +3").stop - LAYOUT.section("seat +3").start].any()
                continue
            player = state.players[(seat + k) % 3]
            assert list(block[:4]) == [1, player.groschen, player.reputation, player.points]
        players = LAYOUT.section("players")
        assert list(vector[players.start : players.stop]) == [0, 1, 0]
        counters = LAYOUT.section("counters")
        assert vector[counters.start] == state.round
        assert vector[counters.start + 6] == len(state.mine_stack)
        prices = LAYOUT.section("market.prices")
        assert list(vector[prices.start : prices.stop]) == [v for _, v in obs.prices]
        owes = LAYOUT.section("pending.seat")
        assert state.pending is not None
        assert vector[owes.start + (state.pending.seat - seat) % 3] == 1
        city = LAYOUT.section("city")
        plots = vector[city.start : city.stop].reshape(6 * 6, -1)[:, 1 : 1 + MAX_SEATS]
        assert plots.sum() == len(state.plots)


@pytest.mark.parametrize("players", [2, 4])
def test_the_vector_holds_nothing_hidden(players: int) -> None:
    """Two games that differ only in what the rules hide give every seat the same vector; another seat's
    drawn mine tiles never show."""
    rng = random.Random(11)
    drawn_seen = 0
    for state in random_games(players, 2, seed=20 + players):
        for seat in range(players):
            owes = state.pending is not None and state.pending.seat == seat
            other = disguise(state, rng, keep_drawn=owes)
            assert np.array_equal(LAYOUT.encode(observe(state, seat)), LAYOUT.encode(observe(other, seat)))
            drawn = LAYOUT.section("private.drawn")
            if state.drawn and owes:
                drawn_seen += 1
                assert LAYOUT.encode(observe(state, seat))[drawn.start : drawn.stop].sum() == len(state.drawn)
    assert drawn_seen > 0


def test_kept_sections_never_go_stale() -> None:
    """A layout keeps the sections it built; in any order of observations, from an Observer or not, its
    vectors equal those of a fresh layout."""
    observations = []
    for players in (2, 4):
        observer = Observer()
        for state in random_games(players, 1, seed=30 + players)[::3]:
            for seat in range(players):
                observations.append(observer.observe(state, seat))
                observations.append(observe(state, seat))
    random.Random(1).shuffle(observations)
    for obs in observations:
        assert np.array_equal(LAYOUT.encode(obs), ObservationLayout().encode(obs))


def test_a_spectator_sees_what_seat_0_sees_but_nothing_private() -> None:
    """A spectator's vector is seat 0's without the private parts: equal while seat 0 owes nothing."""
    for state in random_games(2, 1, seed=8)[::5]:
        spectator = LAYOUT.encode(observe(state, None))
        seat0 = LAYOUT.encode(observe(state, 0))
        private = [LAYOUT.section(name) for name in ("private.drawn", "private.kept", "private.discarded")]
        for part in private:
            assert not spectator[part.start : part.stop].any() or part.name == "private.kept"
        for part in private:
            seat0[part.start : part.stop] = spectator[part.start : part.stop]
        assert np.array_equal(spectator, seat0)
