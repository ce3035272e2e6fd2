"""Standings of a tournament: games, wins, win rate with a Wilson interval, mean score, openskill rating.

A game counts once for every bot that sat in it, however many seats it had: the bot *won* the game when
one of its seats is among the winners. Seats whose bot crashed or timed out are never winners, their
scores are left out of the mean, and for the rating they rank last. The rating treats each game as a
match between the distinct bots in it, each ranked by its best seat; games with a single bot (mirror
matches) do not move ratings. Ratings are computed in game order, so they do not depend on which game
finished first.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openskill.models import PlackettLuce
from rich import box
from rich.table import Table

from kutnahora.clients.tournament.results import GameRecord

Z_95 = 1.959963984540054


def wilson(wins: float, games: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a win rate (95% by default; a tie may count as half a win); (0, 1)
    with no games."""
    if games <= 0:
        return (0.0, 1.0)
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(slots=True)
class Standing:
    """One bot's line of the table."""

    bot: str
    games: int = 0
    wins: int = 0
    failures: int = 0
    score_total: float = 0.0
    scored_seats: int = 0
    mu: float = 0.0
    sigma: float = 0.0

    @property
    def win_rate(self) -> float:
        return self.wins / self.games if self.games else 0.0

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.wins, self.games)

    @property
    def mean_score(self) -> float | None:
        return self.score_total / self.scored_seats if self.scored_seats else None

    @property
    def rating(self) -> float:
        """The conservative openskill estimate, mu - 3 sigma."""
        return self.mu - 3 * self.sigma

    def to_json(self) -> dict[str, Any]:
        low, high = self.interval
        mean = self.mean_score
        return {
            "bot": self.bot,
            "games": self.games,
            "wins": self.wins,
            "win_rate": round(self.win_rate, 4),
            "win_rate_ci95": [round(low, 4), round(high, 4)],
            "mean_score": None if mean is None else round(mean, 2),
            "rating": round(self.rating, 3),
            "rating_mu": round(self.mu, 3),
            "rating_sigma": round(self.sigma, 3),
            "failures": self.failures,
        }


def placements(record: GameRecord) -> list[int]:
    """Each seat's place from 1 (shared on ties), failed seats last."""
    failed = {f.seat for f in record.failures}
    scores = record.scores or [0] * len(record.bots)
    groschen = record.groschen or [0] * len(record.bots)
    keys = [(0 if seat in failed else 1, scores[seat], groschen[seat]) for seat in range(len(record.bots))]
    return [1 + sum(1 for other in keys if other > key) for key in keys]


def standings(bots: Sequence[str], records: Iterable[GameRecord]) -> list[Standing]:
    """The table, best first: by win rate, then rating, then mean score."""
    table = {bot: Standing(bot) for bot in bots}
    model = PlackettLuce()
    ratings = {bot: model.rating(name=bot) for bot in bots}
    for record in sorted(records, key=lambda r: r.index):
        if record.scores is None:
            continue
        failed = {f.seat for f in record.failures}
        present = list(dict.fromkeys(record.bots))
        for bot in present:
            entry = table.setdefault(bot, Standing(bot))
            entry.games += 1
            seats = [s for s, b in enumerate(record.bots) if b == bot]
            if any(s in record.winners for s in seats):
                entry.wins += 1
            entry.failures += sum(1 for s in seats if s in failed)
            for s in seats:
                if s not in failed:
                    entry.score_total += record.scores[s]
                    entry.scored_seats += 1
        if len(present) > 1:
            place = placements(record)
            best = [min(place[s] for s, b in enumerate(record.bots) if b == bot) for bot in present]
            for bot in present:
                ratings.setdefault(bot, model.rating(name=bot))
            teams = [[ratings[bot]] for bot in present]
            rated = model.rate(teams, ranks=[float(b) for b in best])
            for bot, team in zip(present, rated, strict=True):
                ratings[bot] = team[0]
    for bot, entry in table.items():
        entry.mu = ratings[bot].mu if bot in ratings else 0.0
        entry.sigma = ratings[bot].sigma if bot in ratings else 0.0
    return sorted(table.values(), key=lambda s: (-s.win_rate, -s.rating, -(s.mean_score or 0.0), s.bot))


def leader(entries: Sequence[Standing]) -> str:
    """A short text naming the current leader, for the progress bar."""
    played = [e for e in entries if e.games]
    if not played:
        return "-"
    best = max(played, key=lambda s: (s.win_rate, s.wins))
    return f"{best.bot} {best.win_rate:.0%} of {best.games}"


def table(entries: Sequence[Standing], title: str = "Standings") -> Table:
    """The standings as a rich table (fits in 80 columns)."""
    result = Table(title=title, box=box.SIMPLE_HEAD, title_style="bold", padding=(0, 1))
    headings = ("Bot", "Games", "Wins", "Win %", "95% CI", "Mean", "Rating", "μ ± σ", "Failed")
    for heading in headings:
        result.add_column(heading, justify="left" if heading == "Bot" else "right", no_wrap=True)
    for entry in entries:
        low, high = entry.interval
        mean = entry.mean_score
        result.add_row(
            entry.bot,
            str(entry.games),
            str(entry.wins),
            f"{entry.win_rate:.1%}",
            f"{low * 100:.0f}–{high:.0%}",
            "-" if mean is None else f"{mean:.1f}",
            f"{entry.rating:.1f}",
            f"{entry.mu:.1f}±{entry.sigma:.1f}",
            str(entry.failures),
        )
    result.caption = (
        "A bot wins a game when one of its seats wins. CI: Wilson.\nRating: openskill Plackett-Luce, μ − 3σ."
    )
    return result


CSV_FIELDS = (
    "bot",
    "games",
    "wins",
    "win_rate",
    "win_rate_ci95_low",
    "win_rate_ci95_high",
    "mean_score",
    "rating",
    "rating_mu",
    "rating_sigma",
    "failures",
)


def write_csv(path: Path, entries: Sequence[Standing]) -> None:
    """Write the standings as CSV, one row per bot."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for entry in entries:
            row = entry.to_json()
            low, high = row.pop("win_rate_ci95")
            writer.writerow({**row, "win_rate_ci95_low": low, "win_rate_ci95_high": high})


__all__ = ["Standing", "leader", "standings", "table", "wilson", "write_csv"]
