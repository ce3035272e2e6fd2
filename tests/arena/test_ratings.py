"""Ratings: places from a result, one openskill update per game, and recomputing from stored results."""

from __future__ import annotations

import subprocess
from pathlib import Path

from openskill.models import PlackettLuce

from kutnahora.arena.ratings import RatedGame, Rating, SeatOutcome, places, rate, recompute
from kutnahora.arena.store import ArenaStore
from kutnahora.plumbing import auth
from tests.clients.helpers import ROOT, python_module


def test_places_follow_score_then_groschen_and_lost_seats_are_last() -> None:
    assert places([SeatOutcome(30, 5), SeatOutcome(40, 0)]) == [2, 1]
    assert places([SeatOutcome(30, 5), SeatOutcome(30, 7), SeatOutcome(30, 7)]) == [3, 1, 1]
    # the best score, but resigned: last, behind a seat with fewer points
    assert places([SeatOutcome(90, 9, lost=True), SeatOutcome(10, 0), SeatOutcome(20, 0)]) == [3, 2, 1]
    assert places([SeatOutcome(5, 0, lost=True), SeatOutcome(50, 0, lost=True), SeatOutcome(1, 0)]) == [
        2,
        2,
        1,
    ]


def test_rating_moves_the_winner_up_and_the_loser_down() -> None:
    winner, loser = rate([Rating(), Rating()], [1, 2])
    assert winner.mu > 25 > loser.mu
    assert winner.sigma < 25 / 3 and loser.sigma < 25 / 3
    assert (winner.games, winner.wins, loser.games, loser.wins) == (1, 1, 1, 0)


def test_recompute_matches_openskill_directly() -> None:
    games = [
        RatedGame("2", "g1", (("a", 1), ("b", 2))),
        RatedGame("4", "g2", (("a", 2), ("b", 1), ("c", 3), ("d", 3))),
        RatedGame("2", "g3", (("b", 1), ("a", 2))),
    ]
    model = PlackettLuce()
    expected: dict[tuple[str, str], object] = {}
    for game in games:
        teams = [[expected.get((name, game.pool)) or model.rating()] for name, _ in game.seats]
        after = model.rate(teams, ranks=[place for _, place in game.seats])  # type: ignore[arg-type]
        for (name, _), team in zip(game.seats, after, strict=True):
            expected[(name, game.pool)] = team[0]
    ours = recompute(games)
    assert set(ours) == set(expected)
    for key, rating in ours.items():
        reference = expected[key]
        assert (rating.mu, rating.sigma) == (reference.mu, reference.sigma)  # type: ignore[attr-defined]
    assert ours[("b", "2")].wins == 1 and ours[("b", "2")].games == 2


async def test_the_recompute_command_gives_the_stored_numbers(tmp_path: Path) -> None:
    db = tmp_path / "arena.db"
    store = ArenaStore(str(db))
    await store.open()
    ids = [(await store.register(name, auth.token_hash(name))).account_id for name in ("p", "q", "r")]
    seatings = [([0, 1], [1, 2]), ([1, 2], [1, 1]), ([2, 0, 1], [2, 1, 3]), ([0, 2], [2, 1])]
    for number, (seats, seat_places) in enumerate(seatings):
        pool = "2" if len(seats) == 2 else "3"
        accounts = [ids[s] for s in seats]
        await store.record_game(f"g{number}", pool, "127.0.0.1:1", accounts)
        result = await store.rate_game(
            f"g{number}", pool, accounts, seat_places, lambda before, sp=seat_places: rate(before, sp)
        )
        assert result is not None
    assert await store.rate_game("g0", "2", ids[:2], [1, 2], lambda b: rate(b, [1, 2])) is None, "rated once"
    await store.record_game("g9", "2", "127.0.0.1:1", ids[:2])
    assert await store.abandon_game("g9")
    stored = await store.stored_ratings()
    await store.close()
    assert stored == recompute(
        [
            RatedGame("2", "g0", (("p", 1), ("q", 2))),
            RatedGame("2", "g1", (("q", 1), ("r", 1))),
            RatedGame("3", "g2", (("r", 2), ("p", 1), ("q", 3))),
            RatedGame("2", "g3", (("p", 2), ("r", 1))),
        ]
    ), "the abandoned game is not rated"

    command = python_module("kutnahora.arena.main", "recompute-ratings", "--db", str(db))
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pool 2: 3 rated games, 3 bots" in done.stdout and "identical" in done.stdout

    store = ArenaStore(str(db))
    await store.open()
    await store.replace_ratings({("p", "2"): Rating(30.0, 2.0, 3, 3)})
    await store.close()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 1 and "differ" in done.stdout
    done = subprocess.run([*command, "--write"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0 and "identical" in done.stdout
