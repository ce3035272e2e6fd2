"""The Rights action: which tiles may be taken, what they cost, and how the town hall's stacks move."""

from __future__ import annotations

import pytest

from kutnahora.engine.components import Commodity, Guild
from kutnahora.engine.economy import price
from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import GameState, TownHallStack
from tests.engine.conftest import give_rights, kind, play, repose, started, texts


def _tops(state: GameState) -> list[list[int]]:
    return [[stack.tiles[-1] for stack in row] for row in state.town_hall]


def _game() -> GameState:
    """Four players; seat 0 belongs to the Builders, Metallurgists and Innkeepers."""
    state = started(4, seed=1, guild_setup_card=1)
    state.players[0].guilds = (Guild.BUILDERS, Guild.METALLURGISTS, Guild.INNKEEPERS)
    repose(state)
    return state


def test_own_guilds_and_public_buildings_only() -> None:
    """003 · The Rights action · step 1: only the top tile of a stack; a guild building must belong to one
    of your 3 guilds; any player may take a public building."""
    state = _game()
    guilds = set(state.players[0].guilds)
    play(state, "play 1 rights")
    assert kind(state) is DecisionKind.RIGHTS_TILE
    offered = {int(t.split()[1]) for t in texts(state)}
    expected = set()
    for row in state.town_hall:
        for stack in row:
            building = state.components.building(stack.tiles[-1])
            assert not set(stack.tiles[:-1]) & offered  # never a tile below the top
            if building.is_public or building.guild in guilds:
                expected.add(building.id)
    assert offered == expected
    assert any(state.components.building(t).is_public for t in offered)
    assert all(state.components.building(t).guild in guilds | {None} for t in offered)


@pytest.mark.parametrize("column", [0, 1, 2])
def test_column_costs(column: int) -> None:
    """003 · The Rights action · step 2: the leftmost column costs 1 groschen; the other columns cost
    1, 2 or 3 permits, at the permit's current price."""
    state = _game()
    permit = price(state, Commodity.PERMITS)
    row = next(r for r, stacks in enumerate(state.town_hall) if _takeable(state, stacks[column]))
    tile = state.town_hall[row][column].tiles[-1]
    play(state, "play 1 rights", f"tile {tile}")
    paid = 40 - state.players[0].groschen
    assert paid == [1, permit, 2 * permit][column]
    assert state.players[0].slots == [tile]


def test_fourth_column_costs_three_permits() -> None:
    """003 · The Rights action · step 2 and docs/rules.md#r6: the fourth column costs 3 permits."""
    state = _game()
    red = state.red_stack.pop()
    state.town_hall[0].append(TownHallStack("red", [red]))
    permit = price(state, Commodity.PERMITS)
    play(state, "play 1 rights", f"tile {red}")
    assert 40 - state.players[0].groschen == 3 * permit


def _takeable(state: GameState, stack: TownHallStack) -> bool:
    building = state.components.building(stack.tiles[-1])
    return building.is_public or building.guild in state.players[0].guilds


def test_stack_moves_to_the_end_of_its_row() -> None:
    """003 · The Rights action · step 4: move that stack to the end of its row and slide the other stacks
    left into the gap."""
    state = _game()
    row = next(r for r, stacks in enumerate(state.town_hall) if _takeable(state, stacks[0]))
    labels = [s.label for s in state.town_hall[row]]
    taken = state.town_hall[row][0]
    tile = taken.tiles[-1]
    below = taken.tiles[-2]
    play(state, "play 1 rights", f"tile {tile}")
    assert [s.label for s in state.town_hall[row]] == [*labels[1:], labels[0]]
    assert state.town_hall[row][-1].tiles[-1] == below


def test_an_emptied_stack_leaves_the_row() -> None:
    """docs/rules.md#r6: an emptied stack leaves the row and the others slide left."""
    state = _game()
    row = next(r for r, stacks in enumerate(state.town_hall) if _takeable(state, stacks[1]))
    stack = state.town_hall[row][1]
    give_rights(state, 1, *stack.tiles[1:])  # leave only the bottom tile
    tile = stack.tiles[-1]
    labels = [s.label for s in state.town_hall[row]]
    play(state, "play 1 rights", f"tile {tile}")
    assert [s.label for s in state.town_hall[row]] == [labels[0], labels[2]]


def test_three_permit_column_stays_empty_until_red_arrive() -> None:
    """003 · The Rights action, note: because stacks always slide left, the 3-permit column stays empty
    until the red-patrician buildings arrive."""
    state = started(4, seed=3)
    taken = 0
    while state.round == 1 and state.pending is not None:
        options = texts(state)
        rights = [t for t in options if t.endswith(" rights")]
        if kind(state) is DecisionKind.PLAY_CARD:
            play(state, rights[0] if rights else options[-1])
        elif kind(state) is DecisionKind.RIGHTS_TILE:
            play(state, options[-1])
            taken += 1
            assert all(len(row) <= 3 for row in state.town_hall)
        else:
            play(state, options[0])
    assert taken >= 8


def test_slots_full_no_rights_action() -> None:
    """003 · The Rights action · step 3: keep the tile in one of the 3 slots above your board; all 3
    full: no Rights action."""
    state = _game()
    give_rights(state, 0, 24, 27)
    repose(state)
    assert "play 1 rights" in texts(state) and "play 6 rights" in texts(state)
    give_rights(state, 0, 30)
    repose(state)
    assert not [t for t in texts(state) if t.endswith(" rights")]
    play(state, "play 4 joker")
    assert "action rights" not in texts(state)


def test_rights_not_offered_when_unaffordable() -> None:
    """003 · The Rights action · step 2 and docs/rules.md#r4: with too little money for any column, the action
    is not offered with effect."""
    state = _game()
    state.players[0].groschen = 0
    repose(state)
    assert "play 1 rights" not in texts(state)
    state.players[0].groschen = 1  # the leftmost column costs 1 groschen
    repose(state)
    play(state, "play 1 rights")
    leftmost = {row[0].tiles[-1] for row in state.town_hall if _takeable(state, row[0])}
    assert {int(t.split()[1]) for t in texts(state)} == leftmost
