"""A bot's rating over time, drawn on the server as SVG: one line per pool of its μ after each rated game.

The x axis is the bot's rated games in the order they were rated (all pools on one axis, so that the pools'
lines keep their places in time), the y axis its μ. Each pool's line has a colour and a dash pattern of its
own (told apart without colour too), each game a point with a tooltip. For those who cannot see it, the
plot has a title and a description in words (each pool's first, last, lowest and highest μ), and
:attr:`Plot.rows` holds every number for a table beside it (``_rating_plot.html``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC

from kutnahora.v1 import arena_service_pb2

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28
"""The plot's box and its margins (the y axis's labels on the left, the x axis's below)."""
INSET = 8
"""The first and the last point's distance from the box's sides."""
COLOURS = ("#1f5fa8", "#b3261e", "#1e7a34", "#7b3fa0", "#a05a00")
DASHES = ("", "6 3", "2 3", "8 3 2 3", "1 2")


@dataclass(frozen=True, slots=True)
class Point:
    """A rating after one game, and where it is drawn."""

    number: int  # the game's place among the bot's rated games, from 1
    pool: str
    game_id: str
    mu: float
    sigma: float
    rated_at: str  # "2026-12-07 00:14 UTC", or "" when the arena did not say
    x: float
    y: float


@dataclass(frozen=True, slots=True)
class Line:
    """One pool's line."""

    pool: str
    colour: str
    dashes: str
    points: list[Point] = field(default_factory=list)

    @property
    def coordinates(self) -> str:
        """The line's points as SVG's ``points`` attribute reads them."""
        return " ".join(f"{p.x:.1f},{p.y:.1f}" for p in self.points)

    @property
    def summary(self) -> str:
        """The line in words."""
        values = [p.mu for p in self.points]
        games = "one rated game" if len(values) == 1 else f"{len(values)} rated games"
        return (
            f"pool {self.pool}: {games}, μ from {values[0]:.2f} to {values[-1]:.2f} "
            f"(lowest {min(values):.2f}, highest {max(values):.2f})"
        )


@dataclass(frozen=True, slots=True)
class Plot:
    """What ``_rating_plot.html`` draws."""

    width: int
    height: int
    lines: list[Line]
    rows: list[Point]  # every point, in the order rated
    ticks: list[tuple[float, float]]  # (y, μ) of the y axis's labels
    left: int = LEFT
    bottom: float = HEIGHT - BOTTOM
    right: float = WIDTH - RIGHT

    @property
    def description(self) -> str:
        """The plot in words, for its ``<desc>``."""
        return "; ".join(line.summary for line in self.lines) + "."


def _when(point: arena_service_pb2.RatingPoint) -> str:
    if not point.HasField("rated_at") or point.rated_at.seconds == 0:
        return ""
    return point.rated_at.ToDatetime(tzinfo=UTC).strftime("%Y-%m-%d %H:%M UTC")


def plot(history: Sequence[arena_service_pb2.RatingPoint]) -> Plot | None:
    """The plot of a bot's μ after each rated game (the arena's history, oldest first), or None without
    any."""
    if not history:
        return None
    values = [p.mu for p in history]
    low, high = min(values), max(values)
    margin = max((high - low) * 0.08, 0.5)
    low, high = low - margin, high + margin
    inner_width = WIDTH - LEFT - RIGHT - 2 * INSET
    inner_height = HEIGHT - TOP - BOTTOM
    steps = max(1, len(history) - 1)

    def y_of(mu: float) -> float:
        return TOP + inner_height * (1 - (mu - low) / (high - low))

    lines: dict[str, Line] = {}
    rows = []
    for index, rating in enumerate(history):
        x = LEFT + INSET + (inner_width * index / steps if len(history) > 1 else inner_width / 2)
        point = Point(
            index + 1, rating.pool, rating.game_id, rating.mu, rating.sigma, _when(rating), x, y_of(rating.mu)
        )
        rows.append(point)
        if rating.pool not in lines:
            style = len(lines)
            lines[rating.pool] = Line(rating.pool, COLOURS[style % len(COLOURS)], DASHES[style % len(DASHES)])
        lines[rating.pool].points.append(point)
    shown = sorted({round(mu, 2) for mu in (low + margin, (low + high) / 2, high - margin)})
    ticks = [(y_of(mu), mu) for mu in shown]
    return Plot(WIDTH, HEIGHT, list(lines.values()), rows, ticks)
