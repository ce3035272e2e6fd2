"""What only the PostgreSQL store does: migrations, the change feed between replicas, its URL and errors."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import psycopg
import pytest

from kutnahora.server.notify import GameChange, change_feed, missing_decisions
from kutnahora.server.store import DecisionRow, DuplicateDecision, GameRow, SeatRow, SqliteStore, StoreError
from kutnahora.server.store.postgres import (
    SCHEMA_VERSION,
    PostgresStore,
    is_postgres_url,
    redact_url,
    split_url,
)
from tests.store.pg import fresh_schema, require_postgres


def game(game_id: str) -> GameRow:
    """A small game record."""
    return GameRow(game_id, time.time(), 2, False, None, None, 7, {}, "", "00", 1)


def row(seq: int) -> DecisionRow:
    """A decision row."""
    return DecisionRow(seq, seq % 2, "skip", "seat", 1, time.time())


@pytest.fixture
def url() -> Iterator[str]:
    """A PostgreSQL URL whose tables live in a fresh schema."""
    with fresh_schema() as schema_url:
        yield schema_url


def test_urls_are_told_apart_and_pool_settings_taken_out() -> None:
    assert is_postgres_url("postgresql://u@h/db") and is_postgres_url("postgres://h/db")
    assert not is_postgres_url("/var/lib/kutnahora/games.db") and not is_postgres_url(":memory:")
    conninfo, pool = split_url("postgresql://u:pw@h:5432/db?sslmode=require&pool_max_size=20&pool_min_size=2")
    assert conninfo == "postgresql://u:pw@h:5432/db?sslmode=require"
    assert pool == {"pool_max_size": 20.0, "pool_min_size": 2.0}
    assert redact_url("postgresql://u:secret@h/db") == "postgresql://u:***@h/db"
    with pytest.raises(ValueError):
        PostgresStore("postgresql://h/db?pool_min_size=5&pool_max_size=2")


async def test_an_unreachable_database_is_a_clear_store_error() -> None:
    store = PostgresStore("postgresql://nobody:pw@127.0.0.1:9/none?connect_timeout=1&pool_timeout=1")
    started = time.monotonic()
    with pytest.raises(
        Exception, match=r"cannot connect to PostgreSQL at postgresql://nobody:\*\*\*@"
    ) as raised:
        await store.open()
    assert "pw@" not in str(raised.value)
    assert time.monotonic() - started < 10


async def test_the_schema_is_created_once_by_replicas_starting_together(url: str) -> None:
    stores = [PostgresStore(url) for _ in range(3)]
    await asyncio.gather(*(store.open() for store in stores))
    try:
        with psycopg.connect(url) as conn:
            versions = conn.execute(
                "SELECT version FROM kutnahora_schema_version ORDER BY version"
            ).fetchall()
        assert [v for (v,) in versions] == list(range(1, SCHEMA_VERSION + 1))
        assert await stores[0].migrate() == SCHEMA_VERSION  # migrating again changes nothing
    finally:
        await asyncio.gather(*(store.close() for store in stores))


async def test_a_schema_from_a_newer_server_is_refused(url: str) -> None:
    store = PostgresStore(url)
    await store.open()
    await store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO kutnahora_schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(Exception, match="newer than this server knows"):
        await PostgresStore(url).open()


async def test_replicas_hear_each_others_writes_but_not_their_own(url: str) -> None:
    writer, reader = PostgresStore(url, replica_id="writer"), PostgresStore(url, replica_id="reader")
    await writer.open()
    await reader.open()
    heard_by_reader: list[GameChange] = []
    heard_by_writer: list[GameChange] = []
    arrived = asyncio.Event()

    def on_change(change: GameChange) -> None:
        heard_by_reader.append(change)
        if change.kind == "status":
            arrived.set()

    assert change_feed(reader) is reader and change_feed(SqliteStore(":memory:")) is None
    unsubscribe = reader.subscribe(on_change)
    writer.subscribe(heard_by_writer.append)
    try:
        await writer.create_game(game("g-feed"), [SeatRow(0), SeatRow(1)])
        await writer.save_seat("g-feed", SeatRow(0, "bot", "11", False, time.time()))
        for seq in range(3):
            await writer.append_decision("g-feed", row(seq))
        await writer.set_status("g-feed", "active", time.time())
        await asyncio.wait_for(arrived.wait(), timeout=5)
        assert [(c.kind, c.version, c.game_id, c.origin) for c in heard_by_reader] == [
            ("created", 0, "g-feed", "writer"),
            ("seat", 0, "g-feed", "writer"),
            ("decision", 1, "g-feed", "writer"),
            ("decision", 2, "g-feed", "writer"),
            ("decision", 3, "g-feed", "writer"),
            ("status", 0, "g-feed", "writer"),
        ]
        assert heard_by_writer == []
        # What a replica holding the game at version 1 must still apply:
        stored = await reader.load_game("g-feed")
        assert stored is not None
        assert [d.seq for d in missing_decisions(stored, 1)] == [1, 2]
    finally:
        unsubscribe()
        await writer.close()
        await reader.close()


async def test_a_losing_append_sends_no_notification(url: str) -> None:
    first, second, listener = (PostgresStore(url, replica_id=name) for name in ("a", "b", "c"))
    for store in (first, second, listener):
        await store.open()
    heard: list[GameChange] = []
    listener.subscribe(heard.append)
    try:
        await first.create_game(game("g-lose"), [SeatRow(0), SeatRow(1)])
        outcomes = await asyncio.gather(
            first.append_decision("g-lose", row(0)),
            second.append_decision("g-lose", row(0)),
            return_exceptions=True,
        )
        assert sum(outcome is None for outcome in outcomes) == 1
        await first.set_status("g-lose", "active", time.time())
        for _ in range(50):
            if any(c.kind == "status" for c in heard):
                break
            await asyncio.sleep(0.05)
        assert [c.kind for c in heard] == ["created", "decision", "status"]
    finally:
        for store in (first, second, listener):
            await store.close()


async def test_the_feed_resumes_after_its_connection_is_killed(url: str) -> None:
    require_postgres()
    writer, reader = PostgresStore(url, replica_id="w"), PostgresStore(url, replica_id="r")
    await writer.open()
    await reader.open()
    heard: list[GameChange] = []
    reader.subscribe(heard.append)
    try:
        await writer.create_game(game("g-resume"), [SeatRow(0), SeatRow(1)])
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE query LIKE %s AND pid <> pg_backend_pid()",
                (f'LISTEN "{reader.channel}"%',),
            )
        for _ in range(100):
            if any(c.kind == "resync" for c in heard):
                break
            await asyncio.sleep(0.05)
        assert any(c.kind == "resync" and c.game_id == "" for c in heard)
        await writer.append_decision("g-resume", row(0))
        for _ in range(100):
            if any(c.kind == "decision" for c in heard):
                break
            await asyncio.sleep(0.05)
        assert any(c.kind == "decision" and c.version == 1 for c in heard)
    finally:
        await writer.close()
        await reader.close()


def test_change_payloads_round_trip() -> None:
    change = GameChange("game-1", "decision", 42, "pod-a.1234")
    assert GameChange.decode(change.encode()) == change
    with pytest.raises(ValueError):
        GameChange.decode("pod x 1 game")


async def test_a_seat_joined_through_two_replicas_keeps_the_first_token(url: str) -> None:
    first, second = PostgresStore(url), PostgresStore(url)
    await first.open()
    await second.open()
    try:
        await first.create_game(game("g-seat"), [SeatRow(0), SeatRow(1)])
        await first.save_seat("g-seat", SeatRow(0, "first", "aa", False, 1.0))
        with pytest.raises(StoreError, match="taken through another replica"):
            await second.save_seat("g-seat", SeatRow(0, "second", "bb", False, 2.0))
        await second.save_seat("g-seat", SeatRow(0, "first", "aa", True, 1.0))  # a resignation is fine
        stored = await second.load_game("g-seat")
        assert stored is not None
        assert stored.seats[0] == SeatRow(0, "first", "aa", True, 1.0)
    finally:
        await first.close()
        await second.close()


async def test_concurrent_writes_share_commits(url: str) -> None:
    commits: list[int] = []
    store = PostgresStore(url, on_commit=lambda seconds, writes: commits.append(writes))
    await store.open()
    try:
        for index in range(20):
            await store.create_game(game(f"g-group-{index}"), [SeatRow(0), SeatRow(1)])
        commits.clear()
        await asyncio.gather(*(store.append_decision(f"g-group-{index}", row(0)) for index in range(20)))
        assert sum(commits) == 20
        assert len(commits) < 20, "every write had a commit of its own"
        for index in range(20):
            stored = await store.load_game(f"g-group-{index}")
            assert stored is not None and stored.game.version == 1
    finally:
        await store.close()


async def test_a_caller_cancelled_while_its_write_is_under_way_waits_for_it_then_is_cancelled(
    url: str,
) -> None:
    """A Play stream closed while its decision is being stored: the write runs to its end and its caller
    returns from it (so that its game applies the decision), and the cancellation arrives at the caller's
    next wait."""
    store = PostgresStore(url)
    await store.open()
    steps: list[str] = []

    async def submit() -> None:
        await store.append_decision("g-cancelled", row(0))
        steps.append("applied")
        await asyncio.sleep(5)
        steps.append("went on")

    try:
        await store.create_game(game("g-cancelled"), [SeatRow(0), SeatRow(1)])
        submitting = asyncio.create_task(submit())
        await asyncio.sleep(0)  # the write is queued for the writer
        submitting.cancel()
        with pytest.raises(asyncio.CancelledError):
            await submitting
        assert steps == ["applied"]
        stored = await store.load_game("g-cancelled")
        assert stored is not None and stored.game.version == 1
        await store.append_decision("g-cancelled", row(1))
    finally:
        await store.close()


async def test_a_write_that_fails_in_the_database_does_not_fail_the_others(url: str) -> None:
    store = PostgresStore(url)
    await store.open()
    try:
        await store.create_game(game("g-good"), [SeatRow(0), SeatRow(1)])
        broken = GameRow(
            "g-broken", time.time(), 0, False, None, None, 7, {}, "", "00", 1
        )  # 0 players: CHECK
        outcomes = await asyncio.gather(
            store.append_decision("g-good", row(0)),
            store.create_game(broken, []),
            store.save_seat("g-good", SeatRow(1, "b", "22")),
            return_exceptions=True,
        )
        assert outcomes[0] is None and outcomes[2] is None
        assert isinstance(outcomes[1], StoreError) and "players" in str(outcomes[1])
        stored = await store.load_game("g-good")
        assert stored is not None and stored.game.version == 1 and stored.seats[1].name == "b"
        assert await store.load_game("g-broken") is None
    finally:
        await store.close()


async def test_refused_writes_in_a_batch_say_why_and_the_others_commit(url: str) -> None:
    """One pipelined transaction holds writes that are refused (each for its own reason) and writes that
    are not: the refused ones write nothing and say why, the others are stored."""
    commits: list[int] = []
    store = PostgresStore(url, on_commit=lambda seconds, writes: commits.append(writes))
    await store.open()
    try:
        await store.create_game(game("g-one"), [SeatRow(0), SeatRow(1)])
        await store.create_game(game("g-two"), [SeatRow(0), SeatRow(1)])
        await store.append_decision("g-one", row(0))
        await store.save_seat("g-one", SeatRow(1, "first", "11"))
        commits.clear()
        outcomes = await asyncio.gather(
            store.append_decision("g-one", row(1)),  # the next one: stored
            store.append_decision("g-one", row(0)),  # already stored
            store.append_decision("g-two", row(3)),  # a gap
            store.append_decision("g-none", row(0)),  # an unknown game
            store.save_seat("g-one", SeatRow(1, "second", "22")),  # taken with another token
            store.create_game(game("g-two"), [SeatRow(0)]),  # exists
            store.save_seat("g-two", SeatRow(0, "ann", "33")),  # stored
            return_exceptions=True,
        )
        assert outcomes[0] is None and outcomes[6] is None
        assert isinstance(outcomes[1], DuplicateDecision)
        assert isinstance(outcomes[2], StoreError) and "gap" in str(outcomes[2])
        assert isinstance(outcomes[3], StoreError) and "not in the store" in str(outcomes[3])
        assert isinstance(outcomes[4], StoreError) and "taken through another replica" in str(outcomes[4])
        assert isinstance(outcomes[5], StoreError) and "already exists" in str(outcomes[5])
        assert sum(commits) == 2 and len(commits) < 7
        one, two = await store.load_game("g-one"), await store.load_game("g-two")
        assert one is not None and one.game.version == 2 and one.seats[1].name == "first"
        assert two is not None and two.game.version == 0 and two.seats[0].name == "ann"
        assert len(two.seats) == 2, "the refused create_game added no seat"
    finally:
        await store.close()


async def test_a_refusal_that_cannot_be_explained_fails_alone(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When asking why a write was refused fails, that write gets a StoreError; the writes committed in
    the same transaction stay committed, once, and are not run again."""
    store = PostgresStore(url)
    await store.open()
    try:
        await store.create_game(game("g-x"), [SeatRow(0), SeatRow(1)])
        await store.save_seat("g-x", SeatRow(1, "first", "11"))

        async def unreachable(conn: object, game_id: str) -> bool:
            raise psycopg.OperationalError("the connection was lost")

        monkeypatch.setattr(store, "_game_exists", unreachable)
        outcomes = await asyncio.gather(
            store.append_decision("g-x", row(0)),
            store.save_seat("g-x", SeatRow(1, "second", "22")),
            return_exceptions=True,
        )
        assert outcomes[0] is None, "the stored decision was run again and refused as a duplicate"
        assert isinstance(outcomes[1], StoreError) and "connection was lost" in str(outcomes[1])
        stored = await store.load_game("g-x")
        assert stored is not None and stored.game.version == 1 and stored.seats[1].name == "first"
    finally:
        await store.close()
