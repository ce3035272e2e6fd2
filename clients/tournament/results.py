"""The results file of a tournament: its configuration and one record per game, written after every game.

The file is one JSON object::

    {
      "format": "kutnahora-tournament/1",
      "config": {"bots": [...], "players": 4, "games": 200, "seed": 1, ...},
      "server": "127.0.0.1:50051",
      "games": [
        {"index": 0, "game_id": "…", "seed": 123, "bots": ["greedy", "random", ...],
         "scores": [31, -6, 37, 2], "winners": [2], "status": "finished",
         "replay": "results.replays/….json", "failures": [], ...},
        ...
      ],
      "standings": [{"bot": "greedy", "games": 200, "wins": 198, ...}, ...]
    }

``status`` is ``finished`` when every bot played to the end, ``error`` when a bot crashed (or the game
could not be played), ``timeout`` when a bot ran out of time; ``failures`` then names the seats. ``replay``
is the path of the saved replay (``GetReplay`` as JSON), or, when replays are not saved, a
``kutnahora://HOST:PORT/games/ID/replay`` reference to ask the server for it. Writing goes through a
temporary file and a rename, so an interrupted run leaves a readable file that ``--resume`` continues.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kutnahora.clients.files import write_json

FORMAT = "kutnahora-tournament/1"


@dataclass(frozen=True, slots=True)
class Failure:
    """A seat whose bot crashed or ran out of time; the server's random policy finished its game."""

    seat: int
    bot: str
    status: str  # "error" or "timeout"
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "bot": self.bot, "status": self.status, "reason": self.reason}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Failure:
        return cls(int(data["seat"]), str(data["bot"]), str(data["status"]), str(data.get("reason", "")))


@dataclass(slots=True)
class GameRecord:
    """One played game."""

    index: int
    game_id: str
    seed: int
    bots: list[str]
    scores: list[int] | None
    winners: list[int]
    status: str
    replay: str | None
    failures: list[Failure] = field(default_factory=list)
    groschen: list[int] | None = None
    decisions: int = 0
    seconds: float = 0.0
    error: str = ""  # why the game itself could not be played, when it could not

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "index": self.index,
            "game_id": self.game_id,
            "seed": self.seed,
            "bots": self.bots,
            "scores": self.scores,
            "winners": self.winners,
            "status": self.status,
            "replay": self.replay,
            "failures": [f.to_json() for f in self.failures],
            "groschen": self.groschen,
            "decisions": self.decisions,
            "seconds": round(self.seconds, 3),
        }
        if self.error:
            data["error"] = self.error
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameRecord:
        scores = data.get("scores")
        groschen = data.get("groschen")
        return cls(
            index=int(data["index"]),
            game_id=str(data["game_id"]),
            seed=int(data["seed"]),
            bots=[str(b) for b in data["bots"]],
            scores=None if scores is None else [int(s) for s in scores],
            winners=[int(w) for w in data.get("winners", [])],
            status=str(data["status"]),
            replay=data.get("replay"),
            failures=[Failure.from_json(f) for f in data.get("failures", [])],
            groschen=None if groschen is None else [int(g) for g in groschen],
            decisions=int(data.get("decisions", 0)),
            seconds=float(data.get("seconds", 0.0)),
            error=str(data.get("error", "")),
        )


class ResultsError(Exception):
    """The results file cannot be read or does not belong to this tournament."""


def load(path: Path) -> tuple[dict[str, Any], list[GameRecord]]:
    """The configuration and game records of a results file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ResultsError(f"cannot read {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise ResultsError(f"{path} is not JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ResultsError(f"{path} is not a {FORMAT} results file")
    try:
        records = [GameRecord.from_json(g) for g in data.get("games", [])]
    except (KeyError, TypeError, ValueError) as error:
        raise ResultsError(f"{path} has a malformed game record ({error})") from None
    return dict(data.get("config", {})), records


def save(
    path: Path,
    config: dict[str, Any],
    server: str,
    records: Iterable[GameRecord],
    standings: list[dict[str, Any]],
    hosting: dict[str, Any] | None = None,
) -> None:
    """Write the results file atomically (:func:`kutnahora.clients.files.write_json`); ``hosting``: what
    each hosted submission cost the runner (:class:`kutnahora.hosting.gateway_limits.Usage`)."""
    data = {
        "format": FORMAT,
        "config": config,
        "server": server,
        "games": [r.to_json() for r in sorted(records, key=lambda r: r.index)],
        "standings": standings,
    }
    if hosting:
        data["hosting"] = hosting
    write_json(path, data)


def check_resumable(saved: dict[str, Any], config: dict[str, Any]) -> None:
    """Refuse to resume a file written for another tournament, naming the first difference."""
    for key in ("bots", "players", "games", "seed", "events", "bot_commands", "shard"):
        if saved.get(key) != config.get(key):
            raise ResultsError(
                f"the results file was written for {key}={saved.get(key)!r}, not {config.get(key)!r}; "
                "use another --out, or drop --resume to start over"
            )
