"""The incremental :class:`kutnahora.engine.Observer` sees exactly what :func:`kutnahora.engine.observe` sees.

A server observes the same game after every decision, so the observer rebuilds only the parts of the
view whose inputs changed. These tests hold it to the plain function at every decision of whole games
and for every viewer, and check that a change made in any way (a number, an entry of a list or dict
inside the state) is seen at once.
"""

from __future__ import annotations

import random
from dataclasses import FrozenInstanceError, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kutnahora.engine import GameOptions, Observer, apply, legal, new_game, observe
from kutnahora.engine.components import Commodity
from kutnahora.engine.state import GameState


def _every_viewer(state: GameState) -> list[int | None]:
    return [None, *range(len(state.players))]


@pytest.mark.parametrize(("players", "events"), [(2, True), (3, False), (3, True), (4, False), (4, True)])
def test_the_observer_equals_observe_at_every_decision_for_every_viewer(players: int, events: bool) -> None:
    state = new_game(GameOptions(players=players, events=events), seed=players * 10 + events)
    rng = random.Random(players)
    observer = Observer()
    decisions = 0
    while not state.over:
        for viewer in _every_viewer(state):
            assert observer.observe(state, viewer) == observe(state, viewer)
        options = legal(state)
        apply(state, options[rng.randrange(len(options))])
        decisions += 1
    for viewer in _every_viewer(state):
        assert observer.observe(state, viewer) == observe(state, viewer)
    assert decisions > 50


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31), players=st.sampled_from([2, 3, 4]), choices=st.randoms())
def test_the_observer_follows_any_game(seed: int, players: int, choices: random.Random) -> None:
    """Hypothesis picks the game and every choice; the seat that owes the decision watches throughout."""
    state = new_game(GameOptions(players=players), seed)
    observer = Observer()
    while not state.over:
        pending = state.pending
        assert pending is not None
        assert observer.observe(state, pending.seat) == observe(state, pending.seat)
        apply(state, choices.choice(legal(state)))
    assert observer.observe(state, 0) == observe(state, 0)


def _midgame() -> GameState:
    """A four-seat game played at random until the city, the mines and the rocks all hold something."""
    state = new_game(GameOptions(players=4), seed=5)
    rng = random.Random(5)
    while not (state.city and state.mines and state.rocks and len(state.town_hall) > 1):
        apply(state, rng.choice(legal(state)))
    assert not state.over
    return state


def test_unchanged_parts_are_the_same_objects_and_changed_ones_are_rebuilt() -> None:
    state = _midgame()
    observer = Observer()
    first = observer.observe(state, 0)
    again = observer.observe(state, 1)
    assert again.town_hall is first.town_hall
    assert again.city is first.city
    assert again.prices is first.prices
    assert all(a is b for a, b in zip(again.players, first.players, strict=True))

    state.players[2].hand.append(99)  # a change inside a list of one seat
    changed = observer.observe(state, 0)
    assert changed.players[2].hand[-1] == 99
    assert changed.players[2] is not first.players[2]
    assert changed.players[1] is first.players[1]
    assert changed == observe(state, 0)


@pytest.mark.parametrize(
    "change",
    [
        lambda s: s.players[1].production.__setitem__(Commodity.WOOD, 7),
        lambda s: setattr(s.players[3], "groschen", s.players[3].groschen + 1),
        lambda s: s.players[0].houses_removed.__setitem__(0, 2),
        lambda s: setattr(s, "tax", s.tax + 1),  # every seat's tax due
        lambda s: s.deck_position.update({d: p + 1 for d, p in s.deck_position.items()}),  # prices, incomes
        lambda s: s.arms.update({arm: (notch + 1) % 3 for arm, notch in s.arms.items()}),
        lambda s: s.town_hall[0][0].tiles.pop(),  # a new top tile
        lambda s: s.town_hall[1].pop(),  # a stack gone
        lambda s: s.plots.__setitem__((0, 0), 1),
        lambda s: s.rocks.clear(),
        lambda s: s.city.update({sq: replace(tile, owner=3) for sq, tile in s.city.items()}),
        lambda s: s.mines.update({sq: replace(tile, owner=2) for sq, tile in s.mines.items()}),
    ],
)
def test_a_change_made_in_place_anywhere_is_seen(change: object) -> None:
    state = _midgame()
    observer = Observer()
    before = observer.observe(state, 0)
    change(state)  # type: ignore[operator]
    after = observer.observe(state, 0)
    assert after == observe(state, 0)
    assert after != before


def test_city_and_mine_tiles_are_replaced_never_changed_in_place() -> None:
    """The observer compares the boards with copies that share their tiles, so a tile cannot change."""
    state = _midgame()
    with pytest.raises(FrozenInstanceError):
        next(iter(state.city.values())).owner = 3  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        next(iter(state.mines.values())).owner = 2  # type: ignore[misc]


def test_every_view_field_holds_the_state_value_of_its_name() -> None:
    """The views are built positionally for speed; this reads each field back by name."""
    from kutnahora.engine.economy import income
    from kutnahora.engine.rounds import tax_due

    state = _midgame()
    for viewer in (None, 0):
        obs = observe(state, viewer)
        assert obs.viewer == viewer
        for name in (
            "version",
            "round",
            "start_seat",
            "cards_left_in_turn",
            "tax",
            "technology_taken",
            "barbara_next",
            "guild_setup_card",
            "mine_setup_card",
            "building_in_hand",
            "over",
        ):
            assert getattr(obs, name) == getattr(state, name), name
        assert obs.phase == state.phase.value
        assert obs.red_stack_size == len(state.red_stack)
        assert obs.mine_stack_size == len(state.mine_stack)
        assert obs.mine_discard_size == len(state.mine_discard)
        assert obs.town_discards == tuple(state.town_discards)
        assert obs.guild_sets_left == tuple(state.guild_sets_left)
        assert obs.patrician_bank == tuple(state.patrician_bank.items())
        assert obs.patrician_pool == tuple(state.patrician_pool.items())
        assert obs.council == tuple(state.council.items())
        assert obs.scores == tuple(p.points for p in state.players)
        assert obs.arms == tuple(state.arms.items())
        for seat, view in enumerate(obs.players):
            player = state.players[seat]
            for name in view._fields:
                if name == "income":
                    assert view.income == income(state, seat)
                elif name == "tax_due":
                    assert view.tax_due == tax_due(state, seat)
                elif name == "production":
                    assert view.production == tuple(player.production.items())
                else:
                    value = getattr(player, name)
                    expected = tuple(value) if isinstance(value, list) else value
                    assert view[view._fields.index(name)] == expected, name


def test_a_seats_fields_are_lists_and_dicts_only_where_the_observer_copies_them() -> None:
    """The observer keeps a seat's field values as they were; it copies the lists and dicts (the fields
    made by a default factory) and keeps the rest as they are, which is right only if they are immutable."""
    from dataclasses import fields

    from kutnahora.engine.state import PlayerState
    from kutnahora.engine.view import _PLAYER_CONTAINERS

    containers = {fields(PlayerState)[index].name for index in _PLAYER_CONTAINERS}
    state = new_game(GameOptions(players=4), seed=9)
    rng = random.Random(9)
    while not state.over:
        for player in state.players:
            for field in fields(PlayerState):
                value = getattr(player, field.name)
                if field.name in containers:
                    assert isinstance(value, list | dict), field.name
                else:
                    hash(value)  # ints, enums, tuples of them: immutable
        apply(state, rng.choice(legal(state)))
