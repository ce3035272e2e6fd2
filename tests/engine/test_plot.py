"""The Plot action: which squares may be claimed and what they cost."""

from __future__ import annotations

from kutnahora.engine.options import DecisionKind
from kutnahora.engine.state import GameState
from kutnahora.engine.town import plot_costs
from tests.engine.conftest import build, claim, kind, named, play, repose, started, texts

SAWMILL = named("Sawmill")
GLASSWORKS = named("Glassworks")
CHURCH_OF_OUR_LADY = named("Church of Our Lady")  # green public building


def _squares(state: GameState) -> set[tuple[int, int]]:
    result = set()
    for text in texts(state):
        row, col = text.split()[1].split(",")
        result.add((int(row), int(col)))
    return result


def test_no_building_any_square_for_five() -> None:
    """003 · The Plot action · step 1: no buildings in town yet, any free square for 5 groschen."""
    state = started(4)
    board = state.components.board_for(4)
    claim(state, 1, (3, 3))
    repose(state)
    play(state, "play 2 plot")
    assert kind(state) is DecisionKind.PLOT_SQUARE
    assert _squares(state) == set(board.squares()) - {(3, 3)}
    play(state, "square 1,1")
    assert state.players[0].groschen == 40 - 5
    assert state.players[0].plots == [(1, 1)] and state.plots[(1, 1)] == 0


def test_only_beside_a_building_at_its_plot_cost() -> None:
    """003 · The Plot action · step 1: otherwise a free square sharing a side with a building, at the plot
    cost printed in the building's top right corner — the highest if it touches several, not the sum."""
    state = started(4)
    build(state, (2, 2), SAWMILL, 1)
    build(state, (2, 4), GLASSWORKS, 2)
    low = state.components.building(SAWMILL).plot_cost
    high = state.components.building(GLASSWORKS).plot_cost
    assert low < high
    claim(state, 3, (3, 2))
    costs = plot_costs(state, 0, free=False)
    assert costs == {
        (1, 2): low,
        (2, 1): low,
        (2, 3): high,  # beside both: the highest, not low + high
        (1, 4): high,
        (2, 5): high,
        (3, 4): high,
    }
    repose(state)
    play(state, "play 2 plot")
    assert _squares(state) == set(costs)
    play(state, "square 2,3")
    assert state.players[0].groschen == 40 - high


def test_all_squares_beside_buildings_claimed_any_square_for_five() -> None:
    """000 · The Plot Action · step 1: if all plots next to buildings are claimed, then once again you may
    claim any unclaimed square for 5 groschen."""
    state = started(4)
    board = state.components.board_for(4)
    build(state, (0, 1), CHURCH_OF_OUR_LADY, None)  # (0,0) is not a square of the board
    claim(state, 1, (0, 2))
    claim(state, 2, (1, 1))
    costs = plot_costs(state, 0, free=False)
    taken = {(0, 1), (0, 2), (1, 1)}
    assert costs == dict.fromkeys(set(board.squares()) - taken, 5)


def test_reputation_three_plots_cost_one() -> None:
    """000 · Reputation: at reputation 3 or more, claiming a plot costs only 1 groschen."""
    state = started(4)
    build(state, (2, 4), GLASSWORKS, 2)
    state.players[0].reputation = 2
    assert set(plot_costs(state, 0, free=False).values()) == {state.components.building(GLASSWORKS).plot_cost}
    state.players[0].reputation = 3
    assert set(plot_costs(state, 0, free=False).values()) == {1}
    repose(state)
    play(state, "play 2 plot", "square 2,3")
    assert state.players[0].groschen == 39
    state2 = started(4)
    state2.players[0].reputation = 7
    repose(state2)
    play(state2, "play 2 plot", "square 4,4")
    assert state2.players[0].groschen == 39


def test_no_plot_marker_left() -> None:
    """003 · The Plot action · step 2: never more than 3 plots claimed; without a marker the action has
    no effect (001 · Special Cases · Running out of pieces) and is not offered (docs/rules.md#r4)."""
    state = started(4)
    claim(state, 0, (1, 1), (1, 2))
    repose(state)
    assert "play 2 plot" in texts(state) and "play 3 plot" in texts(state)
    claim(state, 0, (1, 3))
    repose(state)
    assert not [t for t in texts(state) if t.endswith(" plot")]


def test_only_affordable_squares_are_offered() -> None:
    """003 · The Plot action · step 1: the cost must be paid; unaffordable squares are not offered."""
    state = started(4)
    build(state, (2, 2), SAWMILL, 1)
    build(state, (2, 4), GLASSWORKS, 2)
    low = state.components.building(SAWMILL).plot_cost
    state.players[0].groschen = low
    repose(state)
    play(state, "play 2 plot")
    assert _squares(state) == {(1, 2), (2, 1), (3, 2)}
    play(state, "square 1,2")
    assert state.players[0].groschen == 0
    assert not [t for t in texts(state) if t.endswith(" plot")]  # the second card: nothing affordable


def test_claimed_and_built_squares_are_never_offered() -> None:
    """003 · The Plot action · step 1: only a free square may be claimed."""
    state = started(4)
    build(state, (2, 2), SAWMILL, 1)
    claim(state, 1, (2, 1))
    claim(state, 0, (1, 2))
    costs = plot_costs(state, 0, free=False)
    assert (2, 2) not in costs and (2, 1) not in costs and (1, 2) not in costs
    assert set(costs) == {(2, 3), (3, 2)}
