"""A tournament's results file (``kutnahora-tournament --out results.json``) as the standings page shows it.

The file is read with :mod:`kutnahora.clients.tournament.results` and the table is computed again with
:mod:`kutnahora.clients.tournament.stats`, so the page shows exactly what the runner printed: games, wins,
the 95% Wilson interval of the win rate, the mean score and the openskill rating of every bot, then every
game with its line-up, scores and a link to its replay.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kutnahora.clients.tournament.results import GameRecord, ResultsError, load
from kutnahora.clients.tournament.stats import Standing, standings

__all__ = ["ResultsError", "Tournament", "read"]


@dataclass(frozen=True, slots=True)
class Tournament:
    """What the tournament page shows."""

    source: str
    config: dict[str, Any]
    table: list[Standing]
    games: list[GameRecord]

    def title(self) -> str:
        players = self.config.get("players", "?")
        return f"{players}-player tournament, {len(self.games)} games, seed {self.config.get('seed', '?')}"


def read(path: Path) -> Tournament:
    """Read a results file; :class:`ResultsError` says what is wrong with it."""
    config, records = load(path)
    return from_records(str(path), config, records)


def from_records(source: str, config: dict[str, Any], records: list[GameRecord]) -> Tournament:
    """The standings of these records (the bots are the configuration's, or those seen in the games)."""
    bots = [str(b) for b in config.get("bots", [])] or sorted({b for r in records for b in r.bots})
    table = standings(bots, records)
    return Tournament(source, config, table, sorted(records, key=lambda r: r.index))
