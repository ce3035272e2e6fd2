"""The sandbox workers' HostingService against a real arena: the worker token, builds leased and
reported, a bot leased to host whose seek key seeks and is matched, a seat reported started and handed to
the next lease once its lease expired, failures in a row that pause the bot, SetHosting that resumes it,
and seat logs read by their own author only."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from kutnahora.arena.app import Arena, create_arena
from kutnahora.arena.main import build_parser, config_from_args
from kutnahora.arena.pools import parse_pools
from kutnahora.arena.ratings import Rating
from kutnahora.v1 import arena_service_pb2 as pb
from kutnahora.v1 import hosting_service_pb2 as hpb
from tests.arena.conftest import StartArena, arena_config
from tests.arena.hosting_helpers import WORKER_TOKEN, archive, auth, metric, refused, stubs
from tests.store.pg import fresh_schema

LEASE = 1.0
WORKER = auth(WORKER_TOKEN)


async def start(db: str, game_server: str, **changes: object) -> Arena:
    config = arena_config(
        db,
        game_server,
        pools=parse_pools("2,2-fast,2-slow"),
        worker_token=WORKER_TOKEN,
        lease_seconds=LEASE,
        **changes,
    )
    arena, _ = await create_arena("127.0.0.1:0", config)
    await arena.start()
    return arena


@pytest.fixture
async def hosting_arena(tmp_path: Path, game_server: str) -> AsyncIterator[Arena]:
    # A lease's games as many as the hour's, so that the hour's count shows in games_left.
    arena = await start(str(tmp_path / "arena.db"), game_server, hosted_games_per_lease=60)
    try:
        yield arena
    finally:
        await arena.stop(0)


async def seek_matched(bots: Any, key: str, pool: str) -> pb.SeekMatched:
    async for update in bots.Seek(pb.SeekRequest(pool=pool), metadata=auth(key)):
        if update.HasField("matched"):
            return update.matched
    raise AssertionError("the Seek stream ended unmatched")


async def game_between(bots: Any, seek_key: str, other_key: str, pool: str) -> pb.SeekMatched:
    """A game of ``pool`` matched between the hosted bot (seeking with its seek key) and another bot; the
    hosted bot's seat."""
    mine, _ = await asyncio.wait_for(
        asyncio.gather(seek_matched(bots, seek_key, pool), seek_matched(bots, other_key, pool)), 30
    )
    return mine


async def build_one(workers: Any, bot: str, version: int, *, ok: bool, log: bytes = b"") -> None:
    leased = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="w1", can_build=True), metadata=WORKER)
    assert leased.WhichOneof("work") == "build"
    assert (leased.build.bot_name, leased.build.version) == (bot, version)
    await workers.ReportBuild(
        hpb.ReportBuildRequest(lease_id=leased.lease_id, ok=ok, reason="" if ok else "make failed", log=log),
        metadata=WORKER,
    )


def report(lease: str, seat: pb.SeekMatched, outcome: int, **fields: Any) -> hpb.ReportSeatRequest:
    return hpb.ReportSeatRequest(
        lease_id=lease,
        server_address=seat.server_address,
        game_id=seat.game_id,
        seat=seat.seat,
        seat_token=seat.seat_token,
        outcome=outcome,  # type: ignore[arg-type]
        **fields,
    )


async def test_the_worker_token_is_required_and_hosting_is_off_without_one(
    arena: Arena, hosting_arena: Arena
) -> None:
    async with stubs(arena) as (_, workers):
        message, _ = await refused(
            workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True), metadata=WORKER),
            grpc.StatusCode.FAILED_PRECONDITION,
            "PERMISSION_DENIED",
        )
        assert "--worker-token-file" in message
    async with stubs(hosting_arena) as (_, workers):
        for metadata in (auth("not-the-token"), ()):
            for call in (
                workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True), metadata=metadata),
                workers.GetArchive(hpb.GetArchiveRequest(digest="0" * 64), metadata=metadata),
                workers.ReleaseLease(hpb.ReleaseLeaseRequest(lease_id="x"), metadata=metadata),
            ):
                await refused(call, grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED")
        nothing = await workers.LeaseWork(
            hpb.LeaseWorkRequest(can_build=True, can_host=True), metadata=WORKER
        )
        assert nothing.lease_id == "" and nothing.WhichOneof("work") is None
        assert nothing.retry_after.ToTimedelta().total_seconds() == 2
        await refused(
            workers.RenewLease(hpb.RenewLeaseRequest(lease_id="nope"), metadata=WORKER),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )


async def test_builds_then_hosting_with_a_seek_key_a_handover_and_pausing(
    hosting_arena: Arena, tmp_path: Path
) -> None:
    arena = hosting_arena
    async with stubs(arena) as (bots, workers):
        key = (await bots.RegisterBot(pb.RegisterBotRequest(name="hosted-1"))).api_key
        other = (await bots.RegisterBot(pb.RegisterBotRequest(name="rival"))).api_key
        stranger = (await bots.RegisterBot(pb.RegisterBotRequest(name="stranger"))).api_key
        first = archive(tmp_path / "v1", "hosted-1", marker="1")
        await bots.SubmitBot(pb.SubmitBotRequest(archive=first), metadata=auth(key))

        # a build is leased once; its archive is served by digest; a failed build never plays
        leased = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="w1", can_build=True), metadata=WORKER)
        assert leased.build.version == 1 and leased.lease_time.ToTimedelta().total_seconds() == LEASE
        fetched = await workers.GetArchive(hpb.GetArchiveRequest(digest=leased.build.digest), metadata=WORKER)
        assert fetched.archive == first
        busy = await workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True, can_host=True), metadata=WORKER)
        assert busy.WhichOneof("work") is None, "the only build is leased, and nothing is ready to host"
        await workers.ReportBuild(
            hpb.ReportBuildRequest(
                lease_id=leased.lease_id, ok=False, reason="make failed", log=b"x" * 300_000
            ),
            metadata=WORKER,
        )
        got = await bots.GetSubmission(pb.GetSubmissionRequest(version=1), metadata=auth(key))
        assert got.submission.state == pb.SUBMISSION_STATE_FAILED and got.submission.reason == "make failed"
        assert len(got.build_log) == 256 << 10, "the build log's last 256 KiB are kept"
        assert (await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)).lease_id == ""

        # a build whose lease expires is leased again
        await bots.SubmitBot(
            pb.SubmitBotRequest(archive=archive(tmp_path / "v2", "hosted-1", marker="2")), metadata=auth(key)
        )
        lapsed = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="lost", can_build=True), metadata=WORKER)
        assert lapsed.build.version == 2
        await asyncio.sleep(LEASE + 0.2)
        await refused(
            workers.RenewLease(hpb.RenewLeaseRequest(lease_id=lapsed.lease_id), metadata=WORKER),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        await build_one(workers, "hosted-1", 2, ok=True, log=b"built fine")
        listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
        assert [(s.version, s.playing) for s in listed.submissions] == [(2, True), (1, False)]
        profile = await bots.GetBotProfile(pb.GetBotProfileRequest(name="hosted-1"))
        assert profile.hosted and profile.hosted_version == 2
        assert metric(arena, "kutnahora_arena_builds_total", outcome="ok") == 1
        assert metric(arena, "kutnahora_arena_builds_total", outcome="failed") == 1

        # a bot to host, with a seek key that seeks as the bot and is matched
        hosted = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="w1", can_host=True), metadata=WORKER)
        job = hosted.host
        assert (job.bot_name, job.version, job.games_left) == ("hosted-1", 2, 60)
        assert list(job.pools) == ["2", "2-fast", "2-slow"] and not job.HasField("resume")
        assert job.seek_key and job.seek_key != key
        assert metric(arena, "kutnahora_arena_live_leases", kind="host") == 1
        for call in (
            bots.SubmitBot(pb.SubmitBotRequest(archive=first), metadata=auth(job.seek_key)),
            bots.RotateKey(pb.RotateKeyRequest(), metadata=auth(job.seek_key)),
            bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(job.seek_key)),
        ):
            await refused(call, grpc.StatusCode.PERMISSION_DENIED, "PERMISSION_DENIED")
        seat = await game_between(bots, job.seek_key, other, "2")
        assert "hosted-1" in seat.seat_names and seat.seat_names[seat.seat] == "hosted-1"
        await workers.ReportSeat(report(hosted.lease_id, seat, hpb.SEAT_OUTCOME_STARTED), metadata=WORKER)
        renewed = await workers.RenewLease(hpb.RenewLeaseRequest(lease_id=hosted.lease_id), metadata=WORKER)
        assert not renewed.wind_down and renewed.reason == ""
        busy = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
        assert busy.WhichOneof("work") is None, "one host lease per bot"
        log, _ = await refused(
            bots.GetSeatLog(pb.GetSeatLogRequest(game_id=seat.game_id), metadata=auth(other)),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        assert "rival" in log, "a self-connected bot's seat has no hosted log"
        playing = await bots.GetSeatLog(pb.GetSeatLogRequest(game_id=seat.game_id), metadata=auth(key))
        assert playing.outcome == "playing" and playing.seat == seat.seat and playing.version == 2

        # the lease expires while its game is active: the seek key stops, the next lease resumes the seat
        await asyncio.sleep(LEASE + 0.2)
        await refused(
            bots.Seek(pb.SeekRequest(pool="2-fast"), metadata=auth(job.seek_key)).read(),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )
        await refused(
            workers.ReportSeat(report(hosted.lease_id, seat, hpb.SEAT_OUTCOME_STARTED), metadata=WORKER),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )
        again = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="w2", can_host=True), metadata=WORKER)
        assert again.host.bot_name == "hosted-1" and again.host.seek_key != job.seek_key
        resume = again.host.resume
        assert (resume.server_address, resume.game_id, resume.seat, resume.seat_token) == (
            seat.server_address,
            seat.game_id,
            seat.seat,
            seat.seat_token,
        )
        assert again.host.games_left == 59, "the game started counts against the hour"
        await refused(
            bots.Seek(pb.SeekRequest(pool="2"), metadata=auth(job.seek_key)).read(),
            grpc.StatusCode.UNAUTHENTICATED,
            "UNAUTHENTICATED",
        )
        lease = again.lease_id

        # three failures in a row pause the bot (a finished seat between would clear the count)
        failed = await workers.ReportSeat(
            report(lease, seat, hpb.SEAT_OUTCOME_FAILED, reason="crashed: exit 1", log=b"Traceback ..."),
            metadata=WORKER,
        )
        assert not failed.paused
        again_failed = await workers.ReportSeat(
            report(lease, seat, hpb.SEAT_OUTCOME_FAILED, reason="crashed: exit 1"), metadata=WORKER
        )
        assert not again_failed.paused, "a report sent twice counts once"
        for pool, why in (("2-fast", "out of memory"), ("2-slow", "timed out")):
            next_seat = await game_between(bots, again.host.seek_key, other, pool)
            await workers.ReportSeat(report(lease, next_seat, hpb.SEAT_OUTCOME_STARTED), metadata=WORKER)
            answer = await workers.ReportSeat(
                report(lease, next_seat, hpb.SEAT_OUTCOME_FAILED, reason=why), metadata=WORKER
            )
        assert answer.paused
        listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
        assert listed.paused
        assert listed.paused_reason == "paused after 3 failures in a row; the last: timed out"
        assert not any(s.playing for s in listed.submissions)
        wind = await workers.RenewLease(hpb.RenewLeaseRequest(lease_id=lease), metadata=WORKER)
        assert wind.wind_down and "paused" in wind.reason
        profile = await bots.GetBotProfile(pb.GetBotProfileRequest(name="hosted-1"))
        assert not profile.hosted and profile.hosted_version == 0
        assert metric(arena, "kutnahora_arena_hosted_seats_total", outcome="failed") == 3
        assert metric(arena, "kutnahora_arena_hosted_seats_total", outcome="started") == 3

        # the seat logs: the author's own, another bot's game is not found
        seat_log = await bots.GetSeatLog(pb.GetSeatLogRequest(game_id=seat.game_id), metadata=auth(key))
        assert (seat_log.seat, seat_log.version, seat_log.outcome) == (seat.seat, 2, "crashed: exit 1")
        assert seat_log.log == "Traceback ..." and not seat_log.truncated
        for who in (stranger, other):
            await refused(
                bots.GetSeatLog(pb.GetSeatLogRequest(game_id=seat.game_id), metadata=auth(who)),
                grpc.StatusCode.NOT_FOUND,
                "NOT_FOUND",
            )
        await refused(
            bots.GetSeatLog(pb.GetSeatLogRequest(game_id="no-such-game"), metadata=auth(key)),
            grpc.StatusCode.NOT_FOUND,
            "NOT_FOUND",
        )

        # paused: not leased; resumed by its author: leased again once the old lease is released
        await workers.ReleaseLease(hpb.ReleaseLeaseRequest(lease_id=lease, reason="paused"), metadata=WORKER)
        assert (await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)).lease_id == ""
        assert not (await bots.SetHosting(pb.SetHostingRequest(paused=False), metadata=auth(key))).paused
        resumed = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="w3", can_host=True), metadata=WORKER)
        assert resumed.host.bot_name == "hosted-1" and resumed.host.version == 2
        assert not resumed.host.HasField("resume"), "the seat failed: nothing to hand over"

        # a newer version that builds winds the worker down; the leaderboard shows the version played
        await bots.SubmitBot(
            pb.SubmitBotRequest(archive=archive(tmp_path / "v3", "hosted-1", marker="3")), metadata=auth(key)
        )
        await build_one(workers, "hosted-1", 3, ok=True)
        wind = await workers.RenewLease(hpb.RenewLeaseRequest(lease_id=resumed.lease_id), metadata=WORKER)
        assert wind.wind_down and "version 3" in wind.reason
        await arena.store.replace_ratings({("hosted-1", "2"): Rating(), ("rival", "2"): Rating()})
        board = await bots.GetLeaderboard(pb.GetLeaderboardRequest(pool="2"))
        rows = {entry.name: (entry.hosted, entry.hosted_version) for entry in board.entries}
        assert rows == {"hosted-1": (True, 3), "rival": (False, 0)}
        await workers.ReleaseLease(hpb.ReleaseLeaseRequest(lease_id=resumed.lease_id), metadata=WORKER)
        assert metric(arena, "kutnahora_arena_live_leases", kind="host") == 0


async def test_the_hours_allowance_and_a_finished_seat(tmp_path: Path, game_server: str) -> None:
    """With one game an hour, the bot is not leased again once it started it; a finished seat clears the
    failures in a row and its log is kept whole."""
    arena = await start(str(tmp_path / "a.db"), game_server, hosted_games_per_hour=1, hosted_max_failures=2)
    try:
        async with stubs(arena) as (bots, workers):
            key = (await bots.RegisterBot(pb.RegisterBotRequest(name="hourly"))).api_key
            other = (await bots.RegisterBot(pb.RegisterBotRequest(name="foe"))).api_key
            await bots.SubmitBot(
                pb.SubmitBotRequest(archive=archive(tmp_path / "h", "hourly")), metadata=auth(key)
            )
            await build_one(workers, "hourly", 1, ok=True)
            leased = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
            assert leased.host.games_left == 1
            seats = []
            for pool in ("2", "2-fast"):
                seat = await game_between(bots, leased.host.seek_key, other, pool)
                seats.append(seat)
                await workers.ReportSeat(
                    report(leased.lease_id, seat, hpb.SEAT_OUTCOME_STARTED), metadata=WORKER
                )
            wind = await workers.RenewLease(hpb.RenewLeaseRequest(lease_id=leased.lease_id), metadata=WORKER)
            assert wind.wind_down and "1 hosted games of the hour" in wind.reason
            first = await workers.ReportSeat(
                report(leased.lease_id, seats[0], hpb.SEAT_OUTCOME_FAILED, reason="crashed"), metadata=WORKER
            )
            finished = await workers.ReportSeat(
                report(
                    leased.lease_id, seats[1], hpb.SEAT_OUTCOME_FINISHED, log=b"good game", log_truncated=True
                ),
                metadata=WORKER,
            )
            assert not first.paused and not finished.paused
            log = await bots.GetSeatLog(pb.GetSeatLogRequest(game_id=seats[1].game_id), metadata=auth(key))
            assert (log.outcome, log.log, log.truncated) == ("finished", "good game", True)
            # a version's games are its rated ones: the finished seat's game, once rated
            ids = {name: (await arena.store.account_by_name(name)).account_id for name in ("hourly", "foe")}  # type: ignore[union-attr]
            by_seat = [ids[name] for name in seats[1].seat_names]
            listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
            assert listed.submissions[0].games == 0, "no game rated yet"
            assert await arena.store.rate_game(
                seats[1].game_id, "2-fast", by_seat, [1, 2], lambda before: [Rating(), Rating()]
            )
            listed = await bots.ListSubmissions(pb.ListSubmissionsRequest(), metadata=auth(key))
            assert listed.submissions[0].games == 1
            await workers.ReleaseLease(hpb.ReleaseLeaseRequest(lease_id=leased.lease_id), metadata=WORKER)
            none_left = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
            assert none_left.lease_id == "", "no games left this hour: no host lease"
            assert (
                await arena.store.hosting((await arena.store.account_by_name("hourly")).account_id)
            ).failures == 0  # type: ignore[union-attr]
    finally:
        await arena.stop(0)


async def test_a_lease_starts_at_most_its_share_of_games_so_bots_take_turns(
    game_server: str, tmp_path: Path
) -> None:
    """More bots than seats on the workers: each host lease may start ``--hosted-games-per-lease`` games
    (never more than the hour has left), then its worker releases it and the bot hosted least recently is
    leased next."""
    arena = await start(str(tmp_path / "a.db"), game_server, hosted_games_per_lease=2)
    try:
        async with stubs(arena) as (bots, workers):
            for name in ("turn-a", "turn-b"):
                key = (await bots.RegisterBot(pb.RegisterBotRequest(name=name))).api_key
                await bots.SubmitBot(
                    pb.SubmitBotRequest(archive=archive(tmp_path / name, name)), metadata=auth(key)
                )
                await build_one(workers, name, 1, ok=True)
            first = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
            assert first.host.games_left == 2
            await workers.ReleaseLease(
                hpb.ReleaseLeaseRequest(lease_id=first.lease_id, reason="the games of its lease are played"),
                metadata=WORKER,
            )
            second = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
            assert second.host.bot_name != first.host.bot_name, "the bot hosted least recently comes next"
            assert second.host.games_left == 2
    finally:
        await arena.stop(0)
    with pytest.raises(SystemExit, match="--hosted-games-per-lease"):
        config_from_args(build_parser().parse_args(["--hosted-games-per-lease", "0"]))


async def test_the_flags_enable_hosting(start_arena: StartArena, tmp_path: Path) -> None:
    """``--worker-token-file`` enables the HostingService with the token it holds; ``--lease-time`` is the
    lease's time; a file that is empty or missing stops the arena from starting, with a sentence."""
    token_file = tmp_path / "worker.token"
    token_file.write_text(f"  {WORKER_TOKEN}\n", encoding="utf-8")
    arena = await start_arena("--worker-token-file", str(token_file), "--lease-time", "7.5")
    async with stubs(arena) as (bots, workers):
        key = (await bots.RegisterBot(pb.RegisterBotRequest(name="flagged"))).api_key
        await bots.SubmitBot(
            pb.SubmitBotRequest(archive=archive(tmp_path / "f", "flagged")), metadata=auth(key)
        )
        leased = await workers.LeaseWork(hpb.LeaseWorkRequest(can_build=True), metadata=WORKER)
        assert leased.build.bot_name == "flagged" and leased.lease_time.ToTimedelta().total_seconds() == 7.5
    empty = tmp_path / "empty.token"
    empty.write_text("\n", encoding="utf-8")
    for path in (empty, tmp_path / "missing.token"):
        with pytest.raises(SystemExit, match="--worker-token-file"):
            config_from_args(build_parser().parse_args(["--worker-token-file", str(path)]))
    with pytest.raises(SystemExit, match="--hosted-max-failures"):
        config_from_args(build_parser().parse_args(["--hosted-max-failures", "0"]))


async def test_hosting_on_postgresql(game_server: str, tmp_path: Path) -> None:
    """The same store on PostgreSQL: a version kept once, a build and a host lease, the seek key's events
    stream, a released lease's seat handed over."""
    with fresh_schema("kh_arena_hosting") as db:
        arena = await start(db, game_server)
        try:
            async with stubs(arena) as (bots, workers):
                key = (await bots.RegisterBot(pb.RegisterBotRequest(name="pg-bot"))).api_key
                other = (await bots.RegisterBot(pb.RegisterBotRequest(name="pg-rival"))).api_key
                packed = archive(tmp_path / "pg", "pg-bot")
                assert (await bots.SubmitBot(pb.SubmitBotRequest(archive=packed), metadata=auth(key))).created
                assert not (
                    await bots.SubmitBot(pb.SubmitBotRequest(archive=packed), metadata=auth(key))
                ).created
                await build_one(workers, "pg-bot", 1, ok=True, log="é built".encode())
                got = await bots.GetSubmission(pb.GetSubmissionRequest(version=1), metadata=auth(key))
                assert got.build_log == "é built" and got.submission.playing
                leased = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
                events = bots.StreamEvents(pb.StreamEventsRequest(), metadata=auth(leased.host.seek_key))
                await asyncio.wait_for(events.initial_metadata(), 10)
                seat = await game_between(bots, leased.host.seek_key, other, "2")
                started = await asyncio.wait_for(events.read(), 10)
                assert started.started.game_id == seat.game_id
                events.cancel()
                await workers.ReportSeat(
                    report(leased.lease_id, seat, hpb.SEAT_OUTCOME_STARTED), metadata=WORKER
                )
                await workers.ReleaseLease(hpb.ReleaseLeaseRequest(lease_id=leased.lease_id), metadata=WORKER)
                await refused(
                    bots.Seek(pb.SeekRequest(pool="2"), metadata=auth(leased.host.seek_key)).read(),
                    grpc.StatusCode.UNAUTHENTICATED,
                    "UNAUTHENTICATED",
                )
                again = await workers.LeaseWork(hpb.LeaseWorkRequest(can_host=True), metadata=WORKER)
                assert again.host.resume.game_id == seat.game_id, "a released lease's game is handed over"
        finally:
            await arena.stop(0)


async def test_streams_opened_with_a_seek_key_end_with_its_lease(
    hosting_arena: Arena, tmp_path: Path
) -> None:
    """A Seek or StreamEvents stream a worker opened with a lease's seek key does not outlive the lease:
    once the lease is released (or expires, or is handed to another worker), both end UNAUTHENTICATED
    with a sentence, while a stream opened with the bot's own API key goes on."""
    arena = hosting_arena
    arena.servicer.lease_check = 0.2
    async with stubs(arena) as (bots, workers):
        key = (await bots.RegisterBot(pb.RegisterBotRequest(name="hosted-s"))).api_key
        await bots.SubmitBot(
            pb.SubmitBotRequest(archive=archive(tmp_path / "s", "hosted-s")), metadata=auth(key)
        )
        await build_one(workers, "hosted-s", 1, ok=True)
        leased = await workers.LeaseWork(hpb.LeaseWorkRequest(worker="w1", can_host=True), metadata=WORKER)
        seek_key = leased.host.seek_key
        seeking = bots.Seek(pb.SeekRequest(pool="2-slow"), metadata=auth(seek_key))
        assert (await asyncio.wait_for(seeking.read(), 10)).HasField("waiting")
        events = bots.StreamEvents(pb.StreamEventsRequest(), metadata=auth(seek_key))
        own_events = bots.StreamEvents(pb.StreamEventsRequest(), metadata=auth(key))
        await asyncio.wait_for(asyncio.gather(events.initial_metadata(), own_events.initial_metadata()), 10)
        await asyncio.sleep(0.5)
        assert not events.done() and not seeking.done(), "a live lease's streams stay open"

        await workers.ReleaseLease(hpb.ReleaseLeaseRequest(lease_id=leased.lease_id), metadata=WORKER)

        async def drained(stream: Any) -> None:
            while True:
                await stream.read()

        for stream in (seeking, events):
            message, _ = await refused(
                asyncio.wait_for(drained(stream), 10), grpc.StatusCode.UNAUTHENTICATED, "UNAUTHENTICATED"
            )
            assert message == "the seek key's lease of bot 'hosted-s' has ended"
        assert not own_events.done(), "the bot's own stream is not the lease's"
        own_events.cancel()
