"""What every store shares: the rows, the query, the :class:`Store` protocol, its errors and helpers.

A game is its creation record (options, seed, clock, label), its seats (name, token hash, resigned) and
its decision log (one row per applied decision, numbered from 0, never changed). The server rebuilds any
game by replaying its log through the engine, so the log is the only game state that must survive.

:class:`Store` is the interface the server uses (see :mod:`kutnahora.server.store` for the three
implementations). Every write is durable when its coroutine returns; the
server answers a client only after that. Appending decision ``seq`` twice for a game raises
:class:`DuplicateDecision`, so two writers can never both append decision N. A write that has been handed
to a store's writer is waited for to its end even if the caller is cancelled meanwhile (:func:`to_the_end`):
a game whose Play stream closes while its decision is being stored still applies the decision it stored.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from kutnahora.engine import GameResult
from kutnahora.plumbing.errors import StoreError
from kutnahora.server.records import UNFINISHED
from kutnahora.server.requests import RequestRecord

T = TypeVar("T")


class DuplicateDecision(StoreError):
    """Decision ``seq`` of the game is already in the log."""


def refused_append(game_id: str, seq: int, known: bool, following: int) -> StoreError:
    """Why decision ``seq`` could not be appended to a game's log of ``following`` decisions (``known``:
    whether the game is in the store): it is there already, the game is unknown, or it would leave a gap."""
    if not known:
        return StoreError(f"game {game_id} is not in the store")
    if seq < following:
        return DuplicateDecision(f"decision {seq} of game {game_id} is already stored")
    return StoreError(
        f"decision {seq} of game {game_id} would leave a gap: the log holds {following} decisions"
    )


WRITE_GRACE = 10.0
"""Seconds a cancelled caller still waits for its write under way (:func:`to_the_end`) before giving up."""


async def to_the_end(future: asyncio.Future[T], grace: float = WRITE_GRACE) -> T:
    """The outcome of a write handed to a store's writer, awaited to its end even when the waiting task is
    cancelled meanwhile (the writer may be running it already): the cancellation is then delivered again at
    the task's next wait, once its caller has acted on what was written. A writer that has not finished
    ``grace`` seconds after the cancellation is given up on, and the task is cancelled at once."""
    task = asyncio.current_task()
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        if future.cancelled() or task is None:
            raise
        task.uncancel()  # held back until the write is over
    try:
        await asyncio.wait_for(asyncio.shield(future), grace)
    except TimeoutError:
        raise asyncio.CancelledError from None
    except asyncio.CancelledError:  # cancelled again while waiting: as asked
        raise
    except BaseException:  # the write's own failure, for the caller to act on before the cancellation
        task.cancel()
        raise
    task.cancel()
    return future.result()


@dataclass(frozen=True, slots=True)
class GameRow:
    """A game's creation record and its current status (a :class:`GameStatus` name, lower case)."""

    game_id: str
    created_at: float  # Unix time in seconds
    players: int
    events: bool
    guild_setup_card: int | None
    mine_setup_card: int | None
    seed: int
    clock: dict[str, Any]  # ClockConfig fields, as JSON
    label: str
    game_token_hash: str
    rules_version: int
    status: str = "waiting"  # waiting | active | finished | abandoned
    updated_at: float = 0.0
    abandon_reason: str = ""
    result: dict[str, Any] | None = None  # scores, groschen and winners of a finished game
    components_hash: str = ""  # the component set played with (engine.components_hash); "" for old games
    version: int = 0  # decisions in the log (filled in by reads)
    seats: tuple[SeatRow, ...] = ()  # the seats (filled in by listings)


@dataclass(frozen=True, slots=True)
class SeatRow:
    """One seat: who joined it, the hash of its token, and whether it resigned."""

    seat: int
    name: str = ""
    token_hash: str = ""
    resigned: bool = False
    joined_at: float = 0.0

    @property
    def joined(self) -> bool:
        """Whether a client has taken the seat."""
        return bool(self.token_hash)


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """One applied decision: its number in the log, the seat, the option's canonical text, and who chose."""

    seq: int
    seat: int
    option: str
    source: str  # seat | timeout | policy
    think_ms: int
    applied_at: float


@dataclass(frozen=True, slots=True)
class StoredGame:
    """Everything the store holds about one game."""

    game: GameRow
    seats: tuple[SeatRow, ...]
    decisions: tuple[DecisionRow, ...]


@dataclass(frozen=True, slots=True)
class GameQuery:
    """A listing filter: status (None: any), label (empty: any), a page size and where the page starts."""

    status: str | None = None
    label: str = ""
    limit: int = 50
    before: tuple[float, str] | None = None  # (created_at, game_id) of the last game of the previous page


class Store(Protocol):
    """What the server needs from a store. Every method is a coroutine; writes are durable on return."""

    kind: str

    async def open(self) -> None:
        """Prepare the store (create tables, start workers)."""

    async def close(self) -> None:
        """Flush every pending write and release the store."""

    async def create_game(
        self, game: GameRow, seats: Sequence[SeatRow], request: RequestRecord | None = None
    ) -> None:
        """Record a new game and its seats: empty, or taken when the game is created with them; and, in
        the same transaction, the request that created it, when it carried a request id."""

    async def save_seat(self, game_id: str, seat: SeatRow, request: RequestRecord | None = None) -> None:
        """Record a seat's join or resignation (with the request that asked for it, as above)."""

    async def find_request(self, key_hash: str) -> RequestRecord | None:
        """The record of an answered request, by the hash of its request id, or None."""

    async def purge_requests(self, before: float) -> None:
        """Delete the records of requests made before ``before`` (Unix time)."""

    async def append_decision(self, game_id: str, decision: DecisionRow) -> None:
        """Append one decision; raises :class:`DuplicateDecision` if ``decision.seq`` is taken."""

    async def set_status(
        self,
        game_id: str,
        status: str,
        updated_at: float,
        abandon_reason: str = "",
        result: dict[str, Any] | None = None,
        unfinished_only: bool = False,
    ) -> bool:
        """Record a change of status (active, finished with its result, abandoned with a reason); whether
        the game's record changed. With ``unfinished_only`` it changes only a game still waiting or
        active, so of two servers ending one game at once, only the first does."""

    async def load_game(self, game_id: str) -> StoredGame | None:
        """Everything about one game, or None."""

    async def list_games(self, query: GameQuery) -> list[GameRow]:
        """Games matching the query, newest first."""

    async def unfinished_games(self) -> list[str]:
        """The ids of the games still waiting or active, oldest first."""


UNFINISHED_SQL = "(" + ", ".join(f"'{status}'" for status in UNFINISHED) + ")"
"""The same, as an SQL list: ``status IN {UNFINISHED_SQL}``."""

GAME_COLUMNS = (
    "game_id, created_at, players, events, guild_setup_card, mine_setup_card, seed, clock, label, "
    "game_token_hash, rules_version, status, updated_at, abandon_reason, result, components_hash"
)
"""The columns of a game row, in the order of :func:`game_values`, for every SQL store."""


def game_values(game: GameRow) -> tuple[object, ...]:
    """A game row's values in the order of :data:`GAME_COLUMNS`."""
    return (
        game.game_id,
        game.created_at,
        game.players,
        game.events,
        game.guild_setup_card,
        game.mine_setup_card,
        game.seed,
        encode_json(game.clock),
        game.label,
        game.game_token_hash,
        game.rules_version,
        game.status,
        game.updated_at or game.created_at,
        game.abandon_reason,
        encode_json(game.result),
        game.components_hash,
    )


def game_filter(query: GameQuery, mark: str) -> tuple[str, list[Any]]:
    """The WHERE clause (or nothing) and parameters of a game listing; ``mark`` is the placeholder."""
    clauses: list[str] = []
    params: list[Any] = []
    if query.status is not None:
        clauses.append(f"status = {mark}")
        params.append(query.status)
    if query.label:
        clauses.append(f"label = {mark}")
        params.append(query.label)
    if query.before is not None:  # the page after (created_at, game_id), newest first
        clauses.append(f"(created_at, game_id) < ({mark}, {mark})")
        params.extend([query.before[0], query.before[1]])
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def encode_json(value: dict[str, Any] | None) -> str | None:
    """JSON for a store column (compact, sorted keys)."""
    return None if value is None else json.dumps(value, sort_keys=True, separators=(",", ":"))


def decode_json(text: str | None) -> dict[str, Any] | None:
    """A store column's JSON back as a dict."""
    if text is None:
        return None
    value = json.loads(text)
    if not isinstance(value, dict):
        raise StoreError(f"expected a JSON object in the store, got {type(value).__name__}")
    return value


def result_to_json(result: GameResult, resigned: Sequence[bool]) -> dict[str, Any]:
    """A final result as the JSON object the stores keep for listings."""
    return {
        "scores": list(result.scores),
        "groschen": list(result.groschen),
        "winners": list(result.winners),
        "breakdown": [dict(b) for b in result.breakdown],
        "resigned": [bool(r) for r in resigned],
    }


def result_from_json(data: dict[str, Any]) -> tuple[GameResult, list[bool]]:
    """A result the stores keep, with which seats resigned."""
    result = GameResult(
        scores=tuple(int(s) for s in data["scores"]),
        groschen=tuple(int(g) for g in data["groschen"]),
        winners=tuple(int(w) for w in data["winners"]),
        breakdown=tuple({str(k): int(v) for k, v in b.items()} for b in data["breakdown"]),
    )
    return result, [bool(r) for r in data.get("resigned", ())]
