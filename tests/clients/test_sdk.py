"""The SDK over a real server: a whole game, the bot contract, stale answers, dropped connections, errors."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from pathlib import Path
from typing import Any

import grpc
import pytest

from kutnahora.clients.bots import RandomBot
from kutnahora.clients.sdk import (
    Bot,
    Choice,
    Client,
    ClientError,
    ConnectError,
    InvalidChoice,
    SeatCredentials,
    to_answer,
)
from kutnahora.server.app import create_server
from kutnahora.server.config import Quotas, ServerConfig
from kutnahora.v1 import game_pb2, game_service_pb2, play_service_pb2
from kutnahora.v1.game_pb2 import Observation
from tests.certificates import make_certificate, needs_openssl
from tests.clients.helpers import play_game


async def test_two_bots_play_a_game_to_its_end(server_address: str) -> None:
    outcomes = await play_game(server_address, ["random", "greedy"], seed=11)
    assert [o.status for o in outcomes] == [game_pb2.GAME_STATUS_FINISHED] * 2
    first, second = outcomes
    assert first.result is not None and second.result is not None
    assert first.result == second.result  # both seats hear the same final result
    assert sorted(s.seat for s in first.result.seats) == [0, 1]
    assert first.decisions > 10 and second.decisions > 10
    assert first.observation.over
    assert any(o.won for o in outcomes)


async def test_a_bot_may_answer_with_an_index_a_text_or_a_coroutine(server_address: str) -> None:
    class Mixed(Bot):
        def __init__(self) -> None:
            self.calls = 0

        async def choose(self, observation: Observation) -> Choice:
            self.calls += 1
            options = observation.pending.options
            if self.calls % 3 == 0:
                return options[-1].text
            if self.calls % 3 == 1:
                return len(options) - 1
            return options[-1]

    async with await Client.connect(server_address) as client:
        created = await client.create_game(2, seed=5)
        seats = [await client.join_game(created.game.game_id, s) for s in range(2)]
        outcomes = await asyncio.gather(client.play(Mixed(), seats[0]), client.play(RandomBot(1), seats[1]))
    assert all(o.finished for o in outcomes)


async def test_a_seated_game_is_created_in_one_call_or_joined_seat_by_seat(
    server_address: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with await Client.connect(server_address) as client:
        created, seats = await client.create_seated_game(["random", "greedy"], seed=3, label="pair")
        assert created.game.status == game_pb2.GAME_STATUS_ACTIVE
        assert [s.seat for s in seats] == [0, 1]
        assert [s.token for s in seats] == list(created.seat_tokens)
        outcomes = await asyncio.gather(
            client.play(RandomBot(1), seats[0]), client.play(RandomBot(2), seats[1])
        )
        assert all(o.finished for o in outcomes)

        # A server that does not know seat_names answers without tokens: the seats are joined instead.
        create_game = client.create_game

        async def older_server(players: int, **options: Any) -> game_service_pb2.CreateGameResponse:
            options.pop("seat_names")
            return await create_game(players, **options)

        monkeypatch.setattr(client, "create_game", older_server)
        created, seats = await client.create_seated_game(["a", "b", "c"], seed=4)
        game = await client.get_game(created.game.game_id)
        assert game.status == game_pb2.GAME_STATUS_ACTIVE
        assert [(s.name, s.joined) for s in game.seats] == [("a", True), ("b", True), ("c", True)]
        assert len({s.token for s in seats}) == 3

        # There, a seat that cannot be joined leaves no half-seated game behind: it is abandoned.
        join_game = client.join_game
        made: list[str] = []

        async def second_join_fails(game_id: str, seat: int | None = None, name: str = "") -> SeatCredentials:
            made.append(game_id)
            if seat == 1:
                await join_game(game_id, 0, "taken twice")  # the seat is taken already: refused
            return await join_game(game_id, seat, name)

        monkeypatch.setattr(client, "join_game", second_join_fails)
        with pytest.raises(ClientError) as refused:
            await client.create_seated_game(["a", "b"], seed=5)
        assert refused.value.code == grpc.StatusCode.ALREADY_EXISTS
        game = await client.get_game(made[0])
        assert game.status == game_pb2.GAME_STATUS_ABANDONED
        assert "could not all be joined" in game.abandon_reason


def test_a_choice_that_is_not_listed_is_refused_before_it_is_sent() -> None:
    observation = game_pb2.Observation(version=3)
    observation.pending.options.add(index=0, text="play 1 income")
    observation.pending.options.add(index=1, text="play 1 none")
    assert to_answer(1, observation).option_index == 1
    assert to_answer("play 1 none", observation).option_index == 1
    assert to_answer(observation.pending.options[0], observation).option_index == 0
    for bad in (2, -1, "play 9 mine", True, 1.0, game_pb2.LegalOption(index=0, text="skip")):
        with pytest.raises(InvalidChoice):
            to_answer(bad, observation)  # type: ignore[arg-type]


async def test_cannot_connect_is_one_sentence_and_quick() -> None:
    started = time.monotonic()
    with pytest.raises(ConnectError, match=r"cannot connect to the Kutná Hora server at 127\.0\.0\.1:1 "):
        await Client.connect("127.0.0.1:1", timeout=1.0)
    assert time.monotonic() - started < 5


async def test_a_wrong_token_is_refused_with_its_reason(server_address: str) -> None:
    async with await Client.connect(server_address) as client:
        created = await client.create_game(2)
        game_id = created.game.game_id
        await client.join_game(game_id, 0)
        await client.join_game(game_id, 1)
        with pytest.raises(ClientError) as refused:
            await client.play(RandomBot(1), SeatCredentials(game_id, 0, "not-the-token"))
        assert refused.value.code == grpc.StatusCode.UNAUTHENTICATED
        assert refused.value.reason == "UNAUTHENTICATED"
        with pytest.raises(ClientError, match="NOT_FOUND") as missing:
            await client.get_game("no-such-game")
        assert missing.value.reason == "NOT_FOUND"


async def test_a_refusal_says_why_in_a_word_a_program_can_act_on(server_address: str) -> None:
    """The reason comes from the status details (google.rpc.ErrorInfo), not from the English sentence."""
    async with await Client.connect(server_address) as client:
        created = await client.create_game(3)
        game_id = created.game.game_id
        await client.join_game(game_id, 0)
        with pytest.raises(ClientError) as taken:
            await client.join_game(game_id, 0)
        assert (taken.value.code, taken.value.reason) == (grpc.StatusCode.ALREADY_EXISTS, "SEAT_TAKEN")
        with pytest.raises(ClientError) as running:
            await client.replay(game_id)
        assert (running.value.code, running.value.reason) == (
            grpc.StatusCode.FAILED_PRECONDITION,
            "GAME_NOT_ENDED",
        )


class SlowOnce(Bot):
    """Sleeps past the clock on its first decision, so the server decides for it and its answer is stale."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.slept = False
        self.rng = RandomBot(3)

    async def choose(self, observation: Observation) -> Choice:
        if not self.slept:
            self.slept = True
            await asyncio.sleep(self.delay)
        return self.rng.choose(observation)


async def test_a_stale_answer_is_read_again_and_the_game_goes_on(server_address: str) -> None:
    clock = game_pb2.ClockSettings(max_strikes=5)
    clock.decision_time.FromMilliseconds(300)
    clock.time_bank.FromMilliseconds(0)
    async with await Client.connect(server_address) as client:
        created = await client.create_game(2, seed=9, clock=clock)
        game_id = created.game.game_id
        seats = [await client.join_game(game_id, s) for s in range(2)]
        slow = SlowOnce(delay=1.0)
        outcomes = await asyncio.gather(client.play(slow, seats[0]), client.play(RandomBot(2), seats[1]))
        summary = await client.get_game(game_id)
        replay = await client.replay(game_id)
    assert all(o.finished for o in outcomes)
    assert summary.seats[0].strikes >= 1  # the server decided for the slow seat once
    assert outcomes[0].refused >= 1  # the late answer was refused as stale, and the bot read again
    sources = [d.source for d in replay.decisions if d.seat == 0]
    assert game_pb2.DECISION_SOURCE_TIMEOUT in sources
    assert sources.count(game_pb2.DECISION_SOURCE_SEAT) > 10  # and the bot played on after that


class Listening(SlowOnce):
    """Records the server's confirmations and refusals of its answers."""

    def __init__(self, delay: float) -> None:
        super().__init__(delay)
        self.confirmed: list[int] = []
        self.refusals: list[int] = []

    def accepted(self, version: int) -> None:
        self.confirmed.append(version)

    def refused(self, rejected: play_service_pb2.DecisionRejected) -> None:
        self.refusals.append(rejected.reason)


async def test_a_bot_that_listens_hears_each_answer_applied_and_each_refused(server_address: str) -> None:
    clock = game_pb2.ClockSettings(max_strikes=5)
    clock.decision_time.FromMilliseconds(300)
    clock.time_bank.FromMilliseconds(0)
    async with await Client.connect(server_address) as client:
        created = await client.create_game(2, seed=9, clock=clock)
        game_id = created.game.game_id
        seats = [await client.join_game(game_id, s) for s in range(2)]
        listening = Listening(delay=1.0)
        await asyncio.gather(client.play(listening, seats[0]), client.play(RandomBot(2), seats[1]))
        replay = await client.replay(game_id)
    answered = [
        d.version for d in replay.decisions if d.seat == 0 and d.source == game_pb2.DECISION_SOURCE_SEAT
    ]
    seat_0 = [d.version for d in replay.decisions if d.seat == 0]
    # Every answer applied was confirmed, in order; a late answer equal to the one the clock made for the
    # seat is an exact retry, confirmed too; nothing else is.
    assert [v for v in listening.confirmed if v in answered] == answered
    assert set(listening.confirmed) <= set(seat_0) and listening.confirmed == sorted(set(listening.confirmed))
    assert game_pb2.REJECT_REASON_STALE_VERSION in listening.refusals  # the answer the clock overtook


class DroppingProxy:
    """A TCP proxy in front of the server whose connections can be cut, like a network failure."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.writers: list[asyncio.StreamWriter] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
        self.writers += [writer, up_writer]

        async def pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                while data := await source.read(65536):
                    target.write(data)
                    await target.drain()
            target.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def drop_all(self) -> None:
        for writer in self.writers:
            transport = writer.transport
            transport.abort()
        self.writers.clear()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
        self.drop_all()


async def test_a_dropped_connection_is_reopened_and_the_game_finishes() -> None:
    server, port = await create_server("127.0.0.1:0", ServerConfig.in_memory())
    await server.start()
    proxy = DroppingProxy(port)
    proxy_port = await proxy.start()
    try:

        class DropsTheLine(Bot):
            def __init__(self) -> None:
                self.rng = RandomBot(4)
                self.decisions = 0

            def choose(self, observation: Observation) -> Choice:
                self.decisions += 1
                if self.decisions in (15, 40):
                    asyncio.get_running_loop().call_soon(proxy.drop_all)
                return self.rng.choose(observation)

        async with await Client.connect(f"127.0.0.1:{port}") as direct:
            created = await direct.create_game(2, seed=21)
            game_id = created.game.game_id
            seats = [await direct.join_game(game_id, s) for s in range(2)]
            async with await Client.connect(f"127.0.0.1:{proxy_port}") as flaky:
                outcomes = await asyncio.wait_for(
                    asyncio.gather(
                        flaky.play(DropsTheLine(), seats[0], reconnect_for=20),
                        direct.play(RandomBot(5), seats[1]),
                    ),
                    timeout=60,
                )
    finally:
        await proxy.stop()
        await server.stop(0)
    assert all(o.finished for o in outcomes)
    assert outcomes[0].reconnects >= 1


async def test_a_watch_stream_resumes_after_a_drop_without_missing_a_version(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="kutnahora.clients.sdk")
    server, port = await create_server("127.0.0.1:0", ServerConfig.in_memory())
    await server.start()
    proxy = DroppingProxy(port)
    proxy_port = await proxy.start()
    try:
        outcomes = await play_game(f"127.0.0.1:{port}", ["random", "random"], seed=31)
        game_id = outcomes[0].game_id
        versions: list[int] = []
        async with await Client.connect(f"127.0.0.1:{proxy_port}") as flaky:
            async for message in flaky.watch(game_id, reconnect_for=20):
                versions.append(message.observation.version)
                if len(versions) in (10, 60):
                    proxy.drop_all()
    finally:
        await proxy.stop()
        await server.stop(0)
    assert versions == list(range(len(versions)))
    assert versions[-1] == outcomes[0].observation.version
    assert "watch stream of" in caplog.text and "reconnecting" in caplog.text  # the drop did happen


@needs_openssl
async def test_a_game_over_tls_with_a_private_ca(tmp_path: Path) -> None:
    key, cert = make_certificate(tmp_path)
    server, port = await create_server(
        "127.0.0.1:0", ServerConfig.in_memory(tls_cert=str(cert), tls_key=str(key))
    )
    await server.start()
    try:
        with pytest.raises(ConnectError, match="If it serves TLS, connect with TLS"):  # plain to a TLS port
            await Client.connect(f"localhost:{port}", timeout=2)
        with pytest.raises(ConnectError, match=r"over TLS .*--ca-cert"):  # the system's CAs did not sign it
            await Client.connect(f"localhost:{port}", tls=True, timeout=2)
        async with await Client.connect(f"localhost:{port}", tls=True, ca_cert=str(cert)) as client:
            created = await client.create_game(2, seed=3)
            seats = [await client.join_game(created.game.game_id, s) for s in range(2)]
            outcomes = await asyncio.gather(*(client.play(RandomBot(s.seat), s) for s in seats))
    finally:
        await server.stop(0)
    assert all(o.finished for o in outcomes)


async def test_a_join_whose_reply_was_lost_is_retried_and_gets_the_same_seat_and_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server dies between storing the join and replying; the SDK sends the join again (same
    request_id) until a server on the same store answers: one seat taken, and its token works."""
    import socket

    from tests.server.test_restart import server_process

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    db = tmp_path / "games.db"
    address = f"127.0.0.1:{port}"
    with server_process(db, "--port", str(port)):
        async with await Client.connect(address) as client:
            game_id = (await client.create_game(2, seed=3)).game.game_id
    monkeypatch.setenv("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT", "JoinGame")
    with server_process(db, "--port", str(port)) as (doomed, _):
        monkeypatch.delenv("KUTNAHORA_FAULT_EXIT_AFTER_COMMIT")
        async with await Client.connect(address) as client:
            joining = asyncio.create_task(client.join_game(game_id, 1, "ann"))
            while doomed.poll() is None:  # it stores the join, then exits before replying
                await asyncio.sleep(0.05)
            assert doomed.returncode == 75 and not joining.done()
            with server_process(db, "--port", str(port)):
                seat = await asyncio.wait_for(joining, 30)
                assert seat.seat == 1 and seat.token
                summary = await client.get_game(game_id)
                assert [s.joined for s in summary.seats] == [False, True]
                observed = await client.observe(game_id, seat)  # the token is seat 1's
                assert observed.observation.viewer == 1


async def test_a_server_killed_while_the_bot_thinks_is_reconnected_to_when_it_returns(tmp_path: Path) -> None:
    """The answer of a bot that was still choosing when its server died meets a finished call: the SDK
    reconnects (here to the restarted server) and plays on, instead of failing with the write's
    InvalidStateError."""
    import signal
    import socket

    from tests.server.test_restart import server_process

    thinking = asyncio.Event()

    class Slow(Bot):
        async def choose(self, observation: Observation) -> Choice:
            thinking.set()
            await asyncio.sleep(0.5)
            return 0

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    address, db = f"127.0.0.1:{port}", tmp_path / "games.db"
    with server_process(db, "--port", str(port)) as (process, _):
        client = await Client.connect(address)
        created, seats = await client.create_seated_game(["slow", "other"], seed=4)
        first = (await client.get_game(created.game.game_id)).pending_seat
        playing = asyncio.create_task(client.play(Slow(), seats[first], reconnect_for=30))
        await asyncio.wait_for(thinking.wait(), 10)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
        await asyncio.sleep(1.0)  # the bot answers into the dead call meanwhile
    with server_process(db, "--port", str(port)):
        await asyncio.sleep(1.0)  # the play session reconnects and answers its turn on the new server
        assert not playing.done()
        async with await Client.connect(address) as other:
            await other.abandon(created.game.game_id, created.game_token, "done")
        outcome = await asyncio.wait_for(playing, 30)
        await client.close()
    assert outcome.status == game_pb2.GAME_STATUS_ABANDONED
    assert outcome.reconnects >= 1


async def test_answers_refused_while_the_store_is_away_are_sent_again_until_it_returns() -> None:
    """A database restarting refuses decisions with STORE_UNAVAILABLE (nothing applied): the play loop
    waits, longer each time, and sends the turn again, so the game goes on once the store is back."""
    from kutnahora.server.store import StoreError

    server, port = await create_server("127.0.0.1:0", ServerConfig(db=":memory:", metrics_port=None))
    await server.start()
    store = server.hub.store
    append = store.append_decision
    failures = {"left": 4}

    async def flaky(game_id: str, decision: Any) -> None:
        if failures["left"] > 0:
            failures["left"] -= 1
            raise StoreError("the store could not append: the database is restarting")
        await append(game_id, decision)

    store.append_decision = flaky  # type: ignore[method-assign]
    try:
        outcomes = await play_game(f"127.0.0.1:{port}", ["random", "random"], seed=21)
    finally:
        await server.stop(None)
    assert failures["left"] == 0
    assert [o.status for o in outcomes] == [game_pb2.GAME_STATUS_FINISHED] * 2
    assert sum(o.refused for o in outcomes) == 4


async def test_a_rate_limited_create_waits_as_the_server_asks_and_then_succeeds() -> None:
    """A caller past its CreateGame/JoinGame rate is refused RESOURCE_EXHAUSTED with a RetryInfo; the SDK
    waits that long and asks again within ``retry_for``, and without the time for it says why and when."""
    config = ServerConfig.in_memory(quotas=Quotas(caller_rate=1.0, caller_burst=1, exempt=()))
    server, port = await create_server("127.0.0.1:0", config)
    await server.start()
    try:
        async with await Client.connect(f"127.0.0.1:{port}", retry_for=0.0) as hasty:
            await hasty.create_game(2)
            with pytest.raises(ClientError) as refused:
                await hasty.create_game(2)
            error = refused.value
            assert (error.code, error.reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED, "RATE_LIMITED")
            assert error.retry_after is not None and 0 < error.retry_after <= 1.0
            assert "try again in" in str(error)
        async with await Client.connect(f"127.0.0.1:{port}", retry_for=10.0) as patient:
            games_before = len(await patient.list_games())
            started = time.monotonic()
            await patient.create_game(2)  # the bucket is empty again after the refused caller's call
            await patient.create_game(2)
            assert time.monotonic() - started >= 0.5, "the second create waited for the bucket"
            assert len(await patient.list_games()) == games_before + 2
    finally:
        await server.stop(0)


async def test_a_quota_token_keeps_a_services_games_out_of_its_callers_quota() -> None:
    """``Client(quota_token=...)`` sends the server's --quota-token with CreateGame and JoinGame: a service
    creating games for many people is not one caller holding them all."""
    config = ServerConfig.in_memory(quotas=Quotas(caller_games=1, exempt=(), token="svc-quota-token"))
    server, port = await create_server("127.0.0.1:0", config)
    await server.start()
    try:
        async with await Client.connect(f"127.0.0.1:{port}", quota_token="svc-quota-token") as service:
            for _ in range(3):
                created = await service.create_game(2)
                await service.join_game(created.game.game_id)
        async with await Client.connect(f"127.0.0.1:{port}", retry_for=0.0) as plain:
            await plain.create_game(2)
            with pytest.raises(ClientError) as refused:
                await plain.create_game(2)
            assert refused.value.reason == "QUOTA_EXCEEDED"
    finally:
        await server.stop(0)
