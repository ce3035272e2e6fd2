"""Retries across replicas on PostgreSQL: a JoinGame or CreateGame whose replica died between its commit and
its reply, retried with the same request_id on another replica, gets the same seat, token and game.

Skipped, with the reason, when PostgreSQL is unreachable.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.deploy.servers import bearer, create_game, start_server
from tests.store.pg import fresh_schema, require_postgres


@pytest.fixture
def database() -> Iterator[str]:
    """A PostgreSQL URL with a schema of its own."""
    require_postgres()
    with fresh_schema("kh_retries") as url:
        yield url


def test_a_join_lost_with_its_replica_is_answered_the_same_by_another(
    database: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    survivor = start_server(database, tmp_path, "survivor")
    try:
        game_id = create_game(survivor, players=2, seed=5)
        monkeypatch.setenv("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT", "JoinGame")
        doomed = start_server(database, tmp_path, "doomed")
        monkeypatch.delenv("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT")
        join = game_service_pb2.JoinGameRequest(
            game_id=game_id, seat=0, name="ann", request_id=str(uuid.uuid4())
        )
        with pytest.raises(grpc.RpcError) as lost:
            doomed.games.JoinGame(join, timeout=10)
        assert lost.value.code() == grpc.StatusCode.UNAVAILABLE
        assert doomed.process.wait(10) == 75
        create = game_service_pb2.CreateGameRequest(
            options=game_pb2.GameOptions(players=2), seed=9, request_id=str(uuid.uuid4())
        )

        retried = survivor.games.JoinGame(join, timeout=10)
        assert retried.seat == 0 and retried.seat_token
        survivor.play.GetObservation(
            play_service_pb2.GetObservationRequest(game_id=game_id, seat=0),
            metadata=bearer(retried.seat_token),
            timeout=10,
        )
        again = survivor.games.JoinGame(join, timeout=10)
        assert (again.seat, again.seat_token) == (retried.seat, retried.seat_token)
        first = survivor.games.CreateGame(create, timeout=10)
        assert survivor.games.CreateGame(create, timeout=10).game.game_id == first.game.game_id
        reused = game_service_pb2.JoinGameRequest(game_id=game_id, seat=1, request_id=join.request_id)
        with pytest.raises(grpc.RpcError) as refused:
            survivor.games.JoinGame(reused, timeout=10)
        assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    finally:
        survivor.stop()
