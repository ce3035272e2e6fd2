"""The store that keeps everything in this process's memory (tests, ``--db :memory:``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kutnahora.plumbing.errors import StoreError
from kutnahora.server.records import UNFINISHED
from kutnahora.server.requests import RequestRecord
from kutnahora.server.store.base import (
    DecisionRow,
    GameQuery,
    GameRow,
    SeatRow,
    StoredGame,
    refused_append,
)


@dataclass(slots=True)
class _MemoryGame:
    game: GameRow
    seats: list[SeatRow]
    decisions: list[DecisionRow] = field(default_factory=list)


class MemoryStore:
    """A store that keeps everything in this process's memory: for tests and throw-away servers."""

    kind = "memory"

    def __init__(self) -> None:
        self._games: dict[str, _MemoryGame] = {}
        self._requests: dict[str, RequestRecord] = {}

    async def open(self) -> None:
        """Nothing to prepare."""

    async def close(self) -> None:
        """Nothing to flush."""

    async def create_game(
        self, game: GameRow, seats: Sequence[SeatRow], request: RequestRecord | None = None
    ) -> None:
        """Record a new game."""
        if game.game_id in self._games:
            raise StoreError(f"game {game.game_id} already exists")
        self._check_request(request)
        self._games[game.game_id] = _MemoryGame(game, list(seats))
        self._keep_request(request)

    async def save_seat(self, game_id: str, seat: SeatRow, request: RequestRecord | None = None) -> None:
        """Record a seat's join or resignation."""
        stored = self._game(game_id)
        self._check_request(request)
        stored.seats[seat.seat] = seat
        self._keep_request(request)

    async def find_request(self, key_hash: str) -> RequestRecord | None:
        """The record of an answered request, or None."""
        return self._requests.get(key_hash)

    async def purge_requests(self, before: float) -> None:
        """Forget the records of requests made before ``before``."""
        for key in [key for key, record in self._requests.items() if record.created_at < before]:
            del self._requests[key]

    def _check_request(self, request: RequestRecord | None) -> None:
        if request is not None and request.key_hash in self._requests:
            raise StoreError("this request id was recorded already")

    def _keep_request(self, request: RequestRecord | None) -> None:
        if request is not None:
            self._requests[request.key_hash] = request

    async def append_decision(self, game_id: str, decision: DecisionRow) -> None:
        """Append one decision."""
        stored = self._games.get(game_id)
        if stored is None or decision.seq != len(stored.decisions):
            following = len(stored.decisions) if stored is not None else 0
            raise refused_append(game_id, decision.seq, stored is not None, following)
        stored.decisions.append(decision)

    async def set_status(
        self,
        game_id: str,
        status: str,
        updated_at: float,
        abandon_reason: str = "",
        result: dict[str, Any] | None = None,
        unfinished_only: bool = False,
    ) -> bool:
        """Record a change of status."""
        stored = self._game(game_id)
        if unfinished_only and stored.game.status not in UNFINISHED:
            return False
        stored.game = replace(
            stored.game, status=status, updated_at=updated_at, abandon_reason=abandon_reason, result=result
        )
        return True

    async def load_game(self, game_id: str) -> StoredGame | None:
        """Everything about one game."""
        stored = self._games.get(game_id)
        if stored is None:
            return None
        return StoredGame(
            replace(stored.game, version=len(stored.decisions)), tuple(stored.seats), tuple(stored.decisions)
        )

    async def list_games(self, query: GameQuery) -> list[GameRow]:
        """Games matching the query, newest first."""
        rows = sorted(
            (replace(g.game, version=len(g.decisions), seats=tuple(g.seats)) for g in self._games.values()),
            key=lambda row: (row.created_at, row.game_id),
            reverse=True,
        )
        selected = []
        for row in rows:
            if query.status is not None and row.status != query.status:
                continue
            if query.label and row.label != query.label:
                continue
            if query.before is not None and (row.created_at, row.game_id) >= query.before:
                continue
            selected.append(row)
            if len(selected) >= query.limit:
                break
        return selected

    async def unfinished_games(self) -> list[str]:
        """The ids of the games still waiting or active."""
        rows = sorted(self._games.values(), key=lambda g: (g.game.created_at, g.game.game_id))
        return [g.game.game_id for g in rows if g.game.status in UNFINISHED]

    def _game(self, game_id: str) -> _MemoryGame:
        stored = self._games.get(game_id)
        if stored is None:
            raise StoreError(f"no game {game_id} in the store")
        return stored
