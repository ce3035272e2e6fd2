"""A host job: play a hosted bot's arena games with its built code, one game at a time, while the lease
lives.

First a seat handed over from a lost worker (``resume``), if any; then, until the job's ``games_left``
games are played, the bot seeks a game in each of its pools at once with the lease's ``seek_key`` (the
SDK's arena client, as ``kutnahora-bot --arena`` seeks) and the first match is played (the other seeks
are withdrawn). Each seat is reported STARTED (with its token, so that the arena can hand it over if this
worker is lost), then FINISHED or FAILED with its log's tail. The job ends when its games are played,
when the arena asks it to wind down (RenewLease) or says the bot is paused (ReportSeat), when its lease is
lost (the bot is stopped at once, nothing more is reported) or when the worker stops (the seeks are
withdrawn and the bots stopped: their games go on with the game server's clock); then the lease is
released, unless it was lost.

A pool where the bot already seeks elsewhere (its author runs it by hand: ALREADY_EXISTS) is tried again
with a growing pause; a refusal by the arena's per-caller limits is waited out; a pool the arena refuses
otherwise is left (the job ends when no pool is left).
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
from typing import Any

import grpc

from kutnahora.clients.arena_client import ArenaSeat
from kutnahora.clients.bots.arena import waited_out
from kutnahora.clients.sdk import ClientError, ConnectError
from kutnahora.hosting.gateway_limits import BotBudget
from kutnahora.hosting.seat import SeatHost
from kutnahora.hosting.submission import Submission
from kutnahora.v1 import hosting_service_pb2 as pb
from kutnahora.worker import seats
from kutnahora.worker.build_job import release
from kutnahora.worker.context import BACKOFF, Context, Stopped, retrying, until
from kutnahora.worker.leases import LeaseKeeper
from kutnahora.worker.seats import Seat

HELD_ELSEWHERE = (1.0, 30.0)  # the first and the longest pause in a pool another process seeks in


class HostJob:
    """One host lease's work (see the module's docstring)."""

    def __init__(self, context: Context, lease_id: str, lease_time: float, job: pb.HostJob) -> None:
        self.context = context
        self.lease_id = lease_id
        self.job = job
        self.games_left = job.games_left
        self.log = context.log.bind(lease=lease_id[:8], bot=job.bot_name, version=job.version, job="host")
        self.keeper = LeaseKeeper(context.hosting, lease_id, lease_time, self.log)
        self.paused = False
        self.budget = BotBudget(job.bot_name, context.gateway)
        self.host = SeatHost(
            sandbox=context.sandbox,
            upstream="",
            sockets=context.gateways,
            logs=context.seat_logs / lease_id,
            protos=context.builder.protos,
        )

    async def run(self) -> None:
        """Do the job until it ends; the lease is released (unless lost) however it ends."""
        self.keeper.start()
        self.context.metrics.leases.labels("host").inc()
        why = "its games are played"
        used = ""
        try:
            artifact = self.job.built if self.job.HasField("built") else None
            built = await until(self.context.builder.build(self.job.digest, artifact), *self._stops())
            if built.submission is None:
                why = f"version {self.job.version} does not build on this worker: {built.reason}"
                self.log.warning("cannot host: the version does not build here", reason=built.reason)
                return
            used = self.job.digest
            self.context.builder.use(used)
            why = await self._play(built.submission)
        except Stopped:
            why = "the worker is stopping" if self.context.stopping.is_set() else ""
        except ClientError as error:
            why = f"the worker gave up: {error}"
            self.log.warning("the job ends on a refusal", error=str(error))
        except Exception as error:  # the worker's own fault: the lease goes back, for another worker
            why = f"the worker failed: {type(error).__name__}: {error}"
            self.log.exception("the job failed")
        finally:
            if used:
                self.context.builder.done_with(used)
            shutil.rmtree(self.host.logs or self.context.seat_logs / self.lease_id, ignore_errors=True)
            await self.keeper.stop()
            self.context.metrics.leases.labels("host").dec()
            if not self.keeper.lost.is_set():
                self.log.info("releasing the lease", reason=why)
                await release(self.context, self.lease_id, why)

    def _stops(self) -> tuple[asyncio.Event, asyncio.Event]:
        return self.keeper.lost, self.context.stopping

    async def _play(self, submission: Submission) -> str:
        """Play the resumed seat, then seek and play; why the job ends."""
        resume = self.job.resume if self.job.HasField("resume") else None
        if resume is not None and resume.game_id:
            self.log.info("resuming a seat", game=resume.game_id, seat=resume.seat)
            seat = Seat(resume.server_address, resume.game_id, resume.seat, resume.seat_token)
            await self._seat(submission, seat, resumed=True)
        while True:
            if self.paused:
                return "the bot is paused"
            if self.keeper.winding.is_set():
                return f"winding down: {self.keeper.wind_down_reason}"
            if self.games_left <= 0:
                return "the games of its lease are played"
            matched = await self._seek()
            self.games_left -= len(matched)
            played = await asyncio.gather(
                *(self._seat(submission, self._seat_of(m), resumed=False) for m in matched),
                return_exceptions=True,  # each seat to its end before the job goes on or ends
            )
            for outcome in played:
                if isinstance(outcome, BaseException):
                    raise outcome

    @staticmethod
    def _seat_of(matched: ArenaSeat) -> Seat:
        return Seat(matched.server_address, matched.seat.game_id, matched.seat.seat, matched.seat.token)

    async def _seek(self) -> list[ArenaSeat]:
        """Seek in every pool at once until a match (rarely two at the same moment: both are played);
        none when the arena asks the job to wind down first, :class:`Stopped` when it must stop now."""
        pools = list(self.job.pools)
        if not pools:
            listed = await retrying(
                self.context.arena.pools, "listing the pools", self.context, *self._stops()
            )
            pools = [pool.name for pool in listed]
        seeks = {asyncio.create_task(self._seek_pool(pool)): pool for pool in pools}
        winding = asyncio.ensure_future(self.keeper.winding.wait())
        try:
            pending: set[asyncio.Future[Any]] = set(seeks)
            while True:
                _, pending = await until(
                    asyncio.wait({*pending, winding}, return_when=asyncio.FIRST_COMPLETED), *self._stops()
                )
                found = [task.result() for task in seeks if task.done() and not task.cancelled()]
                matched = [m for m in found if m is not None]
                if matched:
                    return matched
                if winding.done():
                    return []  # the job winds down: the caller says why
                if not (pending - {winding}):
                    raise ClientError("no pool is left to seek in")
        finally:
            winding.cancel()
            for task in seeks:
                task.cancel()
            await asyncio.gather(*seeks, winding, return_exceptions=True)

    async def _seek_pool(self, pool: str) -> ArenaSeat | None:
        """A match in ``pool``; None when the arena refuses the pool for good (said in the log)."""
        delay = BACKOFF[0]
        held = 0.0
        while True:
            try:
                return await self.context.arena.seek(self.job.seek_key, pool)
            except ConnectError as error:
                self.context.metrics.arena_errors.inc()
                self.log.warning("cannot seek; trying again", pool=pool, retry_in=delay, error=str(error))
                await asyncio.sleep(delay)
                delay = min(delay * 2, BACKOFF[1])
            except ClientError as error:
                if error.code == grpc.StatusCode.ALREADY_EXISTS:
                    held = min(max(held * 2, HELD_ELSEWHERE[0]), HELD_ELSEWHERE[1])
                    self.log.info(
                        "the bot seeks in this pool elsewhere; trying again", pool=pool, retry_in=held
                    )
                    await asyncio.sleep(held)
                    continue
                if await waited_out(error):
                    continue
                if error.code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED, None):
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, BACKOFF[1])
                    continue
                self.log.warning("the arena refuses seeking in this pool", pool=pool, error=str(error))
                return None

    async def _seat(self, submission: Submission, seat: Seat, *, resumed: bool) -> None:
        """Report the seat started, play it, report how it ended."""
        log = self.log.bind(game=seat.game_id, seat=seat.seat)
        request = pb.ReportSeatRequest(
            lease_id=self.lease_id,
            server_address=seat.server_address,
            game_id=seat.game_id,
            seat=seat.seat,
            seat_token=seat.token,
            outcome=pb.SEAT_OUTCOME_STARTED,
        )
        await self._report(request)
        log.info("playing a seat", server=seat.server_address, resumed=resumed)
        host = SeatHost(
            sandbox=self.host.sandbox,
            upstream=seat.server_address,
            sockets=self.host.sockets,
            logs=self.host.logs,
            protos=self.host.protos,
        )
        try:
            result = await until(
                seats.play(host, submission, seat, self.budget, resumed=resumed), *self._stops()
            )
        except Stopped:
            self.context.metrics.seats.labels("stopped").inc()
            log.info("seat stopped; the game server's clock plays it on")
            with contextlib.suppress(OSError):
                path = host.log_path(seat.game_id, seat.seat)
                if path is not None:
                    path.unlink(missing_ok=True)
            raise
        if result.lost:
            self.context.metrics.seats.labels("lost").inc()
            log.warning(
                "the seat's game server was lost; the seat is left to the arena, not counted a failure",
                reason=result.reason,
            )
            return
        outcome = "failed" if result.failed else "finished"
        self.context.metrics.seats.labels(outcome).inc()
        log.info("seat ended", outcome=outcome, reason=result.reason or None, log_bytes=len(result.log))
        ended = pb.ReportSeatRequest(
            lease_id=self.lease_id,
            server_address=seat.server_address,
            game_id=seat.game_id,
            seat=seat.seat,
            outcome=pb.SEAT_OUTCOME_FAILED if result.failed else pb.SEAT_OUTCOME_FINISHED,
            reason=result.reason,
            log=result.log,
            log_truncated=result.truncated,
        )
        response = await self._report(ended)
        if response.paused:
            self.log.info("the arena paused the bot")
            self.paused = True

    async def _report(self, request: pb.ReportSeatRequest) -> pb.ReportSeatResponse:
        """Report a seat, tried again while the arena cannot be reached; a refusal (the lease is gone)
        stops the job."""
        try:
            return await retrying(
                lambda: self.context.hosting.report_seat(request),
                "reporting a seat",
                self.context,
                *self._stops(),
            )
        except ClientError as error:
            if error.code == grpc.StatusCode.NOT_FOUND:
                self.keeper.lost_reason = "the arena no longer knows the lease"
                self.keeper.lost.set()
                raise Stopped() from None
            raise
