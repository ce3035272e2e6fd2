"""Ratings: openskill's Plackett–Luce model per pool, from each finished game's final places.

A game's places come from its result: by score, then groschen (the rules' tie-breaker), equal seats sharing
a place; a seat that resigned or was taken over by the clock after too many timeouts places last, behind
every seat that played on. :func:`recompute` replays every stored result in the order it was rated and
gives exactly the numbers the arena stored, game by game.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

MODEL = PlackettLuce()
"""The model, with openskill's defaults (μ 25, σ 25/3)."""


@dataclass(frozen=True, slots=True)
class Rating:
    """A bot's rating in one pool."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma
    games: int = 0
    wins: int = 0

    @property
    def conservative(self) -> float:
        """μ − 3σ: the rating the leaderboard orders by and the matchmaker groups by."""
        return self.mu - 3 * self.sigma


@dataclass(frozen=True, slots=True)
class SeatOutcome:
    """How one seat ended: its score, its groschen, and whether it lost the game by resigning or timeouts."""

    score: int
    groschen: int
    lost: bool = False


def places(outcomes: Sequence[SeatOutcome]) -> list[int]:
    """Each seat's place from 1; equal seats share a place, lost seats are last (sharing it)."""
    keys = [(0, 0, 0) if o.lost else (1, o.score, o.groschen) for o in outcomes]
    return [1 + sum(1 for other in keys if other > key) for key in keys]


def rate(before: Sequence[Rating], seat_places: Sequence[int]) -> list[Rating]:
    """The seats' ratings after one game with these places (1 is best)."""
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    after = MODEL.rate(teams, ranks=[float(p) for p in seat_places])
    return [
        Rating(team[0].mu, team[0].sigma, old.games + 1, old.wins + (1 if place == 1 else 0))
        for team, old, place in zip(after, before, seat_places, strict=True)
    ]


@dataclass(frozen=True, slots=True)
class RatedGame:
    """One stored result: the pool, the game, and (account, place) by seat."""

    pool: str
    game_id: str
    seats: tuple[tuple[str, int], ...]


def recompute(games: Iterable[RatedGame]) -> dict[tuple[str, str], Rating]:
    """Every (account, pool) rating after replaying ``games`` in order from the initial rating."""
    ratings: dict[tuple[str, str], Rating] = {}
    for game in games:
        keys = [(account, game.pool) for account, _ in game.seats]
        after = rate([ratings.get(key, Rating()) for key in keys], [place for _, place in game.seats])
        ratings.update(zip(keys, after, strict=True))
    return ratings
