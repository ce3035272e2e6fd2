"""Hidden information never reaches a viewer who may not see it (docs/architecture.md#hidden-information).

The strongest form of the check: take a game, change only what is hidden (the order of the mine stack,
every town-hall stack below its top tile, the face-down events, the random generator, the tiles another
seat is choosing from) and prove that every other viewer's observation is exactly the same.
"""

from __future__ import annotations

import random

import pytest

from kutnahora.engine import GameOptions, apply, legal, new_game, observe
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import GameState
from tests.hidden_information import disguise


def _positions(players: int, seed: int) -> list[GameState]:
    """Snapshots along a random game, including every mine-tile choice."""
    state = new_game(GameOptions(players=players, events=True), seed)
    chooser = random.Random(seed)
    snapshots = []
    step = 0
    while not state.over:
        if state.pending is not None and (state.pending.kind is DecisionKind.MINE_TILE or step % 15 == 0):
            snapshots.append(state.copy())
        options = legal(state)
        apply(state, options[chooser.randrange(len(options))])
        step += 1
    snapshots.append(state)
    return snapshots


@pytest.mark.parametrize("players", [2, 3, 4])
def test_observations_do_not_depend_on_hidden_information(players: int) -> None:
    """No stack order, no other seat's drawn tiles, no face-down event, no generator state is visible."""
    rng = random.Random(players)
    mine_choices = 0
    for state in _positions(players, seed=40 + players):
        twin = disguise(state, rng, keep_drawn=False)
        drawer = state.pending.seat if state.drawn and state.pending is not None else None
        mine_choices += drawer is not None
        for viewer in [None, *range(players)]:
            if viewer is not None and viewer == drawer:
                continue
            assert observe(twin, viewer) == observe(state, viewer), f"viewer {viewer} sees hidden information"
    assert mine_choices > 0, "the game should have met a mine-tile choice"


def test_the_drawing_seat_sees_its_tiles_and_options_only_it() -> None:
    """003 · The Mine action · step 2: the drawing seat sees what it drew; others see only how many."""
    for state in _positions(4, seed=3):
        if state.pending is None or state.pending.kind is not DecisionKind.MINE_TILE:
            continue
        seat = state.pending.seat
        own = observe(state, seat)
        assert sorted(own.drawn) == sorted(state.drawn)
        assert own.pending is not None and own.pending.options == state.pending.options
        for other in [None, *(s for s in range(4) if s != seat)]:
            view = observe(state, other)
            assert view.drawn == ()
            assert view.pending is not None and view.pending.options == ()
            assert view.pending.kind is DecisionKind.MINE_TILE and view.pending.seat == seat
        return
    pytest.fail("no mine-tile choice met")


def test_public_facts_are_visible_to_everyone() -> None:
    """Each seat's board, the city, the prices and the town-hall tops are public (002 · Your turn)."""
    state = _positions(3, seed=8)[-1]
    spectator = observe(state, None)
    assert spectator.over
    assert [p.groschen for p in spectator.players] == [p.groschen for p in state.players]
    assert len(spectator.city) == len(state.city)
    assert spectator.scores == tuple(p.points for p in state.players)
    assert [[s.top for s in row] for row in spectator.town_hall] == [
        [s.tiles[-1] for s in row] for row in state.town_hall
    ]


def test_unknown_seat_is_refused() -> None:
    """A seat outside the game has no view."""
    state = new_game(GameOptions(players=2), 1)
    with pytest.raises(ValueError, match="seat must be"):
        observe(state, 2)
