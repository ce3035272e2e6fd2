"""A version built once for all workers, on SQLite and PostgreSQL: the built folder kept by its digest and
named by the build's report and every host lease, PutBuilt and GetBuilt in chunks past gRPC's 4 MiB, the
arena's --built-max-bytes, an upload that is not what it announced, and a version failed after its build
leases expired --hosted-max-failures times. Also the bot's name in ListSubmissions."""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kutnahora.arena.app import Arena, create_arena
from kutnahora.arena.host_leases import BuildWork, HostWork, LeaseGone, NotItsBuild
from kutnahora.arena.main import build_parser, config_from_args
from kutnahora.arena.pools import parse_pools
from kutnahora.arena.store import ArenaStore
from kutnahora.v1 import arena_service_pb2 as pb
from kutnahora.v1 import hosting_service_pb2 as hpb
from tests.arena.conftest import arena_config
from tests.arena.hosting_helpers import WORKER_TOKEN, archive, auth, refused, stubs
from tests.store.pg import fresh_schema

WORKER = auth(WORKER_TOKEN)
MIB = 1 << 20


@pytest.fixture(params=["sqlite", "postgresql"])
def db(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "arena.db")
    else:
        with fresh_schema("kh_arena_built") as url:
            yield url


async def lease(
    store: ArenaStore, lease_id: str, *, build: bool, host: bool, lease_time: float = 30, expiries: int = 0
) -> BuildWork | HostWork | None:
    return await store.lease_work(
        lease_id,
        "worker",
        build=build,
        host=host,
        seek_key_hash=f"hash-{lease_id}",
        lease_time=lease_time,
        per_hour=60,
        pools=("2",),
        max_expiries=expiries,
    )


async def test_a_built_folder_is_kept_once_and_named_by_every_host_lease(db: str) -> None:
    store = ArenaStore(db)
    await store.open()
    try:
        bot = await store.register("bot", "hash-b")
        await store.submit(bot.account_id, b"code", "a" * 64, "cpp", ["2"], 5)
        assert isinstance(await lease(store, "b", build=True, host=False), BuildWork)
        data = os.urandom(3 * MIB + 17)
        built = hashlib.sha256(data).hexdigest()
        chunks = [data[i : i + MIB] for i in range(0, len(data), MIB)]
        with pytest.raises(LeaseGone):
            await store.put_built("not-a-lease", built, "x86_64", len(data), iter(chunks))
        assert await store.built(built) is None, "a refused upload writes nothing"
        assert await store.put_built("b", built, "x86_64; debian 12", len(data), iter(chunks))
        assert not await store.put_built("b", built, "x86_64; debian 12", len(data), iter(chunks))
        kept = await store.built(built)
        assert kept is not None and (kept.size_bytes, kept.chunks) == (len(data), 4)
        assert kept.source_digest == "a" * 64 and kept.platform == "x86_64; debian 12"
        again = b"".join([await store.built_chunk(built, n) or b"" for n in range(kept.chunks)])
        assert again == data and await store.built_chunk(built, 4) is None
        with pytest.raises(NotItsBuild):
            await store.report_build("b", True, "", "log", "f" * 64)
        assert (await store.versions(bot.account_id))[0].state == "building", "nothing written"
        _, taken = await store.report_build("b", True, "", "log", built)
        assert taken
        hosted = await lease(store, "h", build=True, host=True)
        assert isinstance(hosted, HostWork) and hosted.built == kept
    finally:
        await store.close()


async def test_a_version_whose_build_leases_keep_expiring_fails_for_all(db: str) -> None:
    """Each expired build lease taken over counts; at the limit (3) the version is failed with a sentence
    its author reads, no worker is given its build again, and a version built before plays on."""
    store = ArenaStore(db)
    await store.open()
    try:
        bot = await store.register("hang", "hash-h")
        await store.submit(bot.account_id, b"one", "1" * 64, "go", ["2"], 5)
        assert isinstance(await lease(store, "ok", build=True, host=False), BuildWork)
        await store.report_build("ok", True, "", "")
        await store.submit(bot.account_id, b"two", "2" * 64, "go", ["2"], 5)
        taken = []
        for n in range(4):
            work = await lease(store, f"b{n}", build=True, host=False, lease_time=0.05, expiries=3)
            taken.append(work)
            await asyncio.sleep(0.1)  # the worker is lost: its lease expires
        assert [isinstance(w, BuildWork) and w.version == 2 for w in taken] == [True, True, True, False]
        versions = {v.version: v for v in await store.versions(bot.account_id)}
        assert versions[2].state == "failed"
        assert versions[2].reason.startswith("its build did not finish on 3 workers' leases")
        assert versions[1].state == "ready"
        assert await lease(store, "b9", build=True, host=False, expiries=3) is None
        assert await store.live_leases() == {"build": 0, "host": 0}
        hosted = await lease(store, "h", build=False, host=True)
        assert isinstance(hosted, HostWork) and hosted.version == 1 and hosted.built is None
    finally:
        await store.close()


@pytest.fixture
async def arena(tmp_path: Path, game_server: str) -> AsyncIterator[Arena]:
    config = arena_config(
        str(tmp_path / "arena.db"),
        game_server,
        pools=parse_pools("2"),
        worker_token=WORKER_TOKEN,
        built_max_bytes=6 * MIB,
    )
    running, _ = await create_arena("127.0.0.1:0", config)
    await running.start()
    try:
        yield running
    finally:
        await running.stop(0)


async def put(workers: Any, messages: list[hpb.PutBuiltRequest]) -> hpb.PutBuiltResponse:
    """PutBuilt as a worker sends it, message by message: a refusal is the arena's status, also when it
    refuses before the last message."""
    call = workers.PutBuilt(metadata=WORKER)
    for message in messages:
        await call.write(message)
    await call.done_writing()
    return await call


def uploads(lease_id: str, artifact: hpb.BuiltArtifact, data: bytes) -> list[hpb.PutBuiltRequest]:
    messages = [hpb.PutBuiltRequest(lease_id=lease_id, artifact=artifact, chunk=data[:MIB])]
    messages += [hpb.PutBuiltRequest(chunk=data[i : i + MIB]) for i in range(MIB, len(data), MIB)]
    return messages


async def test_put_and_get_built_in_chunks_past_grpcs_message_limit(arena: Arena, tmp_path: Path) -> None:
    async with stubs(arena) as (bots, workers):
        key = (await bots.RegisterBot(pb.RegisterBotRequest(name="big-bot"))).api_key
        listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
        assert listed.name == "big-bot"
        await bots.SubmitBot(
            pb.SubmitBotRequest(archive=archive(tmp_path / "b", "big-bot")), metadata=auth(key)
        )
        leased = await workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True), metadata=WORKER)
        assert leased.WhichOneof("work") == "build"
        assert leased.build.built_max_bytes == 6 * MIB, "the worker is told the arena's bound"
        data = os.urandom(5 * MIB + 3)  # past gRPC's 4 MiB message limit
        artifact = hpb.BuiltArtifact(
            digest=hashlib.sha256(data).hexdigest(), size_bytes=len(data), platform="x86_64; test"
        )
        tampered = data[:-1] + bytes([data[-1] ^ 1])
        sentence, _ = await refused(
            put(workers, uploads(leased.lease_id, artifact, tampered)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "MALFORMED",
        )
        assert "not the" in sentence and artifact.digest[:12] in sentence
        short = hpb.BuiltArtifact(digest=artifact.digest, size_bytes=len(data) - 1, platform="p")
        await refused(
            put(workers, uploads(leased.lease_id, short, data)),
            grpc.StatusCode.INVALID_ARGUMENT,
            "MALFORMED",
        )
        await refused(
            put(workers, uploads("no-such-lease", artifact, data)),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        await refused(
            workers.GetBuilt(hpb.GetBuiltRequest(digest=artifact.digest), metadata=WORKER).read(),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        kept = await put(workers, uploads(leased.lease_id, artifact, data))
        assert not kept.existed
        kept = await put(workers, uploads(leased.lease_id, artifact, data))
        assert kept.existed
        await refused(
            workers.ReportBuild(
                hpb.ReportBuildRequest(lease_id=leased.lease_id, ok=True, built_digest="e" * 64),
                metadata=WORKER,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "MALFORMED",
        )
        await workers.ReportBuild(
            hpb.ReportBuildRequest(lease_id=leased.lease_id, ok=True, built_digest=artifact.digest),
            metadata=WORKER,
        )
        hosted = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
        assert hosted.host.built == artifact
        received: list[Any] = [
            m async for m in workers.GetBuilt(hpb.GetBuiltRequest(digest=artifact.digest), metadata=WORKER)
        ]
        assert received[0].artifact == artifact and len(received) == 6
        assert b"".join(m.chunk for m in received) == data
        unauthenticated = workers.GetBuilt(hpb.GetBuiltRequest(digest=artifact.digest))
        await refused(unauthenticated.read(), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")


async def test_a_built_folder_past_built_max_bytes_is_refused_with_a_sentence(
    arena: Arena, tmp_path: Path
) -> None:
    async with stubs(arena) as (bots, workers):
        key = (await bots.RegisterBot(pb.RegisterBotRequest(name="huge"))).api_key
        await bots.SubmitBot(pb.SubmitBotRequest(archive=archive(tmp_path / "h", "huge")), metadata=auth(key))
        leased = await workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True), metadata=WORKER)
        data = os.urandom(7 * MIB)
        artifact = hpb.BuiltArtifact(
            digest=hashlib.sha256(data).hexdigest(), size_bytes=len(data), platform="p"
        )
        sentence, _ = await refused(
            put(workers, uploads(leased.lease_id, artifact, data)),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
        )
        assert "7.0 MiB" in sentence and "at most 6.0 MiB" in sentence and "--built-max-bytes" in sentence
        # The version still builds: reported without a built folder, each worker builds it itself.
        await workers.ReportBuild(hpb.ReportBuildRequest(lease_id=leased.lease_id, ok=True), metadata=WORKER)
        hosted = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
        assert hosted.host.bot_name == "huge" and not hosted.host.HasField("built")


class Ended(Exception):
    """The servicer ended the call with a status."""


class Call:
    """What HostingService reads of a call (the worker's token) and how it ended it."""

    def __init__(self) -> None:
        self.code: grpc.StatusCode | None = None
        self.details = ""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return WORKER

    def peer(self) -> str:
        return "ipv4:127.0.0.1:1"

    async def abort(self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()) -> None:
        self.code, self.details = code, details
        raise Ended(details)


class Sender:
    """A worker that sends ``first`` and then ``chunk`` after ``chunk`` (``most`` messages in all), counting
    how far the arena pulled its stream."""

    def __init__(self, first: hpb.PutBuiltRequest, chunk: bytes, most: int = 200) -> None:
        self.first = first
        self.chunk = chunk
        self.most = most
        self.pulled = 0

    async def messages(self) -> AsyncIterator[hpb.PutBuiltRequest]:
        self.pulled += 1
        yield self.first
        while self.pulled < self.most:
            self.pulled += 1
            yield hpb.PutBuiltRequest(chunk=self.chunk)


async def test_after_a_refusal_the_arena_reads_no_further_than_the_upload_announced(
    arena: Arena, tmp_path: Path
) -> None:
    """A worker that keeps sending after its upload is refused gets the refusal, and the arena stops
    reading one message past where an honest upload of what it announced would have ended (the 6 MiB of
    --built-max-bytes at most), however small the chunks; an honest worker reads the status over gRPC."""
    async with stubs(arena) as (bots, workers):
        key = (await bots.RegisterBot(pb.RegisterBotRequest(name="sender"))).api_key
        submitted = pb.SubmitBotRequest(archive=archive(tmp_path / "s", "sender"))
        await bots.SubmitBot(submitted, metadata=auth(key))
        leased = await workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True), metadata=WORKER)
        assert leased.WhichOneof("work") == "build"

        def first(lease_id: str, size: int, chunk: bytes) -> hpb.PutBuiltRequest:
            artifact = hpb.BuiltArtifact(digest="d" * 64, size_bytes=size, platform="p")
            return hpb.PutBuiltRequest(lease_id=lease_id, artifact=artifact, chunk=chunk)

        block = bytes(MIB)
        cases = [  # (the stream, the refusal, the messages read: an honest upload of it, and one more)
            (Sender(first("no-such-lease", 3 * MIB, block), block), grpc.StatusCode.NOT_FOUND, 4),
            (Sender(first("no-such-lease", 3 * MIB, b"x"), b"x"), grpc.StatusCode.NOT_FOUND, 4),
            (Sender(first(leased.lease_id, 7 * MIB, block), block), grpc.StatusCode.RESOURCE_EXHAUSTED, 7),
            (Sender(first(leased.lease_id, 10, block), block), grpc.StatusCode.INVALID_ARGUMENT, 1),
            (Sender(first(leased.lease_id, 2 * MIB, block), b""), grpc.StatusCode.INVALID_ARGUMENT, 3),
        ]
        for sender, code, read in cases:
            call = Call()
            with pytest.raises(Ended):
                await arena.hosting.PutBuilt(sender.messages(), call)
            assert call.code == code, call.details
            assert sender.pulled == read, (call.details, sender.pulled)
        assert "at least one byte" in call.details
        for _ in range(10):  # an honest upload refused at its first message is read to its end: its status
            honest = Sender(first("no-such-lease", 3 * MIB, block), block, most=3)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await workers.PutBuilt(honest.messages(), metadata=WORKER)
            assert caught.value.code() == grpc.StatusCode.NOT_FOUND, caught.value.details()


def test_the_built_max_bytes_flag() -> None:
    assert config_from_args(build_parser().parse_args([])).built_max_bytes == 256 * MIB
    assert config_from_args(build_parser().parse_args(["--built-max-bytes", "1000"])).built_max_bytes == 1000
    with pytest.raises(SystemExit, match="--built-max-bytes"):
        config_from_args(build_parser().parse_args(["--built-max-bytes", "-1"]))
