"""Patrician scoring at the end of the final three rounds, and the final scoring.

Rules: 000 · Round End Procedure · 2. Patrician Scoring; 000 · Game End; 000 · Winning; docs/rules.md#r13.
"""

from __future__ import annotations

from kutnahora.engine.components import Color
from kutnahora.engine.economy import income
from kutnahora.engine.events import Event, plural
from kutnahora.engine.geometry import matching_dots, owned_squares, public_neighbours
from kutnahora.engine.state import GameState

RED_POINTS_PER_COLUMN = 3
SILVER_POINTS_PER_PAIR = 3
YELLOW_POINTS = ((2, 4), (1, 2))  # (mines in every row, points)
HOUSE_ROWS = 3


def patrician_points(state: GameState, seat: int) -> dict[Color, int]:
    """What each council colour gives one seat this round, already multiplied by its count."""
    player = state.players[seat]
    council = state.council
    green = sum(public_neighbours(state, sq) for sq in owned_squares(state, seat))
    silver = (player.pelicans_used // 2) * SILVER_POINTS_PER_PAIR
    rows = state.components.mine_area.rows
    per_row = [0] * rows
    for row, _ in player.mines:
        per_row[row] += 1
    least = min(per_row) if per_row else 0
    yellow = next((points for need, points in YELLOW_POINTS if least >= need), 0)
    houses = state.components.houses_per_row
    empty_columns = sum(
        1 for column in range(houses) if all(removed > column for removed in player.houses_removed)
    )
    red = empty_columns * RED_POINTS_PER_COLUMN
    return {
        Color.GREEN: green * council[Color.GREEN],
        Color.SILVER: silver * council[Color.SILVER],
        Color.YELLOW: yellow * council[Color.YELLOW],
        Color.RED: red * council[Color.RED],
    }


def score_patricians(state: GameState, events: list[Event]) -> None:
    """Every seat scores every seated patrician."""
    for player in state.players:
        gained = patrician_points(state, player.seat)
        total = sum(gained.values())
        player.points += total
        if total:
            detail = ", ".join(f"{c} {p}" for c, p in gained.items() if p)
            events.append(
                Event(
                    "patrician_scoring",
                    player.seat,
                    f"seat {player.seat} scores {plural(total, 'point')} ({detail})",
                )
            )


def mine_row_points(state: GameState) -> dict[int, int]:
    """Final mine-row points by seat (000 · Game End · 2. Mines), ties sharing the full place value."""
    components = state.components
    area = components.mine_area
    totals = list(area.row_stars)
    by_seat: list[list[int]] = [[0] * area.rows for _ in state.players]
    for (row, _), rock in state.rocks.items():
        totals[row] += components.rock_tiles[rock].stars
    for (row, _), placed in state.mines.items():
        tile_stars = components.mine_tile(placed.tile).stars
        totals[row] += tile_stars
        by_seat[placed.owner][row] += tile_stars
    points = dict.fromkeys(range(len(state.players)), 0)
    for row in range(area.rows):
        table = max(
            (t for t in components.mine_row_scoring if t.min_stars <= totals[row]), key=lambda t: t.min_stars
        )
        stars = {seat: by_seat[seat][row] for seat in points if by_seat[seat][row] > 0}
        for seat, mine in stars.items():
            place = sum(1 for other in stars.values() if other > mine)
            if place < len(table.points):
                points[seat] += table.points[place]
    return points


def final_scoring(state: GameState, events: list[Event]) -> dict[int, dict[str, int]]:
    """Score the end of the game for every seat; returns each seat's breakdown, ``total`` included."""
    mines = mine_row_points(state)
    breakdown: dict[int, dict[str, int]] = {}
    for player in state.players:
        seat = player.seat
        parts = {
            "during_play": player.points,
            "city": sum(matching_dots(state, sq) for sq in owned_squares(state, seat)),
            "mines": mines[seat],
            "income": income(state, seat) // 10,
            "reputation": state.components.reputation_points[player.reputation],
            "extras": len(player.slots) + len(player.plots) + player.pelicans,
        }
        final = sum(v for k, v in parts.items() if k != "during_play")
        player.points += final
        parts["total"] = player.points
        breakdown[seat] = parts
        events.append(
            Event(
                "final_scoring",
                seat,
                f"seat {seat} scores {plural(final, 'point')} at the end, {player.points} in all",
            )
        )
    return breakdown


def winners(state: GameState) -> list[int]:
    """Most points wins, then most groschen; players still tied share the victory (docs/rules.md#r13)."""
    best = max((p.points, p.groschen) for p in state.players)
    return [p.seat for p in state.players if (p.points, p.groschen) == best]
