"""Squares, neighbours and matching dots on the city grid (000 · How to Win · Matching dots).

The city is a grid of squares; a building's dot scores when the neighbouring building, or the board's
edge, shows a dot on the facing side. Mines use the same (row, column) squares on their own grid.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import cache

from kutnahora.engine.components import OPPOSITE_SIDE, CityBoard, Side, Square
from kutnahora.engine.state import GameState

STEPS: dict[Side, tuple[int, int]] = {
    Side.NORTH: (-1, 0),
    Side.EAST: (0, 1),
    Side.SOUTH: (1, 0),
    Side.WEST: (0, -1),
}


def on_board(board: CityBoard, square: Square) -> bool:
    """Whether a square is a usable square of this board side."""
    row, col = square
    return 0 <= row < board.rows and 0 <= col < board.columns and square not in board.blocked


@cache
def neighbour_table(board: CityBoard) -> dict[Square, tuple[Square, ...]]:
    """For every usable square of a board, the usable squares sharing a side with it (built once)."""
    return {square: tuple(other for _, other in neighbours(board, square)) for square in board.squares()}


@cache
def board_squares(board: CityBoard) -> tuple[Square, ...]:
    """The usable squares of a board in row-major order (built once)."""
    return board.squares()


def neighbours(board: CityBoard, square: Square) -> Iterator[tuple[Side, Square]]:
    """The usable squares sharing a side with ``square``, with the side they lie on."""
    row, col = square
    for side, (dr, dc) in STEPS.items():
        other = (row + dr, col + dc)
        if on_board(board, other):
            yield side, other


def matching_dots(state: GameState, square: Square) -> int:
    """Points for the building on ``square``: its dots matched by a neighbour's dot or a printed edge dot."""
    board = state.components.board_for(state.options.players)
    tile = state.city[square]
    dots = state.components.building(tile.building).dots
    total = 0
    row, col = square
    for side, (dr, dc) in STEPS.items():
        if not dots.on(side):
            continue
        other = (row + dr, col + dc)
        if on_board(board, other):
            neighbour = state.city.get(other)
            if neighbour is not None and state.components.building(neighbour.building).dots.on(
                OPPOSITE_SIDE[side]
            ):
                total += 1
        elif board.edge_dot(square, side):
            total += 1
    return total


def public_neighbours(state: GameState, square: Square) -> int:
    """How many public buildings share a side with the building on ``square``."""
    board = state.components.board_for(state.options.players)
    count = 0
    for other in neighbour_table(board)[square]:
        tile = state.city.get(other)
        if tile is not None and tile.owner is None:
            count += 1
    return count


def owned_squares(state: GameState, seat: int) -> list[Square]:
    """The city squares holding a building that ``seat`` owns, in row-major order."""
    return sorted(sq for sq, tile in state.city.items() if tile.owner == seat)
