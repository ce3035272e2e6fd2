"""A fake arena for the worker's tests: HostingService and the ArenaService calls a worker and an author
make, kept to the contract of hosting_service.proto and arena_service.proto, in memory.

It hands out the jobs a test queues (:meth:`FakeArena.queue_build`, :meth:`FakeArena.queue_host`), keeps
leases that expire when not renewed, records every report, and matches a Seek at once (unless told to
hold it) into a new game on a real game server, whose other seat a greedy bot plays in this process.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from google.protobuf import duration_pb2

from kutnahora.clients.bots import make_bot
from kutnahora.clients.sdk import Client
from kutnahora.hosting.archives import digest
from kutnahora.v1 import arena_service_pb2 as apb
from kutnahora.v1 import arena_service_pb2_grpc, hosting_service_pb2_grpc
from kutnahora.v1 import hosting_service_pb2 as pb


def seconds(value: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromMilliseconds(int(value * 1000))
    return duration


@dataclass
class Lease:
    lease_id: str
    kind: str
    job: Any
    seek_key: str = ""
    expires: float = 0.0
    renewals: int = 0
    released: str | None = None
    reported: bool = False


@dataclass
class Version:
    version: int
    digest: str
    archive: bytes
    state: int = apb.SUBMISSION_STATE_BUILDING
    reason: str = ""
    build_log: str = ""


@dataclass
class FakeArena:
    """The fake's state; :meth:`start` serves it on a free port."""

    game_server: str
    token: str = field(default_factory=lambda: secrets.token_hex(16))
    lease_time: float = 3.0
    archives: dict[str, bytes] = field(default_factory=dict)
    queued: list[tuple[str, Any]] = field(default_factory=list)
    leases: dict[str, Lease] = field(default_factory=dict)
    archive_fetches: list[str] = field(default_factory=list)
    build_reports: list[pb.ReportBuildRequest] = field(default_factory=list)
    seat_reports: list[pb.ReportSeatRequest] = field(default_factory=list)
    releases: list[tuple[str, str]] = field(default_factory=list)
    lease_calls: list[pb.LeaseWorkRequest] = field(default_factory=list)
    built: dict[str, tuple[pb.BuiltArtifact, bytes]] = field(default_factory=dict)  # uploads, by digest
    built_fetches: list[str] = field(default_factory=list)
    built_max_bytes: int = 256 << 20  # told to the build jobs
    tamper_built: bool = False  # GetBuilt serves the built folder with one byte changed
    wind_down: str = ""  # a reason: every renewal asks the worker to wind down
    forgotten: set[str] = field(default_factory=set)  # leases renewals answer NOT_FOUND for
    pause_after_reports: int = 0  # ReportSeat FINISHED/FAILED answers paused from the Nth on (0: never)
    hold_seeks: bool = False  # a Seek waits and never matches
    seeks_open: int = 0
    seeks: list[str] = field(default_factory=list)
    games: list[str] = field(default_factory=list)
    # the author's side (one account)
    api_key: str = "author-key"
    versions: list[Version] = field(default_factory=list)
    submit_calls: int = 0
    polls_before_built: int = 1
    build_outcome: tuple[int, str, str] = (apb.SUBMISSION_STATE_READY, "", "built fine\n")
    paused: bool = False
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    _server: Any = None
    _opponents: list[asyncio.Task[Any]] = field(default_factory=list)
    port: int = 0

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def start(self, port: int = 0) -> FakeArena:
        """Serve on ``port`` (0: a free one; the same one again after :meth:`stop`)."""
        self._server = grpc.aio.server()
        hosting: Any = hosting_service_pb2_grpc
        arena: Any = arena_service_pb2_grpc
        hosting.add_HostingServiceServicer_to_server(_Hosting(self), self._server)
        arena.add_ArenaServiceServicer_to_server(_Arena(self), self._server)
        self.port = self._server.add_insecure_port(f"127.0.0.1:{port}")
        await self._server.start()
        return self

    async def stop(self) -> None:
        for task in self._opponents:
            task.cancel()
        await asyncio.gather(*self._opponents, return_exceptions=True)
        await self._server.stop(None)

    def note(self) -> None:
        self.changed.set()

    async def wait_for(self, condition: Any, timeout: float = 60.0) -> None:
        """Wait until ``condition()`` holds (a test's failure message names it when it never does)."""
        deadline = time.monotonic() + timeout
        while not condition():
            left = deadline - time.monotonic()
            assert left > 0, f"timed out waiting; reports: {self.seat_reports}, releases: {self.releases}"
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(left, 0.5))

    def queue_build(self, bot: str, version: int, archive: bytes) -> str:
        key = digest(archive)
        self.archives[key] = archive
        job = pb.BuildJob(bot_name=bot, version=version, digest=key, built_max_bytes=self.built_max_bytes)
        self.queued.append(("build", job))
        return key

    def queue_host(
        self,
        bot: str,
        archive: bytes,
        *,
        games_left: int = 1,
        pools: tuple[str, ...] = ("2",),
        resume: pb.SeatToResume | None = None,
        built: pb.BuiltArtifact | None = None,
    ) -> str:
        key = digest(archive)
        self.archives[key] = archive
        job = pb.HostJob(bot_name=bot, version=1, digest=key, pools=list(pools), games_left=games_left)
        if resume is not None:
            job.resume.CopyFrom(resume)
        if built is not None:
            job.built.CopyFrom(built)
        self.queued.append(("host", job))
        return key

    def live(self, lease_id: str) -> Lease | None:
        lease = self.leases.get(lease_id)
        if lease is None or lease.released is not None or lease.reported:
            return None
        if lease_id in self.forgotten or time.monotonic() > lease.expires:
            return None
        return lease

    def lease_of_key(self, key: str) -> Lease | None:
        for lease in self.leases.values():
            if lease.seek_key == key and self.live(lease.lease_id) is not None:
                return lease
        return None

    async def open_game(self, bot: str) -> apb.SeekMatched:
        """A new game on the game server: the bot on seat 0, a greedy bot (played here) on seat 1."""
        async with await Client.connect(self.game_server) as client:
            created, seats = await client.create_seated_game([bot, "greedy"], seed=len(self.games) + 1)
        game_id = created.game.game_id
        self.games.append(game_id)
        self._opponents.append(asyncio.create_task(self._opponent(seats[1])))
        return apb.SeekMatched(
            pool="2",
            server_address=self.game_server,
            game_id=game_id,
            seat=0,
            seat_token=seats[0].token,
            seat_names=[bot, "greedy"],
        )

    async def _opponent(self, seat: Any) -> None:
        async with await Client.connect(self.game_server) as client:
            await client.play(make_bot("greedy", 7), seat)


def _token(context: grpc.aio.ServicerContext[Any, Any]) -> str:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and isinstance(value, str) and value.startswith("Bearer "):
            return value.removeprefix("Bearer ")
    return ""


class _Hosting(hosting_service_pb2_grpc.HostingServiceServicer):  # type: ignore[misc]
    def __init__(self, arena: FakeArena) -> None:
        self.arena = arena

    async def _check(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if _token(context) != self.arena.token:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the worker token is missing or wrong")

    async def _lease(self, lease_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> Lease:
        lease = self.arena.live(lease_id)
        if lease is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no live lease {lease_id}")
        assert lease is not None
        return lease

    async def LeaseWork(self, request: pb.LeaseWorkRequest, context: Any) -> pb.LeaseWorkResponse:
        await self._check(context)
        arena = self.arena
        arena.lease_calls.append(request)
        for index, (kind, job) in enumerate(arena.queued):
            if (kind == "build" and request.can_build) or (kind == "host" and request.can_host):
                del arena.queued[index]
                lease = Lease(secrets.token_hex(8), kind, job, expires=time.monotonic() + arena.lease_time)
                if kind == "host":
                    lease.seek_key = job.seek_key = secrets.token_hex(8)
                arena.leases[lease.lease_id] = lease
                arena.note()
                response = pb.LeaseWorkResponse(lease_id=lease.lease_id, lease_time=seconds(arena.lease_time))
                getattr(response, kind).CopyFrom(job)
                return response
        return pb.LeaseWorkResponse(retry_after=seconds(0.2))

    async def RenewLease(self, request: pb.RenewLeaseRequest, context: Any) -> pb.RenewLeaseResponse:
        await self._check(context)
        lease = await self._lease(request.lease_id, context)
        lease.renewals += 1
        lease.expires = time.monotonic() + self.arena.lease_time
        self.arena.note()
        return pb.RenewLeaseResponse(
            lease_time=seconds(self.arena.lease_time),
            wind_down=bool(self.arena.wind_down),
            reason=self.arena.wind_down,
        )

    async def GetArchive(self, request: pb.GetArchiveRequest, context: Any) -> pb.GetArchiveResponse:
        await self._check(context)
        if request.digest not in self.arena.archives:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such archive")
        self.arena.archive_fetches.append(request.digest)
        return pb.GetArchiveResponse(archive=self.arena.archives[request.digest])

    async def ReportBuild(self, request: pb.ReportBuildRequest, context: Any) -> pb.ReportBuildResponse:
        await self._check(context)
        lease = await self._lease(request.lease_id, context)
        if lease.kind != "build":
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not a build lease")
        lease.reported = True
        self.arena.build_reports.append(request)
        self.arena.note()
        return pb.ReportBuildResponse()

    async def ReportSeat(self, request: pb.ReportSeatRequest, context: Any) -> pb.ReportSeatResponse:
        await self._check(context)
        lease = await self._lease(request.lease_id, context)
        if lease.kind != "host":
            await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not a host lease")
        self.arena.seat_reports.append(request)
        self.arena.note()
        ended = [r for r in self.arena.seat_reports if r.outcome != pb.SEAT_OUTCOME_STARTED]
        after = self.arena.pause_after_reports
        return pb.ReportSeatResponse(paused=bool(after) and len(ended) >= after)

    async def ReleaseLease(self, request: pb.ReleaseLeaseRequest, context: Any) -> pb.ReleaseLeaseResponse:
        await self._check(context)
        lease = await self._lease(request.lease_id, context)
        lease.released = request.reason
        self.arena.releases.append((request.lease_id, request.reason))
        self.arena.note()
        return pb.ReleaseLeaseResponse()

    async def PutBuilt(self, requests: Any, context: Any) -> pb.PutBuiltResponse:
        await self._check(context)
        messages = [message async for message in requests]
        await self._lease(messages[0].lease_id, context)
        artifact = messages[0].artifact
        data = b"".join(m.chunk for m in messages)
        if len(data) > self.arena.built_max_bytes:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, "too large")
        if digest(data) != artifact.digest or len(data) != artifact.size_bytes:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "not the bytes announced")
        existed = artifact.digest in self.arena.built
        self.arena.built[artifact.digest] = (artifact, data)
        self.arena.note()
        return pb.PutBuiltResponse(existed=existed)

    async def GetBuilt(self, request: pb.GetBuiltRequest, context: Any) -> AsyncIterator[pb.GetBuiltResponse]:
        await self._check(context)
        if request.digest not in self.arena.built:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such built folder")
        self.arena.built_fetches.append(request.digest)
        artifact, data = self.arena.built[request.digest]
        if self.arena.tamper_built:
            data = data[:-1] + bytes([data[-1] ^ 1])
        for n, start in enumerate(range(0, len(data), 1 << 20)):
            response = pb.GetBuiltResponse(chunk=data[start : start + (1 << 20)])
            if n == 0:
                response.artifact.CopyFrom(artifact)
            yield response


class _Arena(arena_service_pb2_grpc.ArenaServiceServicer):  # type: ignore[misc]
    def __init__(self, arena: FakeArena) -> None:
        self.arena = arena

    async def _author(self, context: Any) -> None:
        if _token(context) != self.arena.api_key:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the API key is missing or unknown")

    async def Seek(self, request: apb.SeekRequest, context: Any) -> AsyncIterator[apb.SeekResponse]:
        arena = self.arena
        lease = arena.lease_of_key(_token(context))
        if lease is None:
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "the key is missing or unknown")
        assert lease is not None
        arena.seeks.append(request.pool)
        arena.seeks_open += 1
        arena.note()
        try:
            yield apb.SeekResponse(waiting=apb.SeekWaiting(pool=request.pool, tickets_waiting=1))
            if arena.hold_seeks:
                await asyncio.Event().wait()
            matched = await arena.open_game(lease.job.bot_name)
            yield apb.SeekResponse(matched=matched)
        finally:
            arena.seeks_open -= 1
            arena.note()

    async def ListPools(self, request: apb.ListPoolsRequest, context: Any) -> apb.ListPoolsResponse:
        return apb.ListPoolsResponse(pools=[apb.Pool(name="2", players=2)])

    def _submission(self, version: Version) -> apb.Submission:
        ready = [v for v in self.arena.versions if v.state == apb.SUBMISSION_STATE_READY]
        return apb.Submission(
            version=version.version,
            digest=version.digest,
            size_bytes=len(version.archive),
            language="python",
            state=version.state,
            reason=version.reason,
            playing=bool(ready) and ready[-1] is version,
        )

    async def SubmitBot(self, request: apb.SubmitBotRequest, context: Any) -> apb.SubmitBotResponse:
        await self._author(context)
        arena = self.arena
        arena.submit_calls += 1
        key = digest(request.archive)
        for version in arena.versions:
            if version.digest == key:
                return apb.SubmitBotResponse(submission=self._submission(version), created=False)
        version = Version(len(arena.versions) + 1, key, request.archive)
        arena.versions.append(version)
        return apb.SubmitBotResponse(submission=self._submission(version), created=True)

    async def GetSubmission(
        self, request: apb.GetSubmissionRequest, context: Any
    ) -> apb.GetSubmissionResponse:
        await self._author(context)
        arena = self.arena
        found = [v for v in arena.versions if v.version == request.version]
        if not found:
            await context.abort(grpc.StatusCode.NOT_FOUND, f"no version {request.version}")
        version = found[0]
        if version.state == apb.SUBMISSION_STATE_BUILDING:
            arena.polls_before_built -= 1
            if arena.polls_before_built < 0:
                version.state, version.reason, version.build_log = arena.build_outcome
        return apb.GetSubmissionResponse(submission=self._submission(version), build_log=version.build_log)

    async def ListSubmissions(
        self, request: apb.ListSubmissionsRequest, context: Any
    ) -> apb.ListSubmissionsResponse:
        await self._author(context)
        arena = self.arena
        return apb.ListSubmissionsResponse(
            submissions=[self._submission(v) for v in reversed(arena.versions)],
            paused=arena.paused,
            paused_reason="paused after 3 failures in a row; the last: exited with status 1"
            if arena.paused
            else "",
        )

    async def SetHosting(self, request: apb.SetHostingRequest, context: Any) -> apb.SetHostingResponse:
        await self._author(context)
        self.arena.paused = request.paused
        return apb.SetHostingResponse(paused=request.paused)
