"""The rating plot (kutnahora.web.rating_plot): one line per pool on one axis of games, every point inside
the box, told apart without colour, and described in words."""

from __future__ import annotations

from kutnahora.v1 import arena_service_pb2
from kutnahora.web.rating_plot import HEIGHT, LEFT, RIGHT, TOP, WIDTH, plot


def point(pool: str, game: str, mu: float, seconds: int = 0) -> arena_service_pb2.RatingPoint:
    rating = arena_service_pb2.RatingPoint(pool=pool, game_id=game, mu=mu, sigma=8.0)
    if seconds:
        rating.rated_at.seconds = seconds
    return rating


def test_no_history_no_plot() -> None:
    assert plot([]) is None


def test_pools_share_the_axis_of_games() -> None:
    history = [point("2", "a", 25.0, 1_796_000_000), point("4", "b", 20.0), point("2", "c", 30.0)]
    drawn = plot(history)
    assert drawn is not None
    assert [line.pool for line in drawn.lines] == ["2", "4"]
    two, four = drawn.lines
    assert [p.game_id for p in two.points] == ["a", "c"] and [p.number for p in two.points] == [1, 3]
    assert two.points[0].x < four.points[0].x < two.points[1].x, "in the order rated, whatever the pool"
    assert two.colour != four.colour and two.dashes != four.dashes, "told apart without colour too"
    for p in drawn.rows:
        assert LEFT < p.x < WIDTH - RIGHT and TOP <= p.y <= HEIGHT
    highest = min(drawn.rows, key=lambda p: p.y)
    assert highest.mu == 30.0, "a higher μ is drawn higher"
    assert drawn.rows[0].rated_at == "2026-11-30 00:53 UTC" and drawn.rows[1].rated_at == ""
    assert two.coordinates == " ".join(f"{p.x:.1f},{p.y:.1f}" for p in two.points)
    assert drawn.description == (
        "pool 2: 2 rated games, μ from 25.00 to 30.00 (lowest 25.00, highest 30.00); "
        "pool 4: one rated game, μ from 20.00 to 20.00 (lowest 20.00, highest 20.00)."
    )


def test_one_game_and_a_flat_rating() -> None:
    single = plot([point("2", "a", 25.0)])
    assert single is not None and len(single.rows) == 1
    assert LEFT < single.rows[0].x < WIDTH - RIGHT
    flat = plot([point("2", "a", 25.0), point("2", "b", 25.0)])
    assert flat is not None
    assert [mu for _, mu in flat.ticks] == [25.0], "one label for a rating that did not move"
    assert flat.rows[0].y == flat.rows[1].y
