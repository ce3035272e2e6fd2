"""Three server processes on one PostgreSQL database: any replica serves any game, and they agree.

The local rules engine chooses each decision (seeded) and tracks the version, so a decision can be sent
to any replica, including one that has not heard of the previous decision yet. The tests check that
decisions sent to the replicas in turn all apply; that two clients racing for the same version at two
replicas get exactly one win (or, with the same answer, one decision and two identical answers); that a
watcher on one replica sees every version applied on the others; that a replica killed with SIGKILL
mid-game loses nothing while the others finish the game; and that the final state hash equals a replay
of the stored log. PostgreSQL tests skip, with the reason, when it is unreachable.
"""

from __future__ import annotations

import contextlib
import random
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import pytest

from kutnahora import engine
from kutnahora.engine import GameOptions, legal, new_game, parse_option, state_hash
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from tests.deploy.servers import (
    ServerProcess,
    bearer,
    create_game,
    get_replay,
    join,
    scrape,
    servers,
    start_server,
    submit,
    total,
)
from tests.store.pg import fresh_schema, require_postgres


def _server_selects_postgres(url: str) -> bool:
    from kutnahora.server.app import make_store
    from kutnahora.server.config import ServerConfig
    from kutnahora.server.metrics import Metrics
    from kutnahora.server.store import PostgresStore

    return isinstance(make_store(ServerConfig.in_memory(db=url), Metrics()), PostgresStore)


@pytest.fixture(scope="module")
def database() -> Iterator[str]:
    """A PostgreSQL URL with a schema of its own for this module's replicas."""
    with fresh_schema("kh_replicas") as url:
        assert _server_selects_postgres(url), "--db postgresql://… must select the PostgreSQL store"
        yield url


@pytest.fixture(scope="module")
def replicas(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[ServerProcess]]:
    """Three replicas sharing the database (the last test kills one)."""
    require_postgres()
    with servers(database, tmp_path_factory.mktemp("replica-logs"), 3) as started:
        yield started


class Game:
    """One game as the test drives it: ids, seat tokens, and the local engine's copy of the state."""

    def __init__(self, creator: ServerProcess, players: int, seed: int, joiners: list[ServerProcess]) -> None:
        self.game_id = create_game(creator, players, seed)
        self.seed = seed
        self.tokens = [join(joiners[seat % len(joiners)], self.game_id, seat) for seat in range(players)]
        self.state = new_game(GameOptions(players=players), seed)
        self.rng = random.Random(seed)

    @property
    def version(self) -> int:
        return self.state.version

    def choose(self) -> tuple[int, int]:
        """The pending seat and a seeded random option index."""
        pending = self.state.pending
        assert pending is not None
        return pending.seat, self.rng.randrange(len(pending.options))

    def send(self, server: ServerProcess, seat: int, index: int) -> play_service_pb2.SubmitDecisionResponse:
        """Submits the choice at the current version through ``server`` and applies it locally."""
        version = self.version
        response = submit(server, self.game_id, seat, self.tokens[seat], version, index)
        assert response.version == version + 1, (server.name, version, response)
        self.apply(seat, index)
        return response

    def apply(self, seat: int, index: int) -> None:
        engine.apply(self.state, legal(self.state)[index], seat)

    def check_replay(self, server: ServerProcess) -> None:
        """The stored log, replayed by the engine, gives the state the test holds and the server reports."""
        # Reads are eventually consistent: a replica that did not store the last decision learns of it
        # by notification, within milliseconds. Until then it still reports the game as active.
        deadline = time.monotonic() + 5
        while True:
            try:
                replay = get_replay(server, self.game_id)
                break
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.FAILED_PRECONDITION or time.monotonic() > deadline:
                    raise
                time.sleep(0.01)
        options = [parse_option(record.text) for record in replay.decisions]
        assert [record.version for record in replay.decisions] == list(range(self.version))
        rebuilt = engine.replay(GameOptions(players=len(self.tokens)), replay.seed, options)
        assert state_hash(rebuilt) == state_hash(self.state) == replay.state_hash
        assert replay.game.status == game_pb2.GAME_STATUS_FINISHED


def watch(server: ServerProcess, game_id: str, seen: list[int], done: threading.Event) -> None:
    """Collects the versions a spectator's WatchGame stream on ``server`` delivers, until it ends."""
    from kutnahora.v1 import play_service_pb2 as play

    try:
        for message in server.play.WatchGame(
            play.WatchGameRequest(game_id=game_id, from_version=0), timeout=60
        ):
            if not message.seats:  # a message telling of the seats repeats the current version
                seen.append(message.observation.version)
    finally:
        done.set()


def test_decisions_sent_to_the_replicas_in_turn_and_watched_on_others(replicas: list[ServerProcess]) -> None:
    game = Game(replicas[0], players=2, seed=101, joiners=[replicas[1], replicas[2]])
    watchers = []
    for server in (replicas[0], replicas[2]):  # replica 0 holds the game since creating it; 2 since a join
        seen: list[int] = []
        done = threading.Event()
        threading.Thread(target=watch, args=(server, game.game_id, seen, done), daemon=True).start()
        watchers.append((server.name, seen, done))
    step = 0
    while not game.state.over:
        seat, index = game.choose()
        game.send(replicas[step % 3], seat, index)
        step += 1
    assert step > 50
    for name, seen, done in watchers:
        assert done.wait(20), f"the watch stream on {name} did not end"
        assert seen == list(range(game.version + 1)), f"{name} delivered {seen[:5]}…{seen[-5:]}"
    for server in replicas:
        game.check_replay(server)
    scraped = [scrape(server) for server in replicas]
    # Each decision is counted once, by the replica that stored it; the others caught up with it.
    assert sum(total(s, "kutnahora_decisions_applied_total") for s in scraped) == game.version
    assert sum(total(s, "kutnahora_replica_catchup_decisions_total") for s in scraped) >= game.version


def test_two_clients_racing_for_one_version_at_two_replicas(replicas: list[ServerProcess]) -> None:
    game = Game(replicas[0], players=2, seed=202, joiners=[replicas[0], replicas[1]])
    left, right = grpc.insecure_channel(replicas[0].address), grpc.insecure_channel(replicas[1].address)
    contested = identical = 0
    start = threading.Barrier(2)

    def race(channel: grpc.Channel, seat: int, version: int, index: int) -> tuple[str, int]:
        from kutnahora.v1 import play_service_pb2_grpc

        stub = play_service_pb2_grpc.PlayServiceStub(channel)
        request = play_service_pb2.SubmitDecisionRequest(
            game_id=game.game_id, seat=seat, version=version, answer=game_pb2.Answer(option_index=index)
        )
        start.wait()
        try:
            response = stub.SubmitDecision(request, metadata=bearer(game.tokens[seat]), timeout=10)
        except grpc.RpcError as error:
            return error.code().name, -1
        return "OK", response.decision.version

    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            while not game.state.over and contested + identical < 24:
                seat, index = game.choose()
                count = len(legal(game.state))
                other = (index + 1) % count
                version = game.version
                a = pool.submit(race, left, seat, version, index)
                b = pool.submit(race, right, seat, version, other)
                outcomes = [a.result(), b.result()]
                if other == index:  # one legal option: an exact retry through another replica
                    assert outcomes == [("OK", version), ("OK", version)], outcomes
                    identical += 1
                    game.apply(seat, index)
                    continue
                codes = sorted(code for code, _ in outcomes)
                assert codes == ["ABORTED", "OK"], (version, outcomes)
                contested += 1
                game.apply(seat, index if outcomes[0][0] == "OK" else other)
    finally:
        left.close()
        right.close()
    assert contested >= 10
    step = 0
    while not game.state.over:
        seat, index = game.choose()
        game.send(replicas[step % 2], seat, index)
        step += 1
    game.check_replay(replicas[2])


def test_a_clock_running_out_at_several_replicas_counts_each_timeout_once(
    replicas: list[ServerProcess],
) -> None:
    """Every replica that holds a game runs its clock. When the clock runs out, the replica that stores
    the default decision counts the timeout; one that finds it already stored reads it and counts nothing.
    Two strikes a seat, then the random policy finishes the game."""
    first, second, third = replicas
    before = sum(total(scrape(s), "kutnahora_clock_timeouts_total") for s in replicas)
    clock = game_pb2.ClockSettings(max_strikes=2)
    clock.decision_time.FromMilliseconds(100)
    clock.time_bank.FromMilliseconds(0)
    request = game_service_pb2.CreateGameRequest(
        options=game_pb2.GameOptions(players=2), seed=404, clock=clock
    )
    game_id = first.games.CreateGame(request, timeout=10).game.game_id
    join(first, game_id, 0)
    join(second, game_id, 1)  # now two replicas hold the game, and both run its clock
    third.games.GetGame(game_service_pb2.GetGameRequest(game_id=game_id), timeout=10)  # and a third
    deadline = time.monotonic() + 30
    while True:
        try:
            replay = get_replay(third, game_id)
            break
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.FAILED_PRECONDITION or time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    timeouts = [r for r in replay.decisions if r.source == game_pb2.DECISION_SOURCE_TIMEOUT]
    assert len(timeouts) == 4  # two strikes for each of the two seats
    assert sum(total(scrape(s), "kutnahora_clock_timeouts_total") for s in replicas) - before == 4


def test_a_replica_killed_mid_game_loses_nothing(
    replicas: list[ServerProcess], database: str, tmp_path: Path
) -> None:
    game = Game(replicas[2], players=3, seed=303, joiners=replicas)
    step = 0
    while game.version < 60:
        seat, index = game.choose()
        game.send(replicas[step % 3], seat, index)
        step += 1
    # A submission in flight at replica 2 when it dies: it may or may not have been stored.
    seat, index = game.choose()
    version = game.version
    doomed = replicas[2]

    def send_and_die() -> None:
        with contextlib.suppress(grpc.RpcError):
            submit(doomed, game.game_id, seat, game.tokens[seat], version, index)

    in_flight = threading.Thread(target=send_and_die, daemon=True)
    in_flight.start()
    time.sleep(0.002)
    doomed.kill()
    in_flight.join(5)
    assert not doomed.alive()
    # The same answer again, through another replica: applied now, or recognised as the stored one.
    game.send(replicas[0], seat, index)
    step = 0
    while not game.state.over:
        seat, index = game.choose()
        game.send(replicas[step % 2], seat, index)
        step += 1
    game.check_replay(replicas[1])
    # A new replica on the same database serves the finished game too.
    newcomer = start_server(database, tmp_path, "replica-3")
    try:
        game.check_replay(newcomer)
    finally:
        newcomer.stop()
