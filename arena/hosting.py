"""The ``kutnahora.v1.HostingService`` servicer: the sandbox workers' leases of builds and of bots to host.

Every call carries the arena's worker token (``--worker-token-file``), compared as API keys are (its
SHA-256, in constant time); an arena started without one refuses every call with FAILED_PRECONDITION,
saying how to enable hosting. The rules (:mod:`kutnahora.arena.host_leases` keeps them in the store):

- LeaseWork gives a build first (when the worker can build: the oldest version still building without a
  live lease), else a bot to host (when it can host: those with a seat to resume first, then the one hosted
  least recently), else nothing, with a ``retry_after`` of 2 s. A host lease carries a fresh seek key (the
  store keeps its hash), the pools, the games the bot may still start this hour (``--hosted-games-per-hour``)
  and, when the bot's last lease expired while its worker played a game still active, that seat.
- A lease lives ``--lease-time`` seconds from its last renewal; RenewLease of a host lease says to wind
  down when the bot is paused, a newer version is ready, or the hour's games are used up.
- ReportSeat records a hosted seat started (for a handover) or ended with its log; ``--hosted-max-failures``
  failed seats in a row pause the bot. ReportBuild records a build and ends its lease, ReleaseLease ends a
  lease before its time. A version whose build leases expired ``--hosted-max-failures`` times is failed.
- PutBuilt takes a version's built folder from its build lease's worker, in chunks (up to
  ``--built-max-bytes``, checked against the size and SHA-256 announced first, spooled to a temporary file,
  then kept in one transaction; after a refusal read no further than the upload announced); ReportBuild
  names it, every host lease of the version carries it, and GetBuilt streams it to the workers that play
  the version, so that it is built once.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import re
import secrets
import tempfile
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

import grpc
import grpc.aio
from google.protobuf import duration_pb2

from kutnahora.arena.built import CHUNK_BYTES, Built
from kutnahora.arena.host_leases import BuildWork, LeaseGone, NotItsBuild, NotItsSeat, ReportedSeat
from kutnahora.arena.metrics import ArenaMetrics
from kutnahora.arena.service import Context, guarded
from kutnahora.arena.store import ArenaStore
from kutnahora.plumbing import auth
from kutnahora.plumbing.errors import (
    ServiceError,
    clip,
    exhausted,
    invalid,
    precondition,
    unauthenticated,
)
from kutnahora.plumbing.status import status_details
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.v1 import hosting_service_pb2_grpc

T = TypeVar("T")

RETRY_SECONDS = 2.0
"""How long a worker given no work waits before asking again."""
BUILD_LOG_CAP = 256 << 10
"""Bytes of a build's log kept (its end)."""
SEAT_LOG_CAP = 64 << 10
"""Bytes of a seat's log kept (its end)."""
REASON_CAP = 500
"""Characters of a worker's reason kept."""
PLATFORM_CAP = 300
"""Characters of a built folder's platform kept."""
SPOOL_BYTES = 8 << 20
"""Bytes of an upload held in memory before it is spooled to a temporary file."""
DIGEST = re.compile(r"^[0-9a-f]{64}$")
ENABLE = (
    "this arena hosts no bots: start it with --worker-token-file FILE "
    "(or KUTNAHORA_ARENA_WORKER_TOKEN_FILE), FILE holding the token its sandbox workers are given"
)


def _duration(seconds: float) -> duration_pb2.Duration:
    duration = duration_pb2.Duration()
    duration.FromNanoseconds(int(seconds * 1e9))
    return duration


def tail(data: bytes, cap: int) -> tuple[str, bool]:
    """The last ``cap`` bytes of a log as text (bytes that are not UTF-8 replaced), and whether its start
    was cut."""
    cut = len(data) > cap
    return data[-cap:].decode("utf-8", errors="replace"), cut


class HostingServicer(hosting_service_pb2_grpc.HostingServiceServicer):
    """Answers ``HostingService`` calls."""

    def __init__(
        self,
        store: ArenaStore,
        pools: Sequence[str],
        *,
        worker_token: str,
        lease_seconds: float,
        games_per_hour: int,
        games_per_lease: int = 5,
        max_failures: int,
        metrics: ArenaMetrics,
        log: Any,
        built_max_bytes: int = 256 << 20,
    ) -> None:
        self.store = store
        self.pools = tuple(sorted(pools))
        self.token_hash = auth.token_hash(worker_token) if worker_token else ""
        self.lease_seconds = lease_seconds
        self.games_per_hour = games_per_hour
        self.games_per_lease = games_per_lease
        self.max_failures = max_failures
        self.built_max_bytes = built_max_bytes
        self.metrics = metrics
        self.log = log
        self._counting: asyncio.Task[None] | None = None
        for kind in ("build", "host"):
            metrics.live_leases.labels(kind=kind).set(0)

    # --- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> None:
        """Keep the live-lease gauges current (leases also end by expiring), when hosting is enabled."""
        if self.token_hash:
            self._counting = asyncio.create_task(self._count_loop())

    async def close(self) -> None:
        """Stop counting leases."""
        if self._counting is not None:
            self._counting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._counting

    async def _count_loop(self) -> None:
        while True:
            try:
                await self._count_leases()
            except Exception:
                self.log.exception("counting leases failed")
            await asyncio.sleep(max(1.0, self.lease_seconds / 3))

    async def _count_leases(self) -> None:
        for kind, count in (await self.store.live_leases()).items():
            self.metrics.live_leases.labels(kind=kind).set(count)

    # --- helpers -----------------------------------------------------------------------------------------

    async def _abort(self, context: Context, error: ServiceError) -> None:
        self.metrics.refusals.labels(reason=error.reason.value).inc()
        await context.abort(error.code, error.message, trailing_metadata=status_details(error))

    async def _guard(self, context: Context, what: str, work: Callable[[], Awaitable[T]]) -> T:
        async def checked() -> T:
            self._check_worker(context)
            return await work()

        return await guarded(context, what, checked, self._abort, self.log)

    def _check_worker(self, context: Context) -> None:
        """FAILED_PRECONDITION when hosting is not enabled, UNAUTHENTICATED without the worker token."""
        if not self.token_hash:
            raise precondition(ENABLE, "hosting_disabled")
        token = auth.token_from_metadata(context.invocation_metadata())
        if not token:
            raise unauthenticated(
                "HostingService calls need the arena's worker token as 'authorization: Bearer'"
            )
        if not auth.matches(token, self.token_hash):
            raise unauthenticated("the worker token is not this arena's (its --worker-token-file)")

    @staticmethod
    def _gone(lease_id: str) -> ServiceError:
        return ServiceError(
            grpc.StatusCode.NOT_FOUND,
            f"lease {clip(lease_id)!r} has expired or ended (or never was): stop its work",
            "not_found",
        )

    # --- the calls ---------------------------------------------------------------------------------------

    async def LeaseWork(self, request: pb.LeaseWorkRequest, context: Context) -> pb.LeaseWorkResponse:
        async def work() -> pb.LeaseWorkResponse:
            lease_id = secrets.token_hex(16)
            seek_key = auth.new_token()
            worker = clip(request.worker or context.peer())
            found = await self.store.lease_work(
                lease_id,
                worker,
                build=request.can_build,
                host=request.can_host,
                seek_key_hash=auth.token_hash(seek_key),
                lease_time=self.lease_seconds,
                per_hour=self.games_per_hour,
                pools=self.pools,
                max_expiries=self.max_failures,
            )
            if found is None:
                return pb.LeaseWorkResponse(retry_after=_duration(RETRY_SECONDS))
            response = pb.LeaseWorkResponse(lease_id=lease_id, lease_time=_duration(self.lease_seconds))
            if isinstance(found, BuildWork):
                response.build.CopyFrom(
                    pb.BuildJob(
                        bot_name=found.bot_name,
                        version=found.version,
                        digest=found.digest,
                        built_max_bytes=self.built_max_bytes,
                    )
                )
                self.log.info("build leased", bot=found.bot_name, version=found.version, worker=worker)
            else:
                job = pb.HostJob(
                    bot_name=found.bot_name,
                    version=found.version,
                    digest=found.digest,
                    seek_key=seek_key,
                    pools=list(found.pools),
                    games_left=min(found.games_left, self.games_per_lease),
                )
                if found.built is not None:
                    job.built.CopyFrom(_artifact(found.built))
                if found.resume is not None:
                    job.resume.CopyFrom(
                        pb.SeatToResume(
                            server_address=found.resume.server,
                            game_id=found.resume.game_id,
                            seat=found.resume.seat,
                            seat_token=found.resume.token,
                        )
                    )
                response.host.CopyFrom(job)
                self.log.info(
                    "bot leased to host",
                    bot=found.bot_name,
                    version=found.version,
                    worker=worker,
                    resume=None if found.resume is None else found.resume.game_id,
                )
            await self._count_leases()
            return response

        return await self._guard(context, "lease request", work)

    async def RenewLease(self, request: pb.RenewLeaseRequest, context: Context) -> pb.RenewLeaseResponse:
        async def work() -> pb.RenewLeaseResponse:
            renewed = await self.store.renew_lease(request.lease_id, self.lease_seconds, self.games_per_hour)
            if renewed is None:
                raise self._gone(request.lease_id)
            _, reason = renewed
            return pb.RenewLeaseResponse(
                lease_time=_duration(self.lease_seconds), wind_down=bool(reason), reason=reason
            )

        return await self._guard(context, "lease renewal", work)

    async def GetArchive(self, request: pb.GetArchiveRequest, context: Context) -> pb.GetArchiveResponse:
        async def work() -> pb.GetArchiveResponse:
            if not DIGEST.match(request.digest):
                raise invalid(f"{clip(request.digest)!r} is not an archive's SHA-256 in lower-case hex")
            archive = await self.store.archive(request.digest)
            if archive is None:
                raise ServiceError(
                    grpc.StatusCode.NOT_FOUND, f"the arena keeps no archive {request.digest}", "not_found"
                )
            return pb.GetArchiveResponse(archive=archive)

        return await self._guard(context, "archive request", work)

    async def ReportBuild(self, request: pb.ReportBuildRequest, context: Context) -> pb.ReportBuildResponse:
        async def work() -> pb.ReportBuildResponse:
            log, _ = tail(request.log, BUILD_LOG_CAP)
            reason = "" if request.ok else clip(request.reason or "the build failed", REASON_CAP)
            built = request.built_digest
            if built and not DIGEST.match(built):
                raise invalid(f"{clip(built)!r} is not a built folder's SHA-256 in lower-case hex")
            try:
                held, taken = await self.store.report_build(request.lease_id, request.ok, reason, log, built)
            except LeaseGone:
                raise self._gone(request.lease_id) from None
            except NotItsBuild:
                raise invalid(
                    f"the arena keeps no built folder {built} of this version's archive: upload it with "
                    "PutBuilt under this lease first"
                ) from None
            if taken:
                self.metrics.builds.labels(outcome="ok" if request.ok else "failed").inc()
                self.log.info(
                    "version built" if request.ok else "version failed to build",
                    bot=held.bot_name,
                    version=held.version,
                    reason=reason or None,
                    built=built[:12] or None,
                )
            await self._count_leases()
            return pb.ReportBuildResponse()

        return await self._guard(context, "build report", work)

    async def ReportSeat(self, request: pb.ReportSeatRequest, context: Context) -> pb.ReportSeatResponse:
        async def work() -> pb.ReportSeatResponse:
            if not request.game_id or request.seat < 0:
                raise invalid("ReportSeat needs the game's id and the bot's seat")
            outcome = request.outcome
            try:
                if outcome == pb.SEAT_OUTCOME_STARTED:
                    if not request.server_address or not request.seat_token:
                        raise invalid(
                            "ReportSeat STARTED needs the game server's address and the seat's token"
                        )
                    seat = ReportedSeat(
                        request.server_address, request.game_id, request.seat, request.seat_token
                    )
                    held = await self.store.report_started(request.lease_id, seat)
                    self.metrics.hosted_seats.labels(outcome="started").inc()
                    self.log.info("hosted seat started", bot=held.bot_name, game_id=request.game_id)
                    return pb.ReportSeatResponse(paused=False)
                if outcome not in (pb.SEAT_OUTCOME_FINISHED, pb.SEAT_OUTCOME_FAILED):
                    raise invalid("ReportSeat needs an outcome: STARTED, FINISHED or FAILED")
                failure = None
                if outcome == pb.SEAT_OUTCOME_FAILED:
                    failure = clip(request.reason or "the bot's code failed", REASON_CAP)
                log, cut = tail(request.log, SEAT_LOG_CAP)
                held, new, paused = await self.store.report_ended(
                    request.lease_id,
                    request.game_id,
                    request.seat,
                    failure,
                    log,
                    cut or request.log_truncated,
                    self.max_failures,
                )
            except LeaseGone:
                raise self._gone(request.lease_id) from None
            except NotItsSeat:
                raise ServiceError(
                    grpc.StatusCode.NOT_FOUND,
                    f"game {clip(request.game_id)!r} has no seat {request.seat} of the lease's bot",
                    "not_found",
                ) from None
            if new:
                self.metrics.hosted_seats.labels(outcome="failed" if failure else "finished").inc()
                self.log.info(
                    "hosted seat ended",
                    bot=held.bot_name,
                    game_id=request.game_id,
                    outcome=failure or "finished",
                    paused=paused,
                )
            return pb.ReportSeatResponse(paused=paused)

        return await self._guard(context, "seat report", work)

    async def ReleaseLease(
        self, request: pb.ReleaseLeaseRequest, context: Context
    ) -> pb.ReleaseLeaseResponse:
        async def work() -> pb.ReleaseLeaseResponse:
            held = await self.store.release_lease(request.lease_id)
            if held is not None:
                self.log.info(
                    "lease released", bot=held.bot_name, kind=held.kind, reason=clip(request.reason) or None
                )
            await self._count_leases()
            return pb.ReleaseLeaseResponse()

        return await self._guard(context, "lease release", work)

    async def PutBuilt(
        self, requests: AsyncIterable[pb.PutBuiltRequest], context: Context
    ) -> pb.PutBuiltResponse:
        async def work() -> pb.PutBuiltResponse:
            stream = aiter(requests)
            first = await anext(stream, None)
            with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as spool:
                refusal: ServiceError | None = None
                try:
                    artifact = await self._announced(first)
                except ServiceError as error:
                    refusal, artifact = error, pb.BuiltArtifact()
                hasher = hashlib.sha256()
                received = read = 0
                # After a refusal the call reads on, so that a worker still sending reads the arena's
                # status rather than a stream cut (gRPC's Python client may report a write that fails as
                # the call ends as INTERNAL, not as its status), but only as far as an honest upload goes:
                # the bytes announced (within --built-max-bytes), in as many messages as full chunks take,
                # and its end; one message past that ends the call.
                most_bytes = min(max(first.artifact.size_bytes if first else 0, 0), self.built_max_bytes)
                most_messages = max(1, -(-most_bytes // CHUNK_BYTES))
                message = first
                while message is not None:
                    read += 1
                    if refusal is None and len(message.chunk) > CHUNK_BYTES:
                        refusal = invalid(f"a PutBuilt chunk holds at most {CHUNK_BYTES} bytes")
                    if refusal is None and read > 1 and not message.chunk:
                        refusal = invalid("a PutBuilt chunk after the first holds at least one byte")
                    received += len(message.chunk)
                    if refusal is None and received > artifact.size_bytes:
                        refusal = invalid(f"more bytes arrived than the {artifact.size_bytes} announced")
                    if refusal is None:
                        hasher.update(message.chunk)
                        spool.write(message.chunk)
                    elif received > most_bytes or read > most_messages:
                        break
                    message = await anext(stream, None)
                if refusal is not None:
                    raise refusal
                assert first is not None
                if received != artifact.size_bytes or hasher.hexdigest() != artifact.digest:
                    raise invalid(
                        f"the bytes received ({received}, SHA-256 {hasher.hexdigest()[:12]}) are not the "
                        f"{artifact.size_bytes} bytes of {artifact.digest[:12]} announced"
                    )
                spool.seek(0)
                try:
                    stored = await self.store.put_built(
                        first.lease_id,
                        artifact.digest,
                        clip(artifact.platform, PLATFORM_CAP),
                        received,
                        _chunks(spool),
                    )
                except LeaseGone:
                    raise self._gone(first.lease_id) from None
            self.log.info("built folder kept", digest=artifact.digest[:12], bytes=received, new=stored)
            return pb.PutBuiltResponse(existed=not stored)

        return await self._guard(context, "built folder upload", work)

    async def _announced(self, first: pb.PutBuiltRequest | None) -> pb.BuiltArtifact:
        """The built folder PutBuilt's first message announces, checked: a live build lease, a digest, a
        size within ``--built-max-bytes``."""
        if first is None or not first.lease_id or not first.HasField("artifact"):
            raise invalid("PutBuilt's first message needs the build lease and the built folder's artifact")
        artifact = first.artifact
        if not DIGEST.match(artifact.digest):
            raise invalid(f"{clip(artifact.digest)!r} is not a built folder's SHA-256 in lower-case hex")
        if artifact.size_bytes <= 0:
            raise invalid("a built folder's size must be more than 0 bytes")
        self._check_size(artifact.size_bytes)
        try:
            await self.store.build_source(first.lease_id)
        except LeaseGone:
            raise self._gone(first.lease_id) from None
        return artifact

    def _check_size(self, size: int) -> None:
        if size > self.built_max_bytes:
            raise exhausted(
                f"the built folder is {size / (1 << 20):.1f} MiB; this arena keeps built folders of at most "
                f"{self.built_max_bytes / (1 << 20):.1f} MiB (its --built-max-bytes), so every worker builds "
                "this version itself",
                "built_too_large",
                metadata={"limit": "built_max_bytes", "bytes": str(self.built_max_bytes)},
            )

    async def GetBuilt(
        self, request: pb.GetBuiltRequest, context: Context
    ) -> AsyncIterator[pb.GetBuiltResponse]:
        async def find() -> Built:
            if not DIGEST.match(request.digest):
                raise invalid(f"{clip(request.digest)!r} is not a built folder's SHA-256 in lower-case hex")
            found = await self.store.built(request.digest)
            if found is None:
                raise ServiceError(
                    grpc.StatusCode.NOT_FOUND,
                    f"the arena keeps no built folder {request.digest}",
                    "not_found",
                )
            return found

        found = await self._guard(context, "built folder request", find)
        for seq in range(max(found.chunks, 1)):

            async def read(seq: int = seq) -> bytes:
                data = await self.store.built_chunk(found.digest, seq)
                if data is None:
                    raise ServiceError(
                        grpc.StatusCode.NOT_FOUND,
                        f"the arena no longer keeps built folder {found.digest}",
                        "not_found",
                    )
                return data

            data = await self._guard(context, "built folder request", read) if found.chunks else b""
            response = pb.GetBuiltResponse(chunk=data)
            if seq == 0:
                response.artifact.CopyFrom(_artifact(found))
            yield response


def _artifact(built: Built) -> pb.BuiltArtifact:
    return pb.BuiltArtifact(digest=built.digest, size_bytes=built.size_bytes, platform=built.platform)


def _chunks(spool: Any) -> Iterator[bytes]:
    """The spooled upload again, in chunks of at most :data:`CHUNK_BYTES`."""
    while data := spool.read(CHUNK_BYTES):
        yield data
